#!/usr/bin/env node
// Scriptable MCP test client on the official SDK. One JSON command per stdin line,
// one JSON result (or event) per stdout line; diagnostics on stderr.
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { CallToolResultSchema, CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const DEFAULT_TIMEOUT_MS = 120000;
const log = (...m) => console.error('[mcp-driver]', ...m);
const emit = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const messageOf = (e) => (e?.message ?? String(e)) + (e?.cause?.message ? ` (cause: ${e.cause.message})` : '');

function fatal(e) {
  try { emit({ event: 'fatal', message: messageOf(e), stack: e?.stack ?? null }); } catch { /* stdout gone */ }
  process.exit(3);
}
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);
process.stdout.on('error', (e) => { log(`stdout: ${e.message}`); process.exit(e.code === 'EPIPE' ? 0 : 3); });

function parseArgs(argv) {
  const o = { headers: {} };
  const dd = argv.indexOf('--');
  if (dd >= 0) { o.command = argv.slice(dd + 1); argv = argv.slice(0, dd); }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    switch (a) {
      case '--stdio': o.stdio = true; break;
      case '--http': o.http = val(); break;
      case '--sse': o.sse = val(); break;
      case '--sampling-reply': o.samplingReply = val(); break;
      case '--sampling-delay-ms': o.samplingDelayMs = Number(val()); break;
      case '--sampling-url': o.samplingUrl = val(); break;
      case '--sampling-model': o.samplingModel = val(); break;
      case '--header': {
        const h = val(), k = h.indexOf(':');
        if (k <= 0) throw new Error(`bad --header "${h}" (want "Name: value")`);
        o.headers[h.slice(0, k).trim()] = h.slice(k + 1).trim();
        break;
      }
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  if (o.stdio && !o.command?.length) throw new Error('--stdio needs -- <command> [args...]');
  if ([o.stdio, o.http, o.sse].filter(Boolean).length !== 1) {
    throw new Error('usage: mcp-driver.mjs (--stdio -- <cmd> [args...] | --http <url> | --sse <url>) [--header "N: v"]... '
      + '[(--sampling-reply TEXT | --sampling-url URL [--sampling-model M]) [--sampling-delay-ms N]]');
  }
  if (o.samplingReply !== undefined && o.samplingUrl !== undefined) {
    throw new Error('--sampling-reply and --sampling-url both answer sampling requests: give one of them');
  }
  if (o.samplingModel !== undefined && o.samplingUrl === undefined) {
    throw new Error('--sampling-model names the model asked at --sampling-url: give --sampling-url too');
  }
  return o;
}

function lastUserText(params) {
  const msgs = params?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role !== 'user') continue;
    const t = textOf(msgs[i].content);
    if (t) return t;
  }
  return '';
}

function errorOf(e) {
  const err = { code: typeof e?.code === 'number' ? e.code : null, message: messageOf(e) };
  if (e?.data !== undefined) err.data = e.data;
  return err;
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

const opt = (() => { try { return parseArgs(process.argv.slice(2)); } catch (e) { log(e.message); process.exit(2); } })();

function textOf(content) {
  const c = Array.isArray(content) ? content : [content];
  return c.filter((x) => x?.type === 'text').map((x) => x.text).join('\n');
}

// A sampling request as an OpenAI-compatible chat completions request: its system prompt first, then its
// messages as they are, its token limit, and the model it hints at first (else --sampling-model).
function chatRequestOf(params) {
  const messages = [];
  if (params?.systemPrompt) messages.push({ role: 'system', content: params.systemPrompt });
  for (const m of params?.messages ?? []) messages.push({ role: m.role, content: textOf(m.content) });
  const body = { messages };
  const model = params?.modelPreferences?.hints?.find((h) => h?.name)?.name ?? opt.samplingModel;
  if (model) body.model = model;
  if (params?.maxTokens) body.max_tokens = params.maxTokens;
  return body;
}

// Asks the endpoint; its failure is the sampling request's failure (the server hears an error, as from a
// client that refuses the request).
async function askEndpoint(params) {
  const body = chatRequestOf(params);
  const url = opt.samplingUrl.replace(/\/+$/, '') + '/chat/completions';
  const res = await fetch(url, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    signal: AbortSignal.timeout(DEFAULT_TIMEOUT_MS)
  });
  const raw = await res.text();
  if (!res.ok) throw new Error(`sampling endpoint ${url} answered HTTP ${res.status}: ${raw.slice(0, 300)}`);
  const reply = JSON.parse(raw);
  const choice = reply?.choices?.[0];
  const text = choice?.message?.content;
  if (typeof text !== 'string') throw new Error(`sampling endpoint ${url} sent no choices[0].message.content: ${raw.slice(0, 300)}`);
  return {
    role: 'assistant', content: { type: 'text', text }, model: reply.model ?? body.model ?? 'unknown',
    stopReason: choice.finish_reason === 'length' ? 'maxTokens' : 'endTurn'
  };
}

// The reply is the template with {{prompt}}, {{PROMPT}} (upper-cased) and {{system}} filled in: deterministic,
// so tests can check what code did with the answers.
function cannedReply(params) {
  const prompt = lastUserText(params);
  const text = opt.samplingReply.split('{{prompt}}').join(prompt).split('{{PROMPT}}').join(prompt.toUpperCase())
    .split('{{system}}').join(params?.systemPrompt ?? '');
  return { role: 'assistant', content: { type: 'text', text }, model: 'mcp-driver-canned', stopReason: 'endTurn' };
}

const sampling = opt.samplingReply !== undefined || opt.samplingUrl !== undefined;
const client = new Client(
  { name: 'rlm-mcp-e2e-driver', version: '1.0.0' },
  { capabilities: sampling ? { sampling: {} } : {} }
);
if (sampling) {
  // Each request is told as a sampling event (its params, the reply text or the error, and in_flight: the
  // requests being answered at once, this one included).
  let inFlight = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    inFlight++;
    const event = { event: 'sampling', params: req.params, in_flight: inFlight };
    try {
      if (opt.samplingDelayMs) await new Promise((r) => setTimeout(r, opt.samplingDelayMs));
      const result = opt.samplingUrl !== undefined ? await askEndpoint(req.params) : cannedReply(req.params);
      event.reply = result.content.text;
      return result;
    } catch (e) {
      event.error = messageOf(e);
      throw e;
    } finally {
      inFlight--;
      emit(event);
    }
  });
}
client.fallbackNotificationHandler = async (n) => emit({ event: 'notification', method: n.method, params: n.params ?? null });
client.onerror = (e) => log(`transport/protocol error: ${e?.message ?? e}`);

let ready = false, closing = false;
client.onclose = () => { if (ready && !closing) { log('connection closed by peer'); emit({ event: 'closed' }); } };

const requestInit = Object.keys(opt.headers).length ? { headers: opt.headers } : undefined;
const transport = opt.http ? new StreamableHTTPClientTransport(new URL(opt.http), { requestInit })
  : opt.sse ? new SSEClientTransport(new URL(opt.sse), { requestInit })
  : new StdioClientTransport({ command: opt.command[0], args: opt.command.slice(1), env: { ...process.env }, stderr: 'inherit' });

let protocolVersion = null;
const origSetPV = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { protocolVersion = v; origSetPV?.(v); };

async function callTool(cmd, progress) {
  const o = { timeout: cmd.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  if (progress) {
    o.resetTimeoutOnProgress = true;
    o.onprogress = (p) => emit({ event: 'progress', id: cmd.id, progress: p.progress, total: p.total ?? null, message: p.message ?? null });
  }
  return client.callTool({ name: cmd.tool, arguments: cmd.args ?? {} }, CallToolResultSchema, o);
}

async function bench(cmd) {
  const count = cmd.count ?? 100, warmup = cmd.warmup ?? 0, concurrency = Math.max(1, cmd.concurrency ?? 1);
  const one = async () => {
    try { return (await callTool(cmd, false)).isError ? 'tool returned isError' : null; } catch (e) { return messageOf(e); }
  };
  const run = async (n, lat) => {
    let next = 0, errors = 0, firstError = null;
    const loop = async () => {
      while (next < n) {
        next++;
        const t0 = process.hrtime.bigint();
        const err = await one();
        lat?.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (err) { errors++; firstError ??= err; }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(n, 1)) }, loop));
    return { errors, firstError };
  };
  await run(warmup, null);
  const lat = [];
  const t0 = process.hrtime.bigint();
  const { errors, firstError } = await run(count, lat);
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const sorted = [...lat].sort((a, b) => a - b);
  const r = {
    count, errors,
    median_ms: percentile(sorted, 0.5),
    p99_ms: percentile(sorted, 0.99),
    mean_ms: lat.length ? lat.reduce((a, b) => a + b, 0) / lat.length : null,
    calls_per_s: wallMs > 0 ? count / (wallMs / 1000) : null
  };
  if (firstError) r.first_error = firstError;
  return r;
}

async function shutdown() {
  closing = true;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    try { await transport.terminateSession(); } catch (e) { log(`terminateSession: ${e?.message ?? e}`); }
  }
  await client.close();
}

async function execute(cmd) {
  const o = { timeout: cmd.timeoutMs ?? DEFAULT_TIMEOUT_MS };
  switch (cmd.op) {
    case 'call': return callTool(cmd, cmd.progress === true);
    case 'list_tools': return client.listTools(undefined, o);
    case 'list_prompts': return client.listPrompts(undefined, o);
    case 'get_prompt': return client.getPrompt({ name: cmd.name, arguments: cmd.args ?? {} }, o);
    case 'list_resources': return client.listResources(undefined, o);
    case 'read_resource': return client.readResource({ uri: cmd.uri }, o);
    case 'bench': return bench(cmd);
    default: throw new Error(`unknown op ${JSON.stringify(cmd.op)}`);
  }
}

const pending = new Set();
async function handle(line) {
  let cmd;
  try { cmd = JSON.parse(line); } catch (e) { emit({ id: null, ok: false, error: { code: null, message: `bad command JSON: ${e.message}` } }); return; }
  if (cmd.op === 'close') {
    const grace = new Promise((r) => setTimeout(r, cmd.timeoutMs ?? 10000).unref());
    await Promise.race([Promise.allSettled([...pending]), grace]);
    await shutdown();
    process.stdout.write(JSON.stringify({ id: cmd.id, ok: true, result: {} }) + '\n', () => process.exit(0));
    return;
  }
  try { emit({ id: cmd.id, ok: true, result: await execute(cmd) }); } catch (e) { emit({ id: cmd.id, ok: false, error: errorOf(e) }); }
}

await client.connect(transport, { timeout: DEFAULT_TIMEOUT_MS }).catch(fatal);
emit({
  event: 'ready',
  serverInfo: client.getServerVersion() ?? null,
  capabilities: client.getServerCapabilities() ?? null,
  protocolVersion,
  instructions: client.getInstructions() ?? null,
  sessionId: transport.sessionId ?? null
});
ready = true;

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const p = handle(line).catch(fatal);
  pending.add(p);
  p.finally(() => pending.delete(p));
});
rl.on('close', async () => {
  await Promise.allSettled([...pending]);
  await shutdown().catch((e) => log(`close: ${e?.message ?? e}`));
  process.exit(0);
});
