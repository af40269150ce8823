// Inspect's figure component (after page.js): one tab's figures (o3viz.app.figure_view_data), in
// rows, in the page, staying there while the tab is closed. On figures whose x axis is the round's
// steps, the selected step is outlined, as the map rings it, and a click on a column selects that
// step (the state value ``selection``).
const CFG = {displaylogo: false, responsive: true};

function figureView(root) {
  const F = {set: null, url: null, D: null, gds: [], selected: null, token: 0, io: null, seq: 0};
  function stepShapes(t) {  // the selected step's column outlined, on a figure whose x axis is steps
    const m = /^step:(\d+):(\d+)$/.exec(F.selected || '');
    const i = m && t && t.x && Number(m[1]) === F.D.round ? Array.from(t.x).map(String).indexOf(m[2]) : -1;
    const rows = t && t.y ? t.y.length : 0;
    return i < 0 ? [] : [['white', 6], [F.D.select, 2]].map(([color, width]) => ({
      type: 'rect', xref: 'x', yref: 'y', x0: i - 0.5, x1: i + 0.5, y0: -0.5, y1: rows - 0.5,
      line: {color: color, width: width}}));
  }
  const outlineStep = (gd) => Plotly.relayout(gd, {shapes: stepShapes(gd.data && gd.data[0])});
  const outlineSteps = () => Promise.all(F.gds.filter((gd) => gd.dataset.steps).map(outlineStep));
  function report(id) {
    syncUrl({id: id});
    F.seq += 1;
    root.dataset.reported = String(F.seq);
    F.set('selection', {seq: F.seq, id: id});
  }
  function drawOne(gd, f, D) {
    // the selection's outline is drawn with the figure, not by a second layout pass after it
    const layout = f.steps ? Object.assign({}, f.figure.layout, {shapes: stepShapes(f.figure.data[0])}) : f.figure.layout;
    return Plotly.newPlot(gd, f.figure.data, layout, CFG).then(() => {
      if (!f.steps) return null;
      gd.dataset.steps = '1';
      gd.on('plotly_click', (ev) => {
        const p = ev && ev.points && ev.points[0];
        if (!p || p.x === undefined) return;
        F.selected = 'step:' + D.round + ':' + p.x;
        outlineSteps();
        report(F.selected);
      });
      return null;
    });
  }
  // resolves when the view comes within 200 px of the viewport (figures below the fold load
  // plotly.js when the reader scrolls to them, unless their preload turn came first)
  const nearViewport = () => new Promise((r) => {
    if (!W.IntersectionObserver) { r(); return; }
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) { io.disconnect(); r(); }
    }, {rootMargin: '200px'});
    io.observe(root);
  });
  // A figure is drawn when it comes near the viewport, one at a time: the tab's first figure at
  // once, those below the fold when the reader scrolls to them, so that switching to the tab and
  // back never waits for figures nobody has looked at yet.
  function drawFigures(D) {
    F.gds.forEach((gd) => Plotly.purge(gd));
    if (F.io) F.io.disconnect();
    const todo = [];
    root.replaceChildren();
    F.D = D;
    F.gds = [];
    D.rows.forEach((row) => {
      const r = document.createElement('div');
      r.className = 'figrow';
      row.forEach((f) => {
        const gd = document.createElement('div');
        gd.className = 'fig';
        gd.style.minHeight = (f.figure.layout.height || 450) + 'px';
        r.append(gd);
        F.gds.push(gd);
        todo.push(f);
      });
      root.append(r);
    });
    let chain = Promise.resolve();
    const queue = (gd) => {
      const k = F.gds.indexOf(gd);
      if (k < 0 || gd.dataset.queued) return;
      gd.dataset.queued = '1';
      chain = chain.then(() => drawOne(gd, todo[k], D)).then(() => {
        root.dataset.ready = '1';
        root.dataset.drawn = String(Number(root.dataset.drawn || 0) + 1);
        return new Promise((r) => setTimeout(r, 0));
      });
    };
    // those on the screen now are drawn at once; the others when they come near it (in a closed
    // tab, laid out unseen: its first row, where the tab opens)
    const first = new Set(root.firstChild ? root.firstChild.children : []);
    const onScreen = (gd) => {
      if (!shown(root)) return first.has(gd);
      const r = gd.getBoundingClientRect();
      return r.top < W.innerHeight && r.bottom > 0;
    };
    const later = F.gds.filter((gd) => !onScreen(gd));
    F.gds.filter(onScreen).forEach(queue);
    if (!W.IntersectionObserver) { later.forEach(queue); return chain; }
    F.io = new IntersectionObserver((entries) => entries.forEach((e) => {
      if (!e.isIntersecting) return;
      F.io.unobserve(e.target);
      queue(e.target);
    }), {rootMargin: '200px'});
    later.forEach((gd) => F.io.observe(gd));
    return chain;
  }
  function onData(a, setStateValue) {
    F.set = setStateValue;
    if (a.height) root.style.minHeight = a.height + 'px';  // its place kept while it draws
    const sel = a.selected || null;
    if (a.url === F.url) {
      if (sel !== F.selected) { F.selected = sel; if (F.D) outlineSteps(); }
      return;
    }
    if (!F.D) root.innerHTML = '<p class="muted">Drawing the figures…</p>';
    F.url = a.url;
    F.selected = sel;
    const token = ++F.token;
    const data = fetch(a.url).then((r) => {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    });
    // the tab's first figures load plotly.js in their turn while the tab is closed; figures below
    // its fold (a.preload false) only when the reader scrolls to them
    const turn = a.preload ? preloadTurn() : new Promise(() => {});
    const ready = Promise.race([whenShown(root).then(nearViewport), turn]).then(plotlyJs);
    // drawn when the tab opens, or before, unseen, once its preload turn came (a laid-out panel)
    const drawable = Promise.race([whenShown(root), turn.then(() => whenLaidOut(root))]);
    Promise.all([data, ready]).then(([D]) => drawable.then(() => {
      if (token === F.token) return drawFigures(D);
    })).catch((e) => {
      root.textContent = 'The figures could not be loaded: ' + e;
    });
  }
  function close() {
    if (F.io) F.io.disconnect();
    F.gds.forEach((gd) => W.Plotly && Plotly.purge(gd));
  }
  return {onData, close};
}

export default function (component) {
  const {parentElement, data, setStateValue} = component;
  const s = stateOf(parentElement, () => {
    const root = document.createElement('div');
    root.className = 'o3v o3 o3v-fig';
    parentElement.append(root);
    return figureView(root);
  });
  s.onData(data || {}, setStateValue);
  return () => unmount(parentElement, s);
}
