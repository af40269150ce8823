"""The notebook view as one self-contained HTML page: plotly.js inlined from the installed plotly
package (nothing loads from the network), the view's data as JSON, and a small script that lays
out the outline, the map and the details panel and keeps one selection among them.

The page talks to whatever embeds it through ``postMessage``: it posts ``{o3viz: "select", id}``
when the user picks a node and selects a node it is sent the same message for (the widget keeps
``view.selected`` in Python that way). Text from the trace is only ever set as ``textContent``.
"""

from __future__ import annotations

import html
import json

from plotly.offline import get_plotlyjs

from o3viz.figures._style import VERDICT_COLORS

CSS = """
body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2937; }
.o3 { padding: 8px 10px; box-sizing: border-box; }
header { display: flex; gap: 14px; align-items: baseline; margin-bottom: 4px; }
header .q { font-weight: 600; flex: 1; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
header .ans { color: #334155; white-space: nowrap; }
nav button { border: 1px solid #cbd5e1; background: #f8fafc; padding: 3px 12px; border-radius: 6px 6px 0 0;
  cursor: pointer; font: inherit; }
nav button.on { background: #fff; border-bottom-color: #fff; font-weight: 600; }
.panel { display: none; border-top: 1px solid #cbd5e1; padding-top: 6px; }
.panel.on { display: block; }
.grid { display: grid; grid-template-columns: 25% 1fr 25%; gap: 8px; height: 480px; }
.grid > div { min-width: 0; overflow: auto; }
#outline .row { display: flex; gap: 5px; align-items: baseline; padding: 2px 4px; cursor: pointer;
  border-radius: 4px; white-space: nowrap; }
#outline .row:hover { background: #f1f5f9; }
#outline .row.sel { background: #e0e7ff; outline: 1px solid #111827; }
.sw { width: 9px; height: 9px; border-radius: 2px; flex: none; }
.txt { overflow: hidden; text-overflow: ellipsis; flex: 1; }
.chip { font-size: 11px; padding: 0 5px; border-radius: 8px; color: #fff; background: #64748b; flex: none; }
.idx { color: #64748b; min-width: 1.6em; text-align: right; }
#details { border-left: 1px solid #e2e8f0; padding-left: 8px; }
.dtitle { font-weight: 600; margin-bottom: 4px; }
.fact { color: #475569; font-size: 12px; }
.dtext { white-space: pre-wrap; font: 12px/1.4 ui-monospace, monospace; background: #f8fafc; padding: 6px;
  border-radius: 4px; max-height: 170px; overflow: auto; }
.sub { font-weight: 600; margin-top: 8px; }
.bar { display: flex; gap: 6px; align-items: center; font-size: 12px; }
.bar i { display: block; height: 8px; background: #0072B2; border-radius: 2px; }
.muted { color: #64748b; }
table.metrics { border-collapse: collapse; font-size: 12px; margin: 4px 0 8px; }
table.metrics td, table.metrics th { padding: 1px 10px; border-bottom: 1px solid #e2e8f0; text-align: left; }
.cgrid { display: grid; grid-template-columns: 1fr 30%; gap: 8px; }
.cgrid #details { border: 0; padding: 0; }
"""

SCRIPT = r"""
(function () {
  const D = JSON.parse(document.getElementById('o3-data').textContent);
  const COLORS = D.colors || {};
  const CFG = {displaylogo: false, responsive: true};
  const maps = [];
  let selected = null;
  const q = (s) => document.querySelector(s);
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function chip(text, color) {
    const c = el('span', 'chip', text);
    if (color) c.style.background = color;
    return c;
  }
  function details(id) {
    const box = q('#details');
    box.replaceChildren();
    const d = D.nodes[id];
    if (!d) { box.append(el('p', 'muted', 'Click a step on the map or in the outline.')); return; }
    const h = el('div', 'dtitle', d.title);
    if (d.verdict) { h.append(' '); h.append(chip(d.verdict, COLORS[d.verdict])); }
    box.append(h);
    (d.facts || []).forEach((f) => box.append(el('div', 'fact', f)));
    if (d.text) box.append(el('pre', 'dtext', d.text));
    if (d.checks && d.checks.length) {
      box.append(el('div', 'sub', 'Checks'));
      d.checks.forEach((c) => {
        const r = el('div', 'fact');
        r.append(chip(c.verdict, c.color || COLORS[c.verdict]), ' ' + c.name + (c.message ? ': ' + c.message : ''));
        box.append(r);
      });
    }
    if (d.attention && d.attention.length) {
      box.append(el('div', 'sub', 'Where its attention went'));
      d.attention.forEach(([k, v]) => {
        const r = el('div', 'bar'), i = el('i');
        i.style.width = Math.max(2, Math.round(v * 120)) + 'px';
        r.append(i, el('span', '', k + ' ' + Math.round(v * 100) + '%'));
        box.append(r);
      });
    }
  }
  function ring(m, id) {
    let at = null;
    if (id !== null) {
      m.gd._fullData.forEach((t) => {
        if (at || !t.customdata || t.meta === 'o3-ring') return;
        const i = Array.from(t.customdata).indexOf(id);
        if (i >= 0) at = [t.x[i], t.y[i]];
      });
    }
    Plotly.restyle(m.gd, {x: [at ? [at[0]] : []], y: [at ? [at[1]] : []]}, [m.ring]);
  }
  function select(id, quiet) {
    selected = id;
    document.querySelectorAll('.row.sel').forEach((r) => r.classList.remove('sel'));
    const row = Array.from(document.querySelectorAll('.row')).find((r) => r.dataset.id === id);
    if (row) {
      row.classList.add('sel');
      const box = row.parentElement;
      if (row.offsetTop < box.scrollTop || row.offsetTop > box.scrollTop + box.clientHeight - 20)
        box.scrollTop = row.offsetTop - box.clientHeight / 2;
    }
    maps.forEach((m) => ring(m, id.startsWith(m.prefix) ? id.slice(m.prefix.length) : null));
    details(id);
    document.body.dataset.selected = id;
    if (!quiet && window.parent !== window) window.parent.postMessage({o3viz: 'select', id: id}, '*');
  }
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (m && m.o3viz === 'select' && typeof m.id === 'string' && m.id !== selected && D.nodes[m.id]) select(m.id, true);
  });
  function plotMap(div, fig, prefix) {
    const data = fig.data.concat([{type: 'scatter', x: [], y: [], mode: 'markers', hoverinfo: 'skip',
      showlegend: false, meta: 'o3-ring',
      marker: {size: 26, color: 'rgba(0,0,0,0)', line: {width: 3, color: '#111827'}}}]);
    // a click selects through our ring; plotly's own selection would fade every other point
    Plotly.newPlot(div, data, Object.assign({}, fig.layout, {clickmode: 'event'}), CFG);
    const m = {gd: div, prefix: prefix, ring: data.length - 1};
    maps.push(m);
    div.on('plotly_click', (ev) => {
      const p = ev.points && ev.points[0];
      if (p && typeof p.customdata === 'string') select(prefix + p.customdata);
    });
  }
  function outline(box, rows) {
    rows.forEach((r) => {
      const row = el('div', 'row');
      row.dataset.id = r.id;
      row.title = r.title || '';
      row.style.paddingLeft = (4 + 14 * r.depth) + 'px';
      const sw = el('span', 'sw');
      sw.style.background = r.color || '#bbb';
      row.append(sw);
      if (r.kind === 'step') row.append(el('span', 'idx', r.index));
      row.append(el('span', 'txt', (r.mark ? r.mark + ' ' : '') + r.text));
      if (r.chip) row.append(chip(r.chip, r.kind === 'step' ? '#475569' : r.color));
      row.addEventListener('click', () => select(r.id));
      box.append(row);
    });
  }
  function tabs(list) {
    const nav = q('nav');
    list.forEach((t, k) => {
      const b = el('button', k === 0 ? 'on' : '', t.title);
      b.dataset.tab = 'tab' + k;
      nav.append(b);
      b.addEventListener('click', () => {
        document.querySelectorAll('nav button').forEach((x) => x.classList.toggle('on', x === b));
        document.querySelectorAll('.panel').forEach((p) => p.classList.toggle('on', p.id === b.dataset.tab));
        const p = document.getElementById(b.dataset.tab);
        if (t.figure && !p.dataset.drawn) { p.dataset.drawn = '1'; Plotly.newPlot(p.firstChild, t.figure.data, t.figure.layout, CFG); }
      });
    });
  }
  if (D.kind === 'trace') {
    outline(q('#outline'), D.outline);
    plotMap(q('#map'), D.map, '');
    tabs([{title: 'Map'}].concat(D.tabs));
  } else {
    const s = q('#summary');
    s.append(el('b', '', 'What changed · '), D.summary.join(' · '));
    const t = q('table.metrics');
    const head = el('tr');
    ['', 'A', 'B', 'B − A'].forEach((h) => head.append(el('th', '', h)));
    t.append(head);
    D.metrics.forEach((row) => { const tr = el('tr'); row.forEach((c) => tr.append(el('td', '', c))); t.append(tr); });
    plotMap(q('#mapA'), D.maps[0], 'A/');
    plotMap(q('#mapB'), D.maps[1], 'B/');
  }
  if (D.selected) select(D.selected, true); else details(null);
  document.body.dataset.ready = '1';
})();
"""

_TRACE_BODY = """<header><div class="q"></div><div class="ans"></div></header><nav></nav>
<section id="tab0" class="panel on"><div class="grid"><div id="outline"></div><div id="map"></div>
<div id="details"></div></div></section>"""

_COMPARE_BODY = """<header><div class="q"></div></header><div id="summary"></div>
<div class="cgrid"><div><div id="mapA"></div><div id="mapB"></div></div>
<div><table class="metrics"></table><div id="details"></div></div></div>"""


def _tab_panels(n: int) -> str:
    return "".join(f'<section id="tab{k}" class="panel"><div></div></section>' for k in range(1, n + 1))


def script_json(data: dict) -> str:
    """``data`` as JSON to sit inside a ``<script>`` block: every ``<``, ``>`` and ``&`` escaped
    (``\\u003c``...), so no text in it (``</script>``, or ``<!--<script>``, whose "double escaped"
    parser state swallows the block's closing tag) can end the block or change how it is parsed.

    >>> script_json({"t": "<!--<script>"})
    '{"t": "\\\\u003c!--\\\\u003cscript\\\\u003e"}'
    """
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_html(data: dict) -> str:
    """The whole view as one HTML page (about 5 MB, most of it plotly.js)."""
    data = {**data, "colors": VERDICT_COLORS}
    payload = script_json(data)
    if data["kind"] == "trace":
        body = _TRACE_BODY + _tab_panels(len(data["tabs"]))
    else:
        body = _COMPARE_BODY
    head = html.escape(data.get("question", ""))
    body = body.replace('<div class="q"></div>', f'<div class="q" title="{head}">{head}</div>', 1)
    body = body.replace(
        '<div class="ans"></div>', f'<div class="ans">{html.escape(data.get("answer", ""))}</div>', 1
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>o3viz</title>'
        f"<style>{CSS}</style><script>{get_plotlyjs()}</script></head>"
        f'<body><div class="o3">{body}</div>'
        f'<script type="application/json" id="o3-data">{payload}</script><script>{SCRIPT}</script></body></html>'
    )


def iframe_html(page: str, height: int) -> str:
    """``page`` in an iframe (``srcdoc``), the form a notebook's HTML output keeps it in: its script
    and styles stay apart from the notebook's, and it works where widgets don't (nbconvert)."""
    return (
        f'<iframe class="o3viz-view" srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{height}px;border:1px solid #e2e8f0;border-radius:4px"></iframe>'
    )
