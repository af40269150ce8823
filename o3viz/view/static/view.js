// The trace view: outline, reasoning map and details panel, one selection among them, all in the
// browser. Its home is o3viz/view/; its two hosts are the notebook page (o3viz/view/page.py inlines
// it) and Inspect's component (pages/common/o3view/index.html loads it). ``o3view(D, opts)`` lays
// out the view from its data ``D`` (o3viz.view.data / o3viz.app.inspect_view; the keys are listed in
// o3viz/view/__init__.py) in the page's #outline, #map, #details (and,
// for a long trace, #overview, #epview, #strip, #epbar) and returns
// ``{select(id), openEpisode(k), highlight(ids), state()}``. ``opts.onChange({id, episode})`` hears
// every change the user makes. Text from the trace is only ever set as ``textContent``.
window.o3view = function (D, opts) {
  opts = opts || {};
  const COLORS = D.colors || {};
  const CFG = {displaylogo: false, responsive: true};
  const EPS = D.episodes || null; // a long trace: it opens on its episodes
  const VERIFIERS = D.verifiers || [], VCOLORS = D.verifier_colors || {}; // each verifier named once
  const maps = [];
  let selected = null, openEp = null, marks = [];
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
  function verifierRows(d) { // a step's verifiers' verdicts ([index into D.verifiers, verdict, score]) as check rows
    return (d.verdicts || []).map(([k, verdict, score]) => {
      const v = VERIFIERS[k] || {verifier: '?', kind: ''}, word = verdict || 'not judged';
      return {name: v.verifier + (v.kind ? ' · ' + v.kind : ''), verdict: word, verifier: v.verifier,
        message: typeof score === 'number' ? 'score ' + score.toFixed(2) : '', color: VCOLORS[word] || VCOLORS['not judged']};
    });
  }
  function details(id) {
    const box = q('#details');
    box.replaceChildren();
    const d = id === null ? null : D.nodes[id];
    if (!d) {
      box.append(el('div', 'dtitle', D.intro ? D.intro.title : 'Details'));
      box.append(el('p', 'muted', 'Click a step on the map or in the outline.'));
      if (D.intro) D.intro.lines.forEach((f) => box.append(el('div', 'fact', f)));
      return;
    }
    const h = el('div', 'dtitle', d.title);
    if (d.verdict) { h.append(' '); h.append(chip(d.verdict, COLORS[d.verdict])); }
    box.append(h);
    (d.facts || []).forEach((f) => box.append(el('div', 'fact', f)));
    if (d.text) box.append(el('pre', 'dtext', d.text));
    const checks = (d.checks || []).concat(verifierRows(d));
    if (checks.length) {
      box.append(el('div', 'sub', checks.some((c) => c.verifier) ? 'Checks and verifiers' : 'Checks'));
      checks.forEach((c) => {
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
  function where(m, id) { // [x, y] of a node's marker on map m (an index built once per map)
    if (!m.at) {
      m.at = new Map();
      m.gd._fullData.forEach((t) => {
        if (!t.customdata || (t.meta || '').startsWith('o3-')) return;
        Array.from(t.customdata).forEach((c, i) => {
          if (typeof c === 'string' && !m.at.has(c) && t.x && t.y) m.at.set(c, [t.x[i], t.y[i]]);
        });
      });
    }
    return m.at.get(id) || null;
  }
  function ring(m) {
    if (!m.drawn) return;
    const local = (id) => (id !== null && id.startsWith(m.prefix) ? id.slice(m.prefix.length) : null);
    const at = local(selected) === null ? null : where(m, local(selected));
    const hl = marks.map((id) => where(m, local(id) || '')).filter((p) => p);
    // each restyle recomputes every trace (~40 ms on a map): none where the rings did not move
    const key = JSON.stringify([at, hl]);
    if (key === (m.rung || '[null,[]]')) return;
    m.rung = key;
    Plotly.restyle(m.gd, {x: [at ? [at[0]] : [], hl.map((p) => p[0])], y: [at ? [at[1]] : [], hl.map((p) => p[1])]},
      [m.ring, m.ring + 1]);
  }
  function rows() { return Array.from(document.querySelectorAll('#outline .row')); }
  function showRow(id) {
    const row = rows().find((r) => r.dataset.id === id);
    if (!row) return;
    row.classList.add('sel');
    const box = q('#outline');
    const top = row.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 20)
      box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }
  function mark(id) {
    rows().forEach((r) => r.classList.toggle('sel', r.dataset.id === id));
    maps.forEach(ring);
    details(id);
    document.body.dataset.selected = id === null ? '' : id;
    if (id !== null) showRow(id);
  }
  function changed() { if (opts.onChange) opts.onChange({id: selected, episode: openEp}); }
  // --- episodes (a long trace): the overview, or one episode's steps under the whole-trace strip
  function drawn(m) { // a map is drawn when first shown (a hidden div would be drawn at the wrong size)
    if (m.drawn) { Plotly.Plots.resize(m.gd); return; }
    m.drawn = true;
    Plotly.newPlot(m.gd, m.data, m.layout, CFG);
    m.gd.on('plotly_click', (ev) => {
      const p = ev.points && ev.points[0];
      if (p && typeof p.customdata === 'string') select(m.prefix + p.customdata);
    });
    ring(m);
  }
  function openEpisode(k, quiet) {
    if (!EPS) return;
    openEp = k === null || k === undefined || !EPS[k] ? null : k;
    document.body.dataset.episode = openEp === null ? '' : String(openEp);
    q('#overview').style.display = openEp === null ? '' : 'none';
    q('#epview').style.display = openEp === null ? 'none' : '';
    rows().forEach((r) => {
      if (r.dataset.ep !== undefined) r.style.display = Number(r.dataset.ep) === openEp ? '' : 'none';
      if (r.classList.contains('episode')) {
        const on = r.dataset.id === 'episode:' + openEp;
        r.classList.toggle('open', on);
        const c = r.querySelector('.caret'); if (c) c.textContent = on ? '▾' : '▸';
      }
    });
    if (openEp === null) { drawn(maps[0]); }
    else {
      const e = EPS[openEp];
      q('#epcap').textContent = e.caption;
      q('#epprev').disabled = openEp === 0;
      q('#epnext').disabled = openEp === EPS.length - 1;
      const strip = maps[1], map = maps[2];
      strip.layout.shapes = [{type: 'rect', xref: 'x', yref: 'paper', x0: e.x0, x1: e.x1, y0: 0, y1: 1,
        line: {color: '#111827', width: 2}, fillcolor: 'rgba(0,0,0,0)'}];
      map.layout.xaxis = Object.assign({}, map.layout.xaxis, {range: [e.x0 - 0.3, e.x1 + 0.3]});
      map.layout.title = Object.assign({}, map.layout.title, {text: e.title});
      map.layout.margin = Object.assign({}, map.layout.margin, {t: 30});  // one line of title
      if (strip.drawn) Plotly.relayout(strip.gd, {shapes: strip.layout.shapes});
      if (map.drawn) Plotly.relayout(map.gd, {'xaxis.range': map.layout.xaxis.range, 'title.text': e.title});
      drawn(strip); drawn(map);
    }
    if (!quiet) changed();
  }
  function select(id, quiet) {
    if (id !== null && !D.nodes[id] && !id.startsWith('episode:')) id = null;
    if (id !== null && id.startsWith('episode:')) { // an episode: opens, or closes when it is open
      const k = Number(id.slice(8));
      openEpisode(openEp === k ? null : k, quiet);
      return;
    }
    selected = id;
    const k = EPS && id !== null && D.node_ep ? D.node_ep[id] : undefined;
    if (k !== undefined && k !== openEp) openEpisode(k, true);
    mark(id);
    if (!quiet) changed();
  }
  function plotMap(div, fig, prefix, lazy) {
    const data = fig.data.concat([
      {type: 'scatter', x: [], y: [], mode: 'markers', hoverinfo: 'skip', showlegend: false, meta: 'o3-ring',
        marker: {size: 26, color: 'rgba(0,0,0,0)', line: {width: 3, color: '#111827'}}},
      {type: 'scatter', x: [], y: [], mode: 'markers', hoverinfo: 'skip', showlegend: false, meta: 'o3-match',
        marker: {size: 22, color: 'rgba(0,0,0,0)', line: {width: 2, color: '#f59e0b'}}}]);
    // a click selects through our ring; plotly's own selection would fade every other point
    const m = {gd: div, prefix: prefix, ring: data.length - 2, data: data, drawn: false,
      layout: Object.assign({}, fig.layout, {clickmode: 'event'})};
    maps.push(m);
    if (!lazy) drawn(m);
    return m;
  }
  function outline(box, list) {
    list.forEach((r) => {
      const row = el('div', 'row ' + (r.kind || ''));
      row.dataset.id = r.id;
      if (r.ep !== undefined) { row.dataset.ep = r.ep; row.style.display = 'none'; }
      row.title = r.title || '';
      row.style.paddingLeft = (4 + 14 * r.depth) + 'px';
      if (r.kind === 'episode') row.append(el('span', 'caret', '▸'));
      const sw = el('span', 'sw');
      sw.style.background = r.color || '#bbb';
      row.append(sw);
      if (r.kind === 'step') row.append(el('span', 'idx', r.index));
      if (r.kind === 'episode') row.append(el('span', 'idx', 'E' + r.index));
      row.append(el('span', 'txt', (r.mark ? r.mark + ' ' : '') + r.text));
      if (r.chip) row.append(chip(r.chip, r.kind === 'step' ? '#475569' : r.chip_color || r.color));
      row.addEventListener('click', () => select(r.id));
      box.append(row);
    });
  }
  function tabs(list) {
    const nav = q('nav');
    if (!nav) return;
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
  // search (Inspect): a query rings its matches on the map, selects the first, Enter the next
  function search(input, say) {
    let found = [], at = 0, timer = null;
    const run = () => {
      const t = input.value.trim().toLowerCase();
      found = t ? (D.find || []).filter(([id, text]) => id.includes(t) || text.includes(t)).map(([id]) => id).slice(0, 50) : [];
      at = 0;
      marks = found;
      maps.forEach(ring);
      rows().forEach((r) => r.classList.toggle('match', found.includes(r.dataset.id)));
      say.textContent = !t ? '' : found.length ? found.length + ' match' + (found.length > 1 ? 'es' : '') +
        (found.length > 1 ? ' · Enter: next' : '') : 'no match for “' + input.value.trim().slice(0, 40) + '”';
      if (found.length) select(found[0]);
    };
    input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(run, 120); });
    input.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      clearTimeout(timer);
      if (!found.length || input.dataset.q !== input.value) { input.dataset.q = input.value; run(); return; }
      at = (at + 1) % found.length;
      select(found[at]);
    });
  }
  if (D.kind === 'trace') {
    outline(q('#outline'), D.outline);
    if (q('#find')) search(q('#find'), q('#found'));
    if (EPS) {
      plotMap(q('#overview'), D.overview, '', true);
      plotMap(q('#strip'), D.strip, '', true);
      plotMap(q('#map'), D.map, '', true);
      q('#epover').addEventListener('click', () => openEpisode(null));
      q('#epprev').addEventListener('click', () => openEpisode(Math.max(0, (openEp || 0) - 1)));
      q('#epnext').addEventListener('click', () => openEpisode(Math.min(EPS.length - 1, (openEp || 0) + 1)));
      openEpisode(D.episode === undefined ? null : D.episode, true);
    } else {
      plotMap(q('#map'), D.map, '');
    }
    tabs([{title: 'Map'}].concat(D.tabs || []));
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
  if (D.selected) select(D.selected, true); else mark(null);
  document.body.dataset.ready = '1';
  return {
    select: (id) => select(id, true),
    openEpisode: (k) => openEpisode(k, true),
    highlight: (ids) => { marks = ids || []; maps.forEach(ring); },
    state: () => ({id: selected, episode: openEp}),
  };
};
