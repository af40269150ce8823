// Inspect's view component: speaks Streamlit's component protocol (postMessage, API version 1) and
// hosts the shared trace view (view.js). The view's data is fetched once from ``args.url`` (a file
// named by its content hash); a click, Prev/Next or an episode is answered here, the page's URL is
// kept in step (the frame is same-origin), and the selection is reported to the server only so its
// panels (branch, labels) know it. The server moves the selection itself (search, the first wrong
// step, a link) by raising ``args.push.n``.
(function () {
  const send = (type, data) => window.parent.postMessage(Object.assign({isStreamlitMessage: true, type: type}, data), '*');
  let view = null, url = null, pushed = null, latest = null, loading = false, height = 0, seq = 0;

  function syncUrl(s) {
    try {
      const w = window.parent, u = new URL(w.location.href);
      if (s.id) u.searchParams.set('node', s.id); else u.searchParams.delete('node');
      if (s.episode !== null && s.episode !== undefined) u.searchParams.set('episode', String(s.episode));
      else u.searchParams.delete('episode');
      if (u.toString() !== w.location.href) w.history.replaceState(w.history.state, '', u.toString());
    } catch (e) { /* a frame of another origin: the server keeps the URL */ }
  }
  // The server hears of a selection after the browser has painted it, and only of the latest one
  // in a burst of clicks: each report costs a rerun, and a rerun's redraw of the page shares this
  // frame's thread, so reporting at once made the click's own paint wait for it.
  const REPORT_MS = 250;
  let timer = null, pending = null;
  function flush() {
    timer = null;
    const s = pending;
    pending = null;
    seq += 1;
    document.body.dataset.reported = String(seq);
    send('streamlit:setComponentValue', {value: {id: s.id, episode: s.episode, seq: seq}, dataType: 'json'});
  }
  function report(s) {
    syncUrl(s);
    pending = s;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(flush, REPORT_MS);
  }
  // Inspect's other tabs draw with Streamlit's own plotly chart and widgets, whose bundles (4.7 MB
  // for the chart) the page loads only when one first appears: the first switch to the Attention
  // tab waited ~1.5 s for them. Once the map is drawn and the browser is idle, the page imports
  // them (the URLs Streamlit imports, so each module is evaluated once), once per page.
  function warm(names) {
    try {
      const w = window.parent, d = w.document;
      if (!names || !names.length || w.__o3vizWarm) return;
      const main = d.querySelector('script[src*="/static/js/index."]');
      if (!main) return;
      w.__o3vizWarm = true;
      const srcs = names.map((n) => new URL(n, main.src).toString());
      const go = () => {
        const s = d.createElement('script');
        s.type = 'module';
        // then one tiny heatmap drawn off screen and removed: plotly's first draw in the page sets
        // up what every later one reuses
        s.textContent = 'Promise.all(' + JSON.stringify(srcs) + '.map((u) => import(u))).then(() => {' +
          ' const P = window.Plotly; if (!P || !P.newPlot) return;' +
          ' const d = document.createElement("div");' +
          ' d.style.cssText = "position:absolute;left:-10000px;top:0;width:300px;height:200px";' +
          ' document.body.append(d);' +
          ' P.newPlot(d, [{type: "heatmap", z: [[0, 1], [1, 0]]}], {}).then(() => { P.purge(d); d.remove(); });' +
          '}).catch(() => {});';
        d.head.append(s);
      };
      setTimeout(() => (w.requestIdleCallback ? w.requestIdleCallback(go, {timeout: 3000}) : go()), WARM_MS);
    } catch (e) { /* another origin: Streamlit loads its bundles when it needs them */ }
  }
  const WARM_MS = 1000;
  function layout(D) {
    const root = document.getElementById('root');
    root.replaceChildren();
    const grid = document.createElement('div');
    grid.className = 'grid';
    const centre = D.episodes
      ? '<div id="overview"></div><div id="epview" style="display:none"><div id="epbar">' +
        '<button id="epover">Overview</button><button id="epprev">◀ Prev</button>' +
        '<button id="epnext">Next ▶</button><span id="epcap"></span></div><div id="strip"></div>' +
        '<div id="map"></div></div>'
      : '<div id="map"></div>';
    grid.innerHTML = '<div id="left"><input id="find" type="search" placeholder="Find a step: text or id (wait, step:0:3)"' +
      ' aria-label="Find a step"><div id="found"></div><div id="outline"></div></div>' +
      '<div id="centre">' + centre + '</div><div id="details"></div>';
    root.append(grid);
  }
  function apply(a) {
    if (!view) return;
    const p = a.push || {};
    if (p.n !== pushed) {
      pushed = p.n;
      const ep = p.episode === null || p.episode === undefined ? null : Number(p.episode);
      if (p.id) view.select(p.id);
      else { view.select(null); }
      if (!p.id || (view.state().episode !== ep && ep !== null)) view.openEpisode(ep);
      const s = view.state();
      // the node opened its episode (the first wrong step on a long trace): tell the server
      if (p.id && s.id === p.id && s.episode !== ep) report(s); else syncUrl(s);
    }
  }
  // The frame stays hidden while Streamlit swaps the tab it sits in for another (it is removed
  // when that run ends): only a shown frame loads plotly.js and the data, so switching away from
  // the map no longer parses 4.6 MB for nothing while the other tab draws.
  function shown() {
    const f = window.frameElement;
    return !f || f.getClientRects().length > 0;
  }
  // the frame's viewport grows from nothing when its tab is shown: the resize answers at once,
  // the poll is the fallback
  const whenShown = () => new Promise((r) => {
    if (shown()) { r(); return; }
    const check = () => {
      if (!shown()) return;
      window.removeEventListener('resize', check);
      clearInterval(poll);
      r();
    };
    window.addEventListener('resize', check);
    const poll = setInterval(check, 100);
  });
  // A frame in a closed tab (the figure mode) loads plotly.js once the map is drawn and the
  // browser is idle (or at once if its tab is shown first), so the map's first paint never waits
  // for it and the switch to its tab only draws.
  function mapDrawn() {
    try { return !!window.parent.__o3vizMapDrawn; } catch (e) { return true; }
  }
  // ... and only once the reader has not clicked, typed or scrolled for QUIET_MS: loading plotly.js
  // takes the page's thread for a few hundred ms, which a click meanwhile would wait for.
  const QUIET_MS = 800;
  function lastInput() {
    try { return window.parent.__o3vizInput || 0; } catch (e) { return 0; }
  }
  function watchInput() {
    const mark = () => { try { window.parent.__o3vizInput = Date.now(); } catch (e) { /* another origin */ } };
    ['pointerdown', 'keydown', 'wheel'].forEach((t) => window.addEventListener(t, mark, true));
    try {
      const w = window.parent, d = w.document;
      if (w.__o3vizInputHook) return;
      w.__o3vizInputHook = true;
      const s = d.createElement('script');  // the page's own listener (a frame's would die with it)
      s.textContent = "['pointerdown', 'keydown', 'wheel'].forEach((t) => window.addEventListener(t," +
        ' () => { window.__o3vizInput = Date.now(); }, true));';
      d.head.append(s);
    } catch (e) { /* another origin */ }
  }
  watchInput();
  const idleAfterMap = () => new Promise((r) => {
    const t0 = Date.now();
    const check = () => {
      if (!mapDrawn() && Date.now() - t0 < 8000) { setTimeout(check, 100); return; }
      const quiet = Date.now() - lastInput();
      if (quiet < QUIET_MS) { setTimeout(check, QUIET_MS - quiet + 20); return; }
      if (window.requestIdleCallback) window.requestIdleCallback(() => r(), {timeout: 2000}); else r();
    };
    check();
  });
  // the closed tabs' frames take their turn, one after another, each when the browser is idle
  function preloadTurn() {
    let w = window;
    try { w = window.parent; void w.document; } catch (e) { w = window; }
    const mine = (w.__o3vizPreload || Promise.resolve()).then(idleAfterMap).then(plotlyJs).catch(() => {});
    w.__o3vizPreload = mine;
    return mine;
  }
  let plotly = null;
  function plotlyJs() {
    if (window.Plotly) return Promise.resolve();
    if (!plotly) {
      plotly = new Promise((r, fail) => {
        const s = document.createElement('script');
        s.src = document.querySelector('meta[name="o3-plotly"]').content;
        s.onload = r;
        s.onerror = () => fail(new Error('plotly.js did not load from ' + s.src));
        document.head.append(s);
      });
    }
    return plotly;
  }
  function load(a) {
    loading = true;
    // the handshake, this fetch and plotly's parse overlap; the view script is deferred
    const view_js = new Promise((r) => (window.o3view ? r() : document.addEventListener('DOMContentLoaded', r)));
    const scripts = whenShown().then(() => Promise.all([plotlyJs(), view_js]));
    Promise.all([whenShown().then(() => fetch(a.url)).then((r) => r.json()), scripts]).then(([D]) => {
      const keep = view ? view.state() : null;
      document.querySelectorAll('.js-plotly-plot').forEach((gd) => Plotly.purge(gd));
      layout(D);
      if (keep) { D.selected = keep.id; D.episode = keep.episode; }
      view = window.o3view(D, {onChange: report});
      try { window.parent.__o3vizMapDrawn = true; } catch (e) { /* another origin */ }
      loading = false;
      document.body.dataset.url = a.url;
      apply(latest);
      warm(a.warm);
    }).catch((e) => {
      loading = false;
      document.getElementById('root').textContent = 'The view could not be loaded: ' + e;
    });
  }
  // The figure mode: one Inspect tab's figures (o3viz.app.figure_view_data), in rows, in a frame
  // that stays in the page while the tab is closed. On figures whose x axis is the round's steps,
  // the selected step is outlined, as the map rings it, and a click on a column selects that step.
  const fig = {url: null, D: null, gds: [], selected: null, token: 0};
  const CFG = {displaylogo: false, responsive: true};
  function outlineStep(gd) {
    const D = fig.D, t = gd.data && gd.data[0];
    const m = /^step:(\d+):(\d+)$/.exec(fig.selected || '');
    const i = m && t && t.x && Number(m[1]) === D.round ? Array.from(t.x).map(String).indexOf(m[2]) : -1;
    const rows = t && t.y ? t.y.length : 0;
    const shapes = i < 0 ? [] : [['white', 6], [D.select, 2]].map(([color, width]) => ({
      type: 'rect', xref: 'x', yref: 'y', x0: i - 0.5, x1: i + 0.5, y0: -0.5, y1: rows - 0.5,
      line: {color: color, width: width}}));
    return Plotly.relayout(gd, {shapes: shapes});
  }
  const outlineSteps = () => Promise.all(fig.gds.filter((gd) => gd.dataset.steps).map(outlineStep));
  function figureReport(id) {
    try {
      const w = window.parent, u = new URL(w.location.href);
      u.searchParams.set('node', id);
      if (u.toString() !== w.location.href) w.history.replaceState(w.history.state, '', u.toString());
    } catch (e) { /* another origin: the server keeps the URL */ }
    seq += 1;
    send('streamlit:setComponentValue', {value: {id: id, seq: seq}, dataType: 'json'});
  }
  function drawOne(gd, f, D) {
    return Plotly.newPlot(gd, f.figure.data, f.figure.layout, CFG).then(() => {
      if (!f.steps) return null;
      gd.dataset.steps = '1';
      gd.on('plotly_click', (ev) => {
        const p = ev && ev.points && ev.points[0];
        if (!p || p.x === undefined) return;
        fig.selected = 'step:' + D.round + ':' + p.x;
        outlineSteps();
        figureReport(fig.selected);
      });
      return outlineStep(gd);
    });
  }
  // the first figure at once (what the tab is opened for), each other one a frame later
  function drawFigures(D) {
    fig.gds.forEach((gd) => Plotly.purge(gd));
    const root = document.getElementById('root'), todo = [];
    root.replaceChildren();
    fig.D = D;
    fig.gds = [];
    D.rows.forEach((row) => {
      const r = document.createElement('div');
      r.className = 'figrow';
      row.forEach((f) => {
        const gd = document.createElement('div');
        gd.className = 'fig';
        r.append(gd);
        fig.gds.push(gd);
        todo.push([gd, f]);
      });
      root.append(r);
    });
    const next = (k) => (k >= todo.length ? Promise.resolve()
      : drawOne(todo[k][0], todo[k][1], D).then(() => new Promise((r) => setTimeout(r, 0))).then(() => next(k + 1)));
    return next(0).then(() => { document.body.dataset.ready = '1'; });
  }
  function figureArgs(a) {
    if (a.height && a.height !== height) {
      height = a.height;
      send('streamlit:setFrameHeight', {height: height});
    }
    const sel = a.selected || null;
    if (a.url === fig.url) {
      if (sel !== fig.selected) { fig.selected = sel; if (fig.D) outlineSteps(); }
      return;
    }
    if (!fig.D) document.getElementById('root').innerHTML = '<p class="muted">Drawing the figures…</p>';
    fig.url = a.url;
    fig.selected = sel;
    const token = ++fig.token;
    const data = fetch(a.url).then((r) => r.json());
    const ready = Promise.race([whenShown(), preloadTurn()]).then(plotlyJs);
    Promise.all([data, ready]).then(([D]) => whenShown().then(() => {
      if (token === fig.token) return drawFigures(D);
    })).catch((e) => {
      document.getElementById('root').textContent = 'The figures could not be loaded: ' + e;
    });
  }
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (!m || m.type !== 'streamlit:render') return;
    const a = m.args || {};
    if (a.mode === 'figure') { figureArgs(a); return; }
    latest = a;
    if (a.height && a.height !== height) {
      height = a.height;
      document.documentElement.style.setProperty('--h', height + 'px');
      send('streamlit:setFrameHeight', {height: height + 4});
    }
    if (a.url !== url) { url = a.url; load(a); } else if (!loading) apply(a);
  });
  send('streamlit:componentReady', {apiVersion: 1});
})();
