// Small SVG charts built with DOM calls only: no markup strings, no libraries.
'use strict';
(function () {
  const NS = 'http://www.w3.org/2000/svg';
  const H = 150, L = 56, R = 8, T = 10, B = 22;
  let W = 420;

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  function frame(host, points, maxY, formatY, empty) {
    host.replaceChildren();
    W = Math.max(200, Math.round(host.clientWidth) || 420);
    const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart-svg', role: 'img' });
    host.appendChild(svg);
    if (!points.length) {
      const t = el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'chart-empty' }, svg);
      t.textContent = empty;
      return null;
    }
    for (const f of [0, 0.5, 1]) {
      const y = T + (H - T - B) * (1 - f);
      el('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'chart-grid' }, svg);
      const label = el('text', { x: L - 4, y: y + 4, 'text-anchor': 'end', class: 'chart-label' }, svg);
      label.textContent = formatY(maxY * f);
    }
    const first = el('text', { x: L, y: H - 6, class: 'chart-label' }, svg);
    first.textContent = '#' + points[0].label;
    const last = el('text', { x: W - R, y: H - 6, 'text-anchor': 'end', class: 'chart-label' }, svg);
    last.textContent = '#' + points[points.length - 1].label;
    return svg;
  }

  const xOf = (i, n) => L + (n === 1 ? (W - L - R) / 2 : (W - L - R) * i / (n - 1));
  const yOf = (v, max) => T + (H - T - B) * (1 - (max > 0 ? v / max : 0));

  /** points: [{label, value, tip}] drawn as a line with dots. */
  function line(host, points, formatY) {
    const max = Math.max(1, ...points.map((p) => p.value));
    const svg = frame(host, points, max, formatY, 'no entries yet');
    if (!svg) return;
    const n = points.length;
    el('polyline', { points: points.map((p, i) => `${xOf(i, n)},${yOf(p.value, max)}`).join(' '), class: 'chart-line' }, svg);
    points.forEach((p, i) => {
      const dot = el('circle', { cx: xOf(i, n), cy: yOf(p.value, max), r: 2.5, class: 'chart-dot' }, svg);
      el('title', {}, dot).textContent = p.tip;
    });
  }

  /** points: [{label, value, tip, bad}] drawn as bars; bad ones in the error colour. */
  function bars(host, points, formatY) {
    const max = Math.max(1, ...points.map((p) => p.value));
    const svg = frame(host, points, max, formatY, 'no entries yet');
    if (!svg) return;
    const n = points.length, slot = (W - L - R) / n, width = Math.max(1, slot * 0.7);
    points.forEach((p, i) => {
      const y = yOf(p.value, max);
      const bar = el('rect', { x: L + slot * i + (slot - width) / 2, y, width, height: Math.max(0.5, H - B - y),
        class: p.bad ? 'chart-bar bad' : 'chart-bar' }, svg);
      el('title', {}, bar).textContent = p.tip;
    });
  }

  window.RlmCharts = { line, bars };
})();
