#!/usr/bin/env node
// Drives the trace viewer in headless Chromium (Debian's /usr/bin/chromium, never a downloaded one)
// and checks what a person sees. Run by UiBrowserIT, which starts the server and plays the agent.
// stdout: one JSON line per event; {"event":"need-step"} asks the test to run a step over MCP and
// write "go" on stdin; the last line is {"event":"done",...} or {"event":"failed","message":...}.
// With --open (a server without RLM_API_KEY) it only checks that the page opens without a login
// and offers no "Log out"; then only --base, --shots and --profile are needed.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};
const open = process.argv.includes('--open');
const base = arg('base'), shots = arg('shots'), profile = arg('profile');
const [key, sessionId, finalizedId, marker, finalAnswer] = open ? []
  : ['key', 'session', 'finalized', 'marker', 'final-answer'].map(arg);
const entries = open ? 0 : Number(arg('entries'));
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

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
  const dialogs = [], cspErrors = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('console', (m) => { if (m.type() === 'error') cspErrors.push(m.text()); });
  page.on('pageerror', (e) => cspErrors.push(String(e)));

  if (open) {
    // No key: the sessions at once, and no "Log out" (there is nothing to log out of).
    await page.goto(`${base}/ui/`);
    check(page.url() === `${base}/ui/`, `expected the page itself, got ${page.url()}`);
    await page.locator('#list-view').waitFor();
    done.logout_visible = await page.getByText('Log out').isVisible();
    check(!done.logout_visible, '"Log out" is shown on a server without a key');
    await page.screenshot({ path: path.join(shots, 'open.png') });
    check(cspErrors.length === 0, `console errors: ${JSON.stringify(cspErrors)}`);
  } else {
    // Without the key the page is the login form; a wrong key is refused, the right one lets in.
    await page.goto(`${base}/ui/`);
    check(page.url().endsWith('/ui/login'), `expected the login form, got ${page.url()}`);
    await page.fill('#key', 'not-the-key');
    await page.click('button[type=submit]');
    await page.waitForSelector('p.error:not([hidden])');
    await page.screenshot({ path: path.join(shots, 'login.png') });
    cspErrors.length = 0; // the refused login above is logged as a 401; nothing else may be
    await page.fill('#key', key);
    await Promise.all([page.waitForURL(`${base}/ui/`), page.click('button[type=submit]')]);
    const cookie = (await context.cookies(`${base}/ui/`)).find((c) => c.name === 'rlm_ui');
    check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict' && cookie.path === '/ui', `cookie flags: ${JSON.stringify(cookie)}`);
    check(!cookie.value.includes(key), 'the cookie must not hold the key');
    check(await page.evaluate(() => document.cookie) === '', 'the cookie must be invisible to scripts');
    check(await page.getByRole('button', { name: 'Log out' }).isVisible(), '"Log out" is shown once logged in');

    // The list holds the sessions of both MCP connections, with their states.
    const row = (id) => page.locator(`tr.session-row[data-id="${id}"]`);
    await row(sessionId).waitFor();
    await row(finalizedId).waitFor();
    check((await row(finalizedId).innerText()).includes('finalized'), 'finalized state shown');
    check((await row(sessionId).innerText()).includes('active'), 'active state shown');
    await page.selectOption('#state-filter', 'finalized');
    await page.waitForFunction((id) => !document.querySelector(`tr.session-row[data-id="${id}"]`), sessionId);
    check(await row(finalizedId).count() === 1, 'the state filter keeps finalized sessions');
    await page.selectOption('#state-filter', '');
    await page.fill('#filter', sessionId.slice(0, 10));
    await row(sessionId).waitFor();
    await page.fill('#filter', '');
    done.sessions_listed = await page.locator('tr.session-row').count();
    await page.screenshot({ path: path.join(shots, 'sessions.png'), fullPage: true });

    // One session: its timeline, highlighted code, the agent's markup shown as text.
    await row(sessionId).click();
    await page.waitForFunction((n) => document.querySelectorAll('#steps li.step').length === n, entries);
    for (const kind of ['keyword', 'builtin', 'string', 'comment', 'number', 'def']) {
      check(await page.locator(`#steps .tok-${kind}`).count() > 0, `code is highlighted: ${kind}`);
    }
    const meta = await page.locator('#s-meta').innerText();
    check(meta.includes(sessionId) && !meta.includes('[object'), `session details: ${meta}`);
    const outputs = await page.locator('#steps pre.output').allTextContents();
    check(outputs.some((t) => t.includes('<script>alert(1)</script>')), `script tag shown as text: ${JSON.stringify(outputs)}`);
    check(outputs.some((t) => t.includes('<img src=x onerror=')), 'img tag shown as text');
    check(await page.locator('#steps script, #steps img, #vars img, #vars script').count() === 0, 'no element from agent output');
    check(await page.evaluate(() => window.__pwned === undefined), 'no injected handler ran');
    check(await page.locator('#steps .status-error').count() >= 1, 'the failing step is marked');
    check(await page.locator('#steps details.long-output').count() >= 1, 'long output is collapsed');
    await page.locator('#vars tr.var-row', { hasText: 'sales' }).first().waitFor();
    check(await page.locator('#chart-memory circle').count() === entries, 'one memory point per entry');
    check(await page.locator('#chart-duration rect').count() === entries, 'one duration bar per entry');

    // A step made by the agent now appears without a reload.
    await page.evaluate(() => { window.__sameDocument = 'yes'; });
    emit({ event: 'need-step' });
    const go = await lines.next();
    check(!go.done && go.value.trim() === 'go', 'the test did not answer need-step');
    await page.locator('#steps li.step', { hasText: marker }).waitFor({ timeout: 15000 });
    check(await page.evaluate(() => window.__sameDocument) === 'yes', 'the page was not reloaded');
    done.live_step = true;
    await page.screenshot({ path: path.join(shots, 'session.png'), fullPage: true });

    // The trace as JSON Lines.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const text = fs.readFileSync(await download.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    check(text[0].type === 'session' && text[0].session_id === sessionId, 'JSONL starts with the session');
    check(text.filter((l) => l.type === 'step').length === entries + 1, `JSONL has every entry: ${text.length}`);
    done.jsonl_lines = text.length;

    // The finalized session shows its answer. Fields other parts of the server add to the trace
    // (sub-LLM calls per step, spilled variables) are rendered when present, and escaped too:
    // they are injected into the server's real answers here.
    await page.route(`${base}/ui/api/sessions/${finalizedId}?*`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      if (body.steps?.length) {
        body.steps[0].llm_calls = [{ prompt: '<script>alert(3)</script> summarise', answer: '<b>not bold</b>',
          tokens: 12, latency_ms: 340, model: 'sub-model' }];
      }
      await route.fulfill({ response, json: body });
    });
    await page.route(`${base}/ui/api/sessions/${finalizedId}/variables`, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.variables.push({ name: 'old_chunk', type: 'str', size_bytes: 1048576, status: 'spilled', preview: '<i>x</i>' });
      await route.fulfill({ response, json: body });
    });
    await page.goto(`${base}/ui/#/s/${finalizedId}`);
    await page.waitForFunction((a) => document.querySelector('#s-final-text')?.textContent === a, finalAnswer);
    await page.locator('.llm-calls summary').first().click();
    const call = await page.locator('.llm-calls').innerText();
    check(call.includes('<script>alert(3)</script> summarise') && call.includes('<b>not bold</b>')
      && call.includes('340 ms') && call.includes('model: sub-model'), `llm_query call shown: ${call}`);
    await page.locator('#vars .var-spilled').waitFor();
    check(await page.locator('.llm-calls b, .llm-calls script, #vars i').count() === 0, 'injected fields stay text');
    await page.screenshot({ path: path.join(shots, 'finalized.png'), fullPage: true });

    check(dialogs.length === 0, `dialogs fired: ${JSON.stringify(dialogs)}`);
    check(cspErrors.length === 0, `console errors: ${JSON.stringify(cspErrors)}`);

    // Log out: back to the form, and the page needs the key again.
    await Promise.all([page.waitForURL(`${base}/ui/login`), page.getByRole('button', { name: 'Log out' }).click()]);
    await page.goto(`${base}/ui/`);
    check(page.url().endsWith('/ui/login'), `after logging out the page needs the key again, got ${page.url()}`);
    done.logged_out = true;
  }
  emit({ event: 'done', ...done });
} catch (e) {
  emit({ event: 'failed', message: String(e?.stack ?? e) });
  process.exitCode = 1;
} finally {
  await context.close();
}
process.exit(process.exitCode ?? 0);
