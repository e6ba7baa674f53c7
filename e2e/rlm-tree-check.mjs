#!/usr/bin/env node
// Checks, in headless Chromium (Debian's /usr/bin/chromium), that the trace viewer draws an RLM run as a
// tree: one collapsible node per RLM, children nested under the iteration that started them, the
// iterations' response, code and output, the sub-calls, and a JSONL download of the run. Run by
// RlmTrajectoryIT against a server without an API key. stdout: one JSON line, {"event":"done",...} or
// {"event":"failed","message":...}.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};
// With --real the entry is an agent's step whose code called rlm_query_batched on a live server: two
// children at depth 1, each with a plain call at the depth limit; then --exec-entry is not needed.
const real = process.argv.includes('--real');
const [base, sessionId, entry, shots, profile] = ['base', 'session', 'entry', 'shots', 'profile'].map(arg);
const execEntry = real ? null : arg('exec-entry');
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
function check(condition, message) {
  if (!condition) throw new Error(message);
}

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, acceptDownloads: true,
  viewport: { width: 1440, height: 1000 },
});
const done = {};
try {
  const page = context.pages()[0] ?? await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));

  await page.goto(`${base}/ui/#/s/${sessionId}`);
  const tree = page.locator(`li.step[data-index="${entry}"] .rlm-tree`);
  await tree.waitFor();
  if (real) {
    done.nodes = await tree.locator('.rlm-node').count();
    check(await tree.locator('.rlm-node.depth-1').count() === 2, 'two children at depth 1');
    for (const summary of await tree.locator('.rlm-iter-detail > summary').all()) await summary.click();
    for (const summary of await tree.locator('li.rlm-call > details > summary').all()) await summary.click();
    const leaves = await tree.locator('li.rlm-call').allInnerTexts();
    done.leaf_calls = leaves.filter((t) => t.includes('leaf answer')).length;
    check((await tree.locator('.rlm-head').innerText()).includes('2 children'), 'the run\'s figures');
    await page.locator(`li.step[data-index="${entry}"]`).screenshot({ path: path.join(shots, 'rlm-real.png') });
    const [download] = await Promise.all([page.waitForEvent('download'), tree.locator('.rlm-download').click()]);
    const lines = fs.readFileSync(await download.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    check(lines[0].type === 'metadata' && lines[1].code_blocks[0].result.rlm_calls.length === 2, 'the download');
    done.jsonl_lines = lines.length;
    check(errors.length === 0, `console errors: ${JSON.stringify(errors)}`);
    emit({ event: 'done', ...done });
    await context.close();
    process.exit(0);
  }
  const nodes = tree.locator('.rlm-node');
  done.nodes = await nodes.count();
  done.depths = [];
  for (const d of [0, 1, 2]) done.depths.push(await tree.locator(`.rlm-node[data-depth="${d}"]`).count());
  // Nesting: each child sits inside its parent's node, under the iteration that started it.
  done.nested_depth_2 = await tree.locator('.rlm-node.depth-0 .rlm-iteration .rlm-node.depth-1 .rlm-iteration .rlm-node.depth-2').count();
  check(done.nested_depth_2 === 1, `the depth-2 RLM is nested under depth 1 under depth 0: ${done.nested_depth_2}`);
  const root = tree.locator('.rlm-node.depth-0').first();
  check((await root.locator(':scope > .rlm-iterations > .rlm-iteration').count()) === 2, 'the root shows its 2 iterations');
  const rootChips = await root.locator(':scope > .chips').innerText();
  check(rootChips.includes('2 iterations') && rootChips.includes('ready') && rootChips.includes('2500 in / 390 out tokens')
    && rootChips.includes('$0.0033'), `the root's figures: ${rootChips}`);
  const head = await tree.locator('.rlm-head').innerText();
  check(head.includes('depth 2') && head.includes('3 children'), `the run's figures: ${head}`);
  const leaf = tree.locator('.rlm-node.depth-2');
  check((await leaf.locator('summary').first().innerText()).includes('Is 200 the largest'), 'the depth-2 prompt');

  // Collapsible: closing the root hides the whole subtree, opening it shows it again.
  await root.locator(':scope > summary').click();
  check(!(await leaf.isVisible()), 'closing the root hides its children');
  await root.locator(':scope > summary').click();
  await leaf.waitFor({ state: 'visible' });

  // An iteration opens on its response, code (highlighted), output and sub-calls.
  const firstIteration = root.locator(':scope > .rlm-iterations > .rlm-iteration').first();
  await firstIteration.locator(':scope > details > summary').click();
  const opened = firstIteration.locator(':scope > details');
  check((await opened.locator('pre.rlm-response').innerText()).includes('Split the context'), 'the response is shown');
  check(await opened.locator('pre.code .tok-builtin, pre.code .tok-string').count() > 0, 'the code is highlighted');
  check((await opened.locator('pre.output').allInnerTexts()).some((t) => t.includes("['east (200)', 'west (45)']")), 'the output');
  check(await opened.locator('li.rlm-call').count() === 4, 'the 4 sub-calls of the first block');
  check((await opened.locator('li.rlm-call').allInnerTexts()).some((t) => t.includes('cached')), 'a cached call is marked');
  // The failed block of the second child shows its error.
  const failing = tree.locator('.rlm-node.depth-1').nth(1).locator('.rlm-iteration').first();
  await failing.locator(':scope > details > summary').click();
  check((await failing.innerText()).includes('ValueError: invalid literal'), 'the error of a failed block');
  // The grandchild's iteration with its llm_query.
  const leafIteration = leaf.locator('.rlm-iteration').first();
  await leafIteration.locator(':scope > details > summary').click();
  await leafIteration.locator('li.rlm-call > details > summary').click();
  check((await leafIteration.innerText()).includes('largest of 120, 80, 200?'), "the depth-2 RLM's llm_query");

  // An exec step that started a child RLM draws that child.
  const execTree = page.locator(`li.step[data-index="${execEntry}"] .rlm-tree`);
  check(await execTree.locator('.rlm-node').count() === 1, 'the exec step shows its one child');

  await tree.scrollIntoViewIfNeeded();
  await page.locator(`li.step[data-index="${entry}"]`).screenshot({ path: path.join(shots, 'rlm-tree.png') });
  await page.screenshot({ path: path.join(shots, 'rlm-session.png'), fullPage: true });

  // The run as JSONL in alexzhang13/rlm's logger format.
  const [download] = await Promise.all([page.waitForEvent('download'), tree.locator('.rlm-download').click()]);
  const lines = fs.readFileSync(await download.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  check(lines[0].type === 'metadata' && lines[0].root_model === 'root-model', `metadata line: ${JSON.stringify(lines[0])}`);
  check(lines.slice(1).every((l, i) => l.type === 'iteration' && l.iteration === i + 1), 'iteration lines');
  check(download.suggestedFilename() === `${sessionId}.${entry}.rlm.jsonl`, `file name ${download.suggestedFilename()}`);
  done.jsonl_lines = lines.length;

  check(errors.length === 0, `console errors: ${JSON.stringify(errors)}`);
  emit({ event: 'done', ...done });
} catch (e) {
  emit({ event: 'failed', message: String(e?.stack ?? e), ...done });
  process.exitCode = 1;
} finally {
  await context.close();
}
process.exit(process.exitCode ?? 0);
