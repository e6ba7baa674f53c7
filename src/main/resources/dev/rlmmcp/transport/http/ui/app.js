// The trace viewer. Everything the agent wrote (code, output, names, previews) reaches the page
// through textContent or SVG attributes only; nothing is ever parsed as HTML.
'use strict';
(function () {
  const POLL_MS = 1000;
  const SHOWN_ENTRIES = 500;
  const LONG_OUTPUT_LINES = 12, LONG_OUTPUT_CHARS = 1200;
  const KNOWN_STEP_FIELDS = new Set(['index', 'step', 'kind', 'at', 'input', 'status', 'output', 'variables_changed',
    'duration_ms', 'io_bytes', 'guardrail_stop', 'memory_bytes', 'llm_calls', 'rlm']);
  const $ = (id) => document.getElementById(id);

  const view = { sessions: [], open: null, steps: [], traceLength: 0, varsAt: -1, busy: false, timer: null };

  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c != null) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return node;
  }

  function human(bytes) {
    if (bytes == null || isNaN(bytes)) return '–';
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let v = Number(bytes), u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u === 0 ? v.toFixed(0) : v.toFixed(v < 10 ? 1 : 0)) + ' ' + units[u];
  }
  const ms = (v) => v == null ? '–' : v < 1000 ? `${Number(v).toFixed(v < 10 ? 1 : 0)} ms` : `${(v / 1000).toFixed(2)} s`;
  function when(iso) {
    if (!iso) return '–';
    const d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toLocaleString();
  }
  function ago(iso) {
    const s = Math.round((Date.now() - new Date(iso)) / 1000);
    if (isNaN(s)) return '';
    if (s < 60) return `${Math.max(0, s)} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    return `${Math.round(s / 3600)} h ago`;
  }

  async function getJson(url) {
    const response = await fetch(url, { credentials: 'same-origin', cache: 'no-store' });
    if (response.status === 401) { location.assign('/ui/login'); throw new Error('not logged in'); }
    const body = await response.json();
    if (!response.ok) throw new Error(body?.error?.message || `HTTP ${response.status}`);
    return body;
  }

  function problem(message) {
    const p = $('problem');
    p.hidden = !message;
    p.textContent = message || '';
    $('live').classList.toggle('off', !!message);
  }

  // ----- sessions list ---------------------------------------------------------------------

  function stateBadge(session) {
    const label = session.state === 'stopped' && session.guardrail_stop
      ? `stopped: ${session.guardrail_stop}` : session.state;
    return h('span', { class: `badge state-${session.state}`, text: label });
  }

  function renderSessions() {
    const filter = $('filter').value.trim().toLowerCase();
    const state = $('state-filter').value;
    const sort = $('sort').value;
    const rows = view.sessions.filter((s) => (!state || s.state === state)
      && (!filter || s.session_id.toLowerCase().includes(filter) || String(s.name).toLowerCase().includes(filter)));
    rows.sort((a, b) => {
      if (sort === 'name') return String(a.name).localeCompare(String(b.name));
      if (sort === 'steps' || sort === 'memory_bytes') return (b[sort] || 0) - (a[sort] || 0);
      return String(b[sort]).localeCompare(String(a[sort]));
    });
    const body = $('sessions').tBodies[0];
    body.replaceChildren(...rows.map((s) => {
      const row = h('tr', { class: 'session-row', 'data-id': s.session_id },
        h('td', {}, h('a', { href: `#/s/${encodeURIComponent(s.session_id)}`, class: 'mono', text: s.session_id })),
        h('td', { class: 'name', text: s.name }),
        h('td', {}, stateBadge(s), s.busy ? h('span', { class: 'badge busy', text: 'running' }) : null),
        h('td', { class: 'num', text: String(s.steps) }),
        h('td', { class: 'num', text: human(s.memory_bytes) }),
        h('td', { text: when(s.created) }),
        h('td', { title: when(s.last_active), text: ago(s.last_active) }));
      row.addEventListener('click', (e) => {
        if (e.target.tagName !== 'A') location.hash = `#/s/${encodeURIComponent(s.session_id)}`;
      });
      return row;
    }));
    $('empty').hidden = view.sessions.length > 0;
    $('count').textContent = `${rows.length} of ${view.sessions.length} sessions`;
  }

  async function pollSessions() {
    const body = await getJson('/ui/api/sessions');
    view.sessions = body.sessions;
    renderSessions();
  }

  // ----- one session -----------------------------------------------------------------------

  function outputBlock(text, status) {
    const pre = h('pre', { class: `output ${status === 'ok' || status === 'done' ? '' : 'bad'}`, text });
    const lines = text.split('\n').length;
    if (lines <= LONG_OUTPUT_LINES && text.length <= LONG_OUTPUT_CHARS) return pre;
    const details = h('details', { class: 'long-output' },
      h('summary', { text: `Output: ${lines} lines, ${text.length} characters (click to expand)` }), pre);
    return details;
  }

  function codeBlock(step) {
    const pre = h('pre', { class: 'code' });
    if (step.kind === 'exec') pre.appendChild(window.RlmPython.highlight(step.input || ''));
    else pre.textContent = step.input || '';
    return pre;
  }

  function llmUsage(u) {
    const tokens = `${u.input_tokens ?? 0} in / ${u.output_tokens ?? 0} out tokens${u.tokens_estimated ? ' (estimated)' : ''}`;
    const parts = [`sub-LLM (${u.backend}): ${u.calls} call${u.calls === 1 ? '' : 's'}`, tokens,
      `${ms(u.latency_ms_total)} total, ${ms(u.latency_ms_max)} max`];
    if (u.failed) parts.push(`${u.failed} failed`);
    if (u.refused) parts.push(`${u.refused} refused`);
    return h('div', { class: 'chips' }, h('span', { class: 'chip llm', text: parts.join(' · ') }));
  }

  function llmCalls(calls) {
    const list = h('ol', { class: 'llm-calls' });
    calls.forEach((call, i) => {
      const chips = h('div', { class: 'chips' });
      for (const [k, v] of Object.entries(call || {})) {
        if (k === 'prompt' || k === 'answer' || k === 'response' || v == null || typeof v === 'object') continue;
        chips.appendChild(h('span', { class: 'chip', text: `${k}: ${v}` }));
      }
      const answer = call?.answer ?? call?.response;
      list.appendChild(h('li', {},
        h('details', {},
          h('summary', { text: `llm_query #${i + 1}` + (call?.latency_ms != null ? ` · ${ms(call.latency_ms)}` : '')
            + (call?.tokens != null ? ` · ${typeof call.tokens === 'object' ? JSON.stringify(call.tokens) : call.tokens} tokens` : '') }),
          chips,
          h('div', { class: 'label', text: 'Prompt' }), h('pre', { class: 'output', text: String(call?.prompt ?? '') }),
          h('div', { class: 'label', text: 'Answer' }), h('pre', { class: 'output', text: String(answer ?? '') }))));
    });
    return list;
  }

  // ----- RLM runs: the tree of an rlm_solve entry, or the children an exec step started -------

  const clip = (text, n) => { const t = String(text ?? '').replace(/\s+/g, ' ').trim(); return t.length > n ? t.slice(0, n - 1) + '…' : t; };
  const usd = (v) => v == null ? null : `$${v === 0 || v >= 0.0001 ? Number(v).toFixed(4) : Number(v).toPrecision(2)}`;
  const tokens = (o) => `${o.input_tokens ?? 0} in / ${o.output_tokens ?? 0} out tokens`;

  function chipList(items) {
    const chips = h('div', { class: 'chips' });
    for (const [text, cls] of items) if (text != null) chips.appendChild(h('span', { class: `chip ${cls || ''}`, text }));
    return chips;
  }

  function rlmCall(sub, i) {
    const head = `${sub.kind === 'rlm' ? 'rlm_query' : 'llm_query'} #${i + 1} · ${ms(sub.ms)}`
      + (sub.cached ? ' · cached' : '') + (sub.error ? ' · failed' : '');
    return h('li', { class: `rlm-call kind-${sub.kind}` },
      h('details', {},
        h('summary', { text: head }),
        chipList([[sub.model ? `model: ${sub.model}` : null], [tokens(sub)], [usd(sub.cost_usd)]]),
        h('div', { class: 'label', text: 'Prompt' }), h('pre', { class: 'output', text: String(sub.prompt ?? '') }),
        h('div', { class: 'label', text: sub.error ? 'Error' : 'Answer' }),
        h('pre', { class: `output ${sub.error ? 'bad' : ''}`, text: String(sub.error ?? sub.response ?? '') })));
  }

  function rlmIteration(it, n, depth) {
    const blocks = it.code_blocks || [];
    const subs = blocks.flatMap((b) => b.sub_calls || []);
    const failed = blocks.filter((b) => b.error).length;
    const title = [`Iteration ${n}`, `${blocks.length} code block${blocks.length === 1 ? '' : 's'}`
      + (failed ? ` (${failed} failed)` : ''), subs.length ? `${subs.length} sub-call${subs.length === 1 ? '' : 's'}` : null,
    it.final_answer != null ? `answer: ${clip(it.final_answer, 60)}` : null, tokens(it), usd(it.cost_usd), ms(it.ms)]
      .filter((x) => x != null).join(' · ');
    const body = h('details', { class: 'rlm-iter-detail' }, h('summary', { text: title }));
    if (it.note) body.appendChild(h('p', { class: 'rlm-note', text: it.note }));
    body.appendChild(h('div', { class: 'label', text: 'Response' }));
    body.appendChild(h('pre', { class: 'output rlm-response', text: String(it.response ?? '') }));
    blocks.forEach((b, i) => {
      body.appendChild(h('div', { class: 'label', text: `Code block ${i + 1} · ${ms(b.ms)}` }));
      const pre = h('pre', { class: 'code' });
      pre.appendChild(window.RlmPython.highlight(String(b.code ?? '')));
      body.appendChild(pre);
      const out = [b.stdout, b.stderr, b.error].filter((t) => t).join('\n');
      if (out) body.appendChild(outputBlock(out, b.error ? 'error' : 'ok'));
      if ((b.variables_changed || []).length) body.appendChild(chipList(b.variables_changed.map((v) => [v, 'var'])));
      const calls = (b.sub_calls || []);
      if (calls.length) body.appendChild(h('ol', { class: 'llm-calls rlm-calls' }, ...calls.map(rlmCall)));
    });
    const item = h('li', { class: 'rlm-iteration' }, body);
    const children = subs.filter((s) => s.child && typeof s.child === 'object');
    if (children.length) item.appendChild(h('div', { class: 'rlm-children' }, ...children.map((s) => rlmNode(s.child, depth + 1))));
    return item;
  }

  function rlmNode(node, depth) {
    const d = node.depth ?? depth;
    const its = node.iterations || [];
    const ended = node.stopped_by ? [`stopped by ${node.stopped_by}`, 'guardrail'] : [node.ready ? 'ready' : 'not ready', node.ready ? 'status-ok' : ''];
    const summary = h('summary', {},
      h('span', { class: 'rlm-title', text: `RLM · depth ${d}` }), ' ',
      h('span', { class: 'rlm-prompt', text: clip(node.prompt, 120) }));
    const details = h('details', { class: `rlm-node depth-${d}`, 'data-depth': String(d), 'data-node': String(node.id ?? ''), open: '' },
      summary,
      chipList([[`${its.length} iteration${its.length === 1 ? '' : 's'}`], ended, [node.model ? `model: ${node.model}` : null],
        [tokens(node)], [usd(node.cost_usd)], [ms(node.ms)], [node.context_info ? `context: ${node.context_info}` : null]]));
    if (node.answer != null) details.appendChild(h('div', { class: 'rlm-answer' }, h('span', { class: 'label', text: 'Answer ' }),
      h('span', { text: clip(node.answer, 400) })));
    details.appendChild(h('ol', { class: 'rlm-iterations' }, ...its.map((it, i) => rlmIteration(it, i + 1, d))));
    return details;
  }

  function rlmTree(step) {
    const rlm = step.rlm;
    const solve = rlm.root && typeof rlm.root === 'object';
    const calls = Array.isArray(rlm.calls) ? rlm.calls : [];
    if (!solve && !calls.length) return null;
    const f = solve ? rlm.outcome?.figures : rlm.figures;
    const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
    const head = h('div', { class: 'rlm-head' },
      h('span', { class: 'step-title', text: solve ? `RLM run ${rlm.run_id ?? ''}` : `rlm_query run ${rlm.run_id ?? ''}` }),
      f ? chipList([[plural(f.iterations, 'iteration', 'iterations')], [plural(f.children, 'child', 'children')],
        [`depth ${f.depth_reached}`], [tokens(f)], [usd(f.cost_usd)],
        [f.cache_hits ? plural(f.cache_hits, 'cache hit', 'cache hits') : null], [ms(f.elapsed_ms)],
        [rlm.outcome?.stopped_by ? `stopped by ${rlm.outcome.stopped_by}` : null, 'guardrail']]) : null,
      h('a', { class: 'button rlm-download', href: `/ui/api/sessions/${encodeURIComponent(view.open)}/rlm/${step.index}.jsonl`,
        download: `${view.open}.${step.index}.rlm.jsonl`, title: "alexzhang13/rlm's logger format: its visualizer opens it",
        text: 'Download run (JSONL)' }));
    const tree = h('div', { class: 'rlm-tree', 'data-entry': String(step.index) }, head);
    if (solve) {
      tree.appendChild(rlmNode(rlm.root, 0));
    } else {
      // The step's own calls: a child RLM's tree, or a plain answer where the depth limit made it one.
      const plain = calls.filter((c) => !(c.child && typeof c.child === 'object'));
      if (plain.length) tree.appendChild(h('ol', { class: 'llm-calls rlm-calls' }, ...plain.map(rlmCall)));
      for (const c of calls) if (c.child && typeof c.child === 'object') tree.appendChild(rlmNode(c.child, 1));
    }
    return tree;
  }

  function stepItem(step) {
    const title = step.kind === 'exec' ? `Step ${step.step}` : step.kind === 'load' ? 'Load' : step.kind === 'finalize' ? 'Finalize'
      : step.kind === 'rlm' ? 'RLM run' : step.kind;
    const head = h('div', { class: 'step-head' },
      h('span', { class: 'step-title', text: title }),
      h('span', { class: `badge status-${step.status}`, text: step.status }),
      step.guardrail_stop ? h('span', { class: 'badge guardrail', text: `guardrail: ${step.guardrail_stop}` }) : null,
      h('span', { class: 'muted', text: `${ms(step.duration_ms)} · ${human(step.io_bytes)} I/O · memory ${human(step.memory_bytes)}` }),
      h('span', { class: 'muted right', title: when(step.at), text: new Date(step.at).toLocaleTimeString() }));
    const item = h('li', { class: `step kind-${step.kind}`, 'data-index': String(step.index) }, head, codeBlock(step));
    if (step.output) item.appendChild(outputBlock(step.output, step.status));
    const chips = h('div', { class: 'chips' });
    for (const name of step.variables_changed || []) chips.appendChild(h('span', { class: 'chip var', text: name }));
    for (const [k, v] of Object.entries(step)) {
      if (!KNOWN_STEP_FIELDS.has(k) && v != null && typeof v !== 'object') chips.appendChild(h('span', { class: 'chip', text: `${k}: ${v}` }));
    }
    if (chips.childNodes.length) item.appendChild(chips);
    if (step.llm_usage && typeof step.llm_usage === 'object') item.appendChild(llmUsage(step.llm_usage));
    if (Array.isArray(step.llm_calls) && step.llm_calls.length) item.appendChild(llmCalls(step.llm_calls));
    if (step.rlm && typeof step.rlm === 'object') {
      const tree = rlmTree(step);
      if (tree) item.appendChild(tree);
    }
    return item;
  }

  function renderMeta(s) {
    $('s-title').textContent = s.name;
    const badge = $('s-state');
    badge.className = `badge state-${s.state}`;
    badge.textContent = s.state === 'stopped' && s.guardrail_stop ? `stopped: ${s.guardrail_stop}` : s.state;
    $('s-busy').hidden = !s.busy;
    const limits = s.limits || {};
    const pairs = [['Id', s.session_id], ['Code steps', String(s.code_steps)], ['Runtime', ms(s.runtime_ms)],
      ['Memory', human(s.memory_bytes)], ['I/O', human(s.io_bytes)], ['Kernel', s.kernel_running ? 'running' : 'not running'],
      ['Created', when(s.created)], ['Last active', when(s.last_active)],
      ['Limits', `steps ${limits.max_steps ?? '∞'} · runtime ${limits.max_runtime_ms != null ? ms(limits.max_runtime_ms) : '∞'} · budget ${limits.budget_limit != null ? human(limits.budget_limit) : '∞'} · timeout ${limits.timeout_s} s`]];
    $('s-meta').replaceChildren(...pairs.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]));
    $('s-final').hidden = s.final_answer == null;
    $('s-final-text').textContent = s.final_answer ?? '';
  }

  function renderCharts() {
    const label = (s) => s.index;
    window.RlmCharts.line($('chart-memory'), view.steps.map((s) => ({ label: label(s), value: s.memory_bytes || 0,
      tip: `#${s.index} ${s.kind}: ${human(s.memory_bytes)}` })), human);
    window.RlmCharts.bars($('chart-duration'), view.steps.map((s) => ({ label: label(s), value: s.duration_ms || 0,
      bad: !(s.status === 'ok' || s.status === 'done'), tip: `#${s.index} ${s.kind}: ${ms(s.duration_ms)} (${s.status})` })), ms);
  }

  async function refreshVariables(id) {
    const body = await getJson(`/ui/api/sessions/${encodeURIComponent(id)}/variables`);
    if (view.open !== id) return;
    $('vars-note').textContent = body.note || (body.as_of ? `as of ${new Date(body.as_of).toLocaleTimeString()}` : '');
    $('vars').tBodies[0].replaceChildren(...(body.variables || []).flatMap((v) => {
      const type = v.type == null ? '–' : v.type + (v.length != null ? ` [${v.length}]` : v.shape != null ? ` ${JSON.stringify(v.shape)}` : '');
      const status = v.status ?? (body.source === 'kernel' ? 'live' : body.kernel_running ? 'live' : 'unknown');
      const rows = [h('tr', { class: 'var-row' },
        h('td', { class: 'mono', text: v.name }), h('td', { text: type }),
        h('td', { class: 'num', text: v.size_bytes != null ? human(v.size_bytes) : '–' }),
        h('td', {}, h('span', { class: `badge var-${status}`, text: status })))];
      if (v.preview != null) rows.push(h('tr', { class: 'preview-row' }, h('td', { colspan: '4' }, h('pre', { class: 'preview', text: String(v.preview) }))));
      return rows;
    }));
  }

  async function pollSession(id) {
    const first = view.traceLength === 0 ? `&last=${SHOWN_ENTRIES}` : '';
    const body = await getJson(`/ui/api/sessions/${encodeURIComponent(id)}?from=${view.traceLength}${first}`);
    if (view.open !== id) return;
    renderMeta(body);
    if (body.trace_length < view.traceLength) { view.steps = []; $('steps').replaceChildren(); }
    const list = $('steps');
    for (const step of body.steps) {
      if (view.steps.length && step.index <= view.steps[view.steps.length - 1].index) continue;
      view.steps.push(step);
      list.appendChild(stepItem(step));
    }
    const grew = body.trace_length !== view.traceLength;
    view.traceLength = body.trace_length;
    $('steps-count').textContent = `(${view.steps.length} entries)`;
    const hidden = view.steps.length ? view.steps[0].index : 0;
    $('dropped').hidden = hidden === 0;
    $('dropped').textContent = hidden === 0 ? '' : `Showing the entries from #${hidden} on; `
      + (body.trace_dropped ? `${body.trace_note}; ` : '') + 'the JSONL download has every entry the server kept.';
    if (grew || view.varsAt < 0 || view.busy !== body.busy) {
      renderCharts();
      view.varsAt = view.traceLength;
      view.busy = body.busy;
      await refreshVariables(id);
    }
  }

  function openSession(id) {
    view.open = id;
    view.steps = [];
    view.traceLength = 0;
    view.varsAt = -1;
    view.busy = false;
    $('steps').replaceChildren();
    $('vars').tBodies[0].replaceChildren();
    $('s-title').textContent = id;
    $('download').setAttribute('href', `/ui/api/sessions/${encodeURIComponent(id)}/trace.jsonl`);
    $('download').setAttribute('download', `${id}.trace.jsonl`);
  }

  // ----- routing and polling ---------------------------------------------------------------

  function route() {
    const m = /^#\/s\/(.+)$/.exec(location.hash);
    const id = m ? decodeURIComponent(m[1]) : null;
    $('list-view').hidden = !!id;
    $('session-view').hidden = !id;
    if (id && id !== view.open) openSession(id);
    if (!id) view.open = null;
    document.title = id ? `rlm-mcp · ${id}` : 'rlm-mcp · sessions';
    tick();
  }

  let running = false;
  async function tick() {
    clearTimeout(view.timer);
    if (running) { view.timer = setTimeout(tick, POLL_MS); return; }
    running = true;
    try {
      if (view.open) await pollSession(view.open); else await pollSessions();
      problem(null);
    } catch (e) {
      problem(`Could not reach the server: ${e.message}`);
    } finally {
      running = false;
      view.timer = setTimeout(tick, POLL_MS);
    }
  }

  for (const id of ['filter', 'state-filter', 'sort']) $(id).addEventListener('input', renderSessions);
  window.addEventListener('hashchange', route);
  window.addEventListener('resize', () => { if (view.open) renderCharts(); });
  route();
})();
