// Inspect's view component: speaks Streamlit's component protocol (postMessage, API version 1) and
// hosts the shared trace view (view.js). The view's data is fetched once from ``args.url`` (a file
// named by its content hash); a click, Prev/Next or an episode is answered here, the page's URL is
// kept in step (the frame is same-origin), and the selection is reported to the server only so its
// panels (branch, labels) know it. The server moves the selection itself (search, the first wrong
// step, a link) by raising ``args.push.n``.
// Only Streamlit may talk to it: a message counts only when it comes from the page this frame is in
// and that page is of this frame's origin (another frame of the page, or a site that framed this
// one, is ignored), and nothing in a message becomes script: the bundles the page is asked to load
// are named by this frame's own page (``o3-warm``, ``o3-chart``, written by the server).
(function () {
  const ORIGIN = window.location.origin;
  const send = (type, data) => window.parent.postMessage(Object.assign({isStreamlitMessage: true, type: type}, data), ORIGIN);
  let view = null, url = null, pushed = null, latest = null, loading = false, height = 0, seq = 0;

  // the page's URL follows a selection ({id, episode}; an episode left out leaves the URL's as it is)
  function syncUrl(s) {
    try {
      const w = window.parent, u = new URL(w.location.href);
      if (s.id) u.searchParams.set('node', s.id); else u.searchParams.delete('node');
      if (s.episode !== null && s.episode !== undefined) u.searchParams.set('episode', String(s.episode));
      else if (s.episode === null) u.searchParams.delete('episode');
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
    sendValue({id: s.id, episode: s.episode});
  }
  // what the server hears of a selection (numbered, so the same one reported twice is news)
  function sendValue(v) {
    seq += 1;
    document.body.dataset.reported = String(seq);
    send('streamlit:setComponentValue', {value: Object.assign({seq: seq}, v), dataType: 'json'});
  }
  function report(s) {
    // the view's answer counts as the reader's latest action: the page's heavy loads wait for a
    // pause after the reader has seen it (an episode takes ~1 s to draw at 2,000 steps, and a
    // reader clicks Next ▶ as soon as it shows)
    requestAnimationFrame(() => setTimeout(markInput, 0));
    syncUrl(s);
    pending = s;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(flush, REPORT_MS);
  }
  // Inspect's other tabs draw with Streamlit's own widgets and plotly chart, whose bundles the
  // page loads only when one first appears: the first switch to the Attention tab waited ~1.5 s
  // for its widgets. Once the map is drawn and the reader pauses, the page imports the widgets'
  // (``o3-warm``: the URLs Streamlit imports, so each module is evaluated once), once per page. The
  // chart's bundle (``o3-chart``: 4.7 MB, plotly.js inside) holds the page's thread for 0.7-1 s
  // while it is evaluated: loaded in a pause, it landed on the reader's next click. It is imported
  // when the reader presses a tab whose panel holds none of these frames (one drawn by the server
  // with Streamlit's chart), so it loads while that tab's run is on the server.
  // The bundles are named in this frame's own page; each is a URL beside the page's main script: a
  // file name (``Name.hash.js``) and nothing else, on this origin.
  const BUNDLE = /^[A-Za-z0-9]+\.[A-Za-z0-9_-]+\.js$/;
  function bundles(meta, main) {
    const m = document.querySelector('meta[name="' + meta + '"]');
    return (m ? m.content : '').split(/\s+/).filter((n) => BUNDLE.test(n))
      .map((n) => new URL(n, main.src)).filter((u) => u.origin === ORIGIN).map((u) => u.toString());
  }
  function warm() {
    try {
      const w = window.parent, d = w.document;
      if (w.__o3vizWarm) return;
      const main = d.querySelector('script[src*="/static/js/index."]');
      if (!main) return;
      w.__o3vizWarm = true;
      const srcs = bundles('o3-warm', main), chart = bundles('o3-chart', main)[0];
      if (chart) {  // the page's own listener (a frame's would die with it)
        const s = d.createElement('script');
        s.textContent = '(' + chartOnPress.toString() + ')(' + JSON.stringify(chart) + ');';
        d.head.append(s);
      }
      if (!srcs.length) return;
      const go = () => {
        const s = d.createElement('script');
        s.type = 'module';
        s.textContent = 'Promise.all(' + JSON.stringify(srcs) + '.map((u) => import(u))).catch(() => {});';
        d.head.append(s);
      };
      // not while the reader is clicking: a click (Next ▶ right after an episode opened) waited
      // for the page's thread
      idleAfterMap(WARM_MS).then(() => { w.__o3vizWarmAt = Date.now(); go(); });
    } catch (e) { /* another origin: Streamlit loads its bundles when it needs them */ }
  }
  const WARM_MS = 1000;
  // Run in the page (its source is injected there): imports ``src`` when the reader first presses a
  // tab whose panel holds no view frame.
  function chartOnPress(src) {
    const TABS = '[data-testid="stTabs"]';
    const go = (e) => {
      const t = e.target && e.target.closest && e.target.closest('[role="tab"]');
      if (!t || window.__o3vizChartAt) return;
      // a closed tab's panel has no id: it is the one at the tab's place in its tab block
      const box = t.closest(TABS), mine = (x) => x.closest(TABS) === box;
      const k = box ? [...box.querySelectorAll('[role="tab"]')].filter(mine).indexOf(t) : -1;
      const p = document.getElementById(t.getAttribute('aria-controls') || '') ||
        (box ? [...box.querySelectorAll('[data-testid="stTabPanel"]')].filter(mine)[k] : null);
      if (p && p.querySelector('iframe[src*="o3view"], iframe[src*="o3fig"]')) return;
      window.__o3vizChartAt = Date.now();
      import(src).catch(() => {});
    };
    ['pointerdown', 'keydown'].forEach((k) => window.addEventListener(k, go, true));
  }
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
  // A closed tab's panel is display:none in Streamlit, so a frame in it has no size and plotly
  // cannot draw there; the switch to the tab then waited for the drawing. In the page, the closed
  // panels that hold one of these frames are laid out at their full width but zero height and
  // unseen instead (the CSS below, once per page), so a closed tab's figures are drawn before the
  // reader opens it, and the map's frame is not resized when its tab closes and opens again.
  const PANEL = '[data-testid="stTabPanel"]';
  function keepLaidOut() {
    try {
      const d = window.parent.document;
      if (d.getElementById('o3viz-kept')) return;
      const st = d.createElement('style');
      st.id = 'o3viz-kept';
      st.textContent = PANEL + '[data-st-inactive]:has(iframe[src*="o3view"], iframe[src*="o3fig"]) {' +
        ' display: block !important; height: 0 !important; min-height: 0 !important;' +
        ' overflow: hidden !important; visibility: hidden !important; padding: 0 !important;' +
        ' margin: 0 !important; border: 0 !important; }';
      d.head.append(st);
    } catch (e) { /* another origin: closed tabs draw when opened */ }
  }
  keepLaidOut();
  // shown: the reader can see the frame (its tab is open); laid out: it has a size to draw at
  function laidOut() {
    const f = window.frameElement;
    return !f || f.getClientRects().length > 0;
  }
  function shown() {
    const f = window.frameElement;
    if (!f || !laidOut()) return !f;
    return f.checkVisibility ? f.checkVisibility({visibilityProperty: true}) : true;
  }
  // resolves once ``test()`` holds: checked when the frame is resized (a display:none panel
  // shown), when its tab panel's attributes change (a laid-out panel opened), and every 100 ms
  const when = (test) => new Promise((r) => {
    if (test()) { r(); return; }
    let mo = null;
    const check = () => {
      if (!test()) return;
      window.removeEventListener('resize', check);
      clearInterval(poll);
      if (mo) mo.disconnect();
      r();
    };
    window.addEventListener('resize', check);
    const poll = setInterval(check, 100);
    try {
      const panel = window.frameElement && window.frameElement.closest(PANEL);
      if (panel) {
        mo = new MutationObserver(check);
        mo.observe(panel, {attributes: true});
      }
    } catch (e) { /* another origin */ }
  });
  const whenShown = () => when(shown);
  const whenLaidOut = () => when(laidOut);
  // A frame in a closed tab (the figure mode) loads plotly.js once the map is drawn and the
  // browser is idle (or at once if its tab is shown first), so the map's first paint never waits
  // for it and the switch to its tab only draws.
  function mapDrawn() {  // when the map was drawn (ms since the epoch), 0 before
    try { return window.parent.__o3vizMapDrawn || 0; } catch (e) { return 1; }
  }
  // ... and only once the reader has not clicked, typed or scrolled for QUIET_MS since the map
  // was drawn: loading plotly.js takes the page's thread for a few hundred ms, which a click
  // meanwhile would wait for. A reader's first clicks right after the map shows come first.
  const QUIET_MS = 600;
  function lastInput() {
    try { return window.parent.__o3vizInput || 0; } catch (e) { return 0; }
  }
  function markInput() { try { window.parent.__o3vizInput = Date.now(); } catch (e) { /* another origin */ } }
  function watchInput() {
    ['pointerdown', 'keydown', 'wheel'].forEach((t) => window.addEventListener(t, markInput, true));
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
  // at least ``after`` ms after the map was drawn, QUIET_MS after the reader's last input, and
  // when the browser is idle (checked again then: the reader may have clicked meanwhile)
  const idleAfterMap = (after = 0) => new Promise((r) => {
    const t0 = Date.now();
    const check = () => {
      if (!mapDrawn() && Date.now() - t0 < 8000) { setTimeout(check, 100); return; }
      const wait = Math.max(QUIET_MS - (Date.now() - Math.max(lastInput(), mapDrawn())),
        after - (Date.now() - mapDrawn()));
      if (wait > 0) { setTimeout(check, wait + 20); return; }
      if (!window.requestIdleCallback) { r(); return; }
      window.requestIdleCallback(() => (Date.now() - lastInput() < QUIET_MS ? check() : r()), {timeout: 2000});
    };
    check();
  });
  // the closed tabs' frames take their turn, one after another, each when the browser is idle
  function preloadTurn() {
    let w = window;
    try { w = window.parent; void w.document; } catch (e) { w = window; }
    const mine = (w.__o3vizPreload || Promise.resolve()).then(idleAfterMap).then(plotlyJs).then(warmPlot)
      .catch(() => {});
    w.__o3vizPreload = mine;
    return mine;
  }
  // plotly's first plot in a page sets up what every later one reuses (about 0.3 s here): done
  // off screen once plotly.js is loaded, so the tab's first figure only draws
  function warmPlot() {
    const d = document.createElement('div');
    d.style.cssText = 'position:absolute;left:-10000px;top:0;width:240px;height:160px';
    document.body.append(d);
    return Plotly.newPlot(d, [{type: 'heatmap', z: [[0, 1], [1, 0]], x: ['0', '1'], y: ['a', 'b'],
      hovertemplate: '%{z}<extra></extra>', colorbar: {thickness: 12}}],
    {width: 240, height: 160, shapes: [{type: 'rect', x0: 0, x1: 1, y0: 0, y1: 1}]},
    {displaylogo: false}).then(() => { Plotly.purge(d); d.remove(); });
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
      try { window.parent.__o3vizMapDrawn = Date.now(); } catch (e) { /* another origin */ }
      loading = false;
      document.body.dataset.url = a.url;
      apply(latest);
      warm();
    }).catch((e) => {
      loading = false;
      document.getElementById('root').textContent = 'The view could not be loaded: ' + e;
    });
  }
  // The figure mode: one Inspect tab's figures (o3viz.app.figure_view_data), in rows, in a frame
  // that stays in the page while the tab is closed. On figures whose x axis is the round's steps,
  // the selected step is outlined, as the map rings it, and a click on a column selects that step.
  const fig = {url: null, D: null, gds: [], selected: null, token: 0, io: null};
  const CFG = {displaylogo: false, responsive: true};
  function stepShapes(t) {  // the selected step's column outlined, on a figure whose x axis is steps
    const m = /^step:(\d+):(\d+)$/.exec(fig.selected || '');
    const i = m && t && t.x && Number(m[1]) === fig.D.round ? Array.from(t.x).map(String).indexOf(m[2]) : -1;
    const rows = t && t.y ? t.y.length : 0;
    return i < 0 ? [] : [['white', 6], [fig.D.select, 2]].map(([color, width]) => ({
      type: 'rect', xref: 'x', yref: 'y', x0: i - 0.5, x1: i + 0.5, y0: -0.5, y1: rows - 0.5,
      line: {color: color, width: width}}));
  }
  const outlineStep = (gd) => Plotly.relayout(gd, {shapes: stepShapes(gd.data && gd.data[0])});
  const outlineSteps = () => Promise.all(fig.gds.filter((gd) => gd.dataset.steps).map(outlineStep));
  function figureReport(id) {
    syncUrl({id: id});
    sendValue({id: id});
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
        fig.selected = 'step:' + D.round + ':' + p.x;
        outlineSteps();
        figureReport(fig.selected);
      });
      return null;
    });
  }
  // resolves when the frame comes within 200 px of the page's viewport (a frame below the fold
  // loads plotly.js when the reader scrolls to it, unless its preload turn came first)
  const nearViewport = () => new Promise((r) => {
    if (!window.IntersectionObserver) { r(); return; }
    const io = new IntersectionObserver((es) => {
      if (es.some((e) => e.isIntersecting)) { io.disconnect(); r(); }
    }, {rootMargin: '200px'});
    io.observe(document.documentElement);
  });
  // A figure is drawn when it comes near the page's viewport, one at a time: the tab's first
  // figure at once, those below the fold when the reader scrolls to them, so that switching to the
  // tab and back never waits for figures nobody has looked at yet.
  function drawFigures(D) {
    fig.gds.forEach((gd) => Plotly.purge(gd));
    if (fig.io) fig.io.disconnect();
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
        gd.style.minHeight = (f.figure.layout.height || 450) + 'px';
        r.append(gd);
        fig.gds.push(gd);
        todo.push(f);
      });
      root.append(r);
    });
    let chain = Promise.resolve();
    const queue = (gd) => {
      const k = fig.gds.indexOf(gd);
      if (k < 0 || gd.dataset.queued) return;
      gd.dataset.queued = '1';
      chain = chain.then(() => drawOne(gd, todo[k], D)).then(() => {
        document.body.dataset.ready = '1';
        document.body.dataset.drawn = String(Number(document.body.dataset.drawn || 0) + 1);
        return new Promise((r) => setTimeout(r, 0));
      });
    };
    // those on the page's screen now are drawn at once; the others when they come near it (in a
    // closed tab, laid out unseen: its first row, where the tab opens)
    const first = new Set(root.firstChild ? root.firstChild.children : []);
    const onScreen = (gd) => {
      if (!shown()) return first.has(gd);
      try {
        const f = window.frameElement.getBoundingClientRect(), r = gd.getBoundingClientRect();
        return f.top + r.top < window.parent.innerHeight && f.top + r.bottom > 0;
      } catch (e) { return true; }
    };
    const later = fig.gds.filter((gd) => !onScreen(gd));
    fig.gds.filter(onScreen).forEach(queue);
    if (!window.IntersectionObserver) { later.forEach(queue); return chain; }
    fig.io = new IntersectionObserver((entries) => entries.forEach((e) => {
      if (!e.isIntersecting) return;
      fig.io.unobserve(e.target);
      queue(e.target);
    }), {rootMargin: '200px'});
    later.forEach((gd) => fig.io.observe(gd));
    return chain;
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
    // the tab's first figures load plotly.js in their turn while the tab is closed; figures
    // below its fold (a.preload false) only when the reader scrolls to them
    const turn = a.preload ? preloadTurn() : new Promise(() => {});
    const ready = Promise.race([whenShown().then(nearViewport), turn]).then(plotlyJs);
    // drawn when the tab opens, or before, unseen, once its preload turn came (a laid-out panel)
    const drawable = Promise.race([whenShown(), turn.then(whenLaidOut)]);
    Promise.all([data, ready]).then(([D]) => drawable.then(() => {
      if (token === fig.token) return drawFigures(D);
    })).catch((e) => {
      document.getElementById('root').textContent = 'The figures could not be loaded: ' + e;
    });
  }
  window.addEventListener('message', (e) => {
    if (e.source !== window.parent || e.origin !== ORIGIN) return;  // Streamlit's page only
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
