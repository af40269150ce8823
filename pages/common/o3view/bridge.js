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
  const whenShown = () => new Promise((r) => {
    const check = () => (shown() ? r() : setTimeout(check, 100));
    check();
  });
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
      loading = false;
      document.body.dataset.url = a.url;
      apply(latest);
      warm(a.warm);
    }).catch((e) => {
      loading = false;
      document.getElementById('root').textContent = 'The view could not be loaded: ' + e;
    });
  }
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (!m || m.type !== 'streamlit:render') return;
    const a = m.args || {};
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
