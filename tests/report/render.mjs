// Opens klf report pages in headless Chromium (the system's, never a
// downloaded one), fails on any console error, page error, failed request or
// request leaving the file, and saves a full-page PNG screenshot of each.
//
// usage: node render.mjs OUT_DIR PAGE.html...
// CHROMIUM=/path/to/chromium overrides /usr/bin/chromium.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [outDir, ...pages] = process.argv.slice(2);
if (!outDir || pages.length === 0) {
  console.error('usage: node render.mjs OUT_DIR PAGE.html...');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'klf-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
  viewport: { width: 1200, height: 900 },
});
let failures = 0;
try {
  for (const page of pages) {
    const url = pathToFileURL(resolve(page)).href;
    const problems = [];
    const tab = await context.newPage();
    tab.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    tab.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    tab.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    // The page must be self-contained: anything but the page itself is refused.
    await tab.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url || u.startsWith('data:')) return route.continue();
      problems.push(`external request: ${u}`);
      return route.abort();
    });
    await tab.goto(url, { waitUntil: 'load' });
    const facts = await tab.evaluate(() => ({
      svgs: document.querySelectorAll('svg.timeline').length,
      lanes: document.querySelectorAll('[data-panel="overview"] [data-kind="epoch"]').length,
      lost: document.querySelectorAll('[data-kind="lost"]').length,
      scripts: document.querySelectorAll('script').length,
      width: document.documentElement.scrollWidth,
    }));
    if (facts.svgs === 0 || facts.lanes === 0) problems.push(`no timeline drawn: ${JSON.stringify(facts)}`);
    const shot = join(outDir, basename(page).replace(/\.html?$/, '') + '.png');
    await tab.screenshot({ path: shot, fullPage: true });
    // Each timeline on its own too, at full resolution.
    const svgs = await tab.locator('svg.timeline').all();
    for (const [i, svg] of svgs.slice(0, 20).entries()) {
      await svg.screenshot({ path: shot.replace(/\.png$/, `.timeline-${i}.png`) });
    }
    await tab.close();
    if (problems.length) {
      failures++;
      console.error(`FAIL ${page}`);
      for (const p of problems) console.error(`  ${p}`);
    } else {
      console.log(`ok ${page}: ${facts.svgs} timeline(s), ${facts.lanes} epoch marks, ${facts.lost} loss marks, ${facts.scripts} scripts; screenshot ${shot}`);
    }
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
