#!/usr/bin/env bash
# Runs klf's fuzz targets one after the other, each for SECONDS seconds.
#
#   fuzz/run.sh SECONDS [TARGET...]      (default: every target)
#
# Uses cargo-fuzz (installed from crates.io when missing) with a nightly
# toolchain when one is installed, else the stable one with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags). Seed corpora are built from
# testdata/kafka by seeds.py into fuzz/corpus/<target> when missing. A crash,
# a timeout (-timeout, default 10 s) or going over -rss_limit_mb (2048) fails
# the run; the input is left in fuzz/artifacts/<target>/. The number of
# executions of each target is printed at the end.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(segment_v2 legacy codec indexes snapshot checkpoints records tree archive windows digest kafka_log)
fi

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  cargo=(cargo +nightly)
else
  cargo=(cargo)
  export RUSTC_BOOTSTRAP=1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

for t in "${targets[@]}"; do
  if [ ! -d "corpus/$t" ] || [ -z "$(ls -A "corpus/$t" 2>/dev/null)" ]; then
    python3 seeds.py corpus
    break
  fi
done

"${cargo[@]}" fuzz build -O
summary=()
for t in "${targets[@]}"; do
  echo "== fuzz $t for ${secs}s" >&2
  mkdir -p "corpus/$t"
  log=$(mktemp)
  set +e
  "${cargo[@]}" fuzz run -O "$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb="${RSS_LIMIT_MB:-2048}" -timeout="${TIMEOUT:-10}" \
    -max_len="${MAX_LEN:-131072}" -print_final_stats=1 2>&1 | tee "$log" | grep -E '^(#[0-9]+ +(INITED|DONE|pulse)|Done|==[0-9]+==|SUMMARY|stat::)' >&2
  rc=${PIPESTATUS[0]}
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  summary+=("$t: ${runs:-?} executions in ${secs}s, exit $rc")
  if [ "$rc" -ne 0 ]; then
    tail -50 "$log" >&2
    rm -f "$log"
    printf '%s\n' "${summary[@]}"
    echo "fuzz target $t failed (exit $rc); input in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  rm -f "$log"
done
printf '%s\n' "${summary[@]}"
