#!/usr/bin/env bash
# Writes the klf report pages of the divergence, double-divergence and
# unclean captures, opens each in the system's headless Chromium (through
# playwright-core, which never downloads a browser), fails on any console
# error, page error or request leaving the page, and saves PNG screenshots:
# <capture>.png (the whole page) and <capture>.timeline-<n>.png (each SVG).
#
# usage: tests/report/render.sh [OUT_DIR]   (default: target/report-screenshots)
# Needs: chromium at /usr/bin/chromium (or $CHROMIUM), node >= 20, npm.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/report-screenshots}
mkdir -p "$out"
cargo build --quiet
klf="${CARGO_TARGET_DIR:-target}/debug/klf"
for s in divergence double-divergence unclean; do
  rc=0
  "$klf" report "testdata/kafka/$s" --html "$out/$s.html" || rc=$?
  # 1 = the capture shows loss (expected here); 2 = the command failed.
  if [ "$rc" -gt 1 ]; then
    echo "klf report testdata/kafka/$s failed with exit code $rc" >&2
    exit 1
  fi
done
if [ ! -d tests/report/node_modules/playwright-core ]; then
  (cd tests/report && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi
node tests/report/render.mjs "$out" "$out/divergence.html" "$out/double-divergence.html" "$out/unclean.html"
echo "report pages and screenshots in $out"
