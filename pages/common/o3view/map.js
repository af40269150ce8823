// Inspect's map component (after page.js and the view script, makeView): the outline, the
// reasoning map and the details of one trace, drawn in the page by the shared view script
// (view.js). Its data is fetched once per ``data.url`` (a file named by its content hash); a
// click, Prev/Next or an episode is answered here, the page's URL is kept in step, and the
// selection is reported to the server as the state value ``selection`` only so its panels (branch,
// labels) know it. The server moves the selection itself (search, the first wrong step, a link) by
// raising ``data.push.n``.

// The view script's host: it finds its parts with ``document.querySelector`` and marks its state on
// ``document.body.dataset``; here both are this view's root, so two views never meet in the page.
function scopedDocument(root) {
  return {
    querySelector: (s) => root.querySelector(s),
    querySelectorAll: (s) => root.querySelectorAll(s),
    getElementById: (id) => root.querySelector('#' + CSS.escape(id)),
    createElement: (t) => document.createElement(t),
    body: root,
  };
}

function layout(root, D) {
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

function mapView(root) {
  const V = {set: null, view: null, url: null, pushed: null, latest: null, loading: false, seq: 0, timer: null, pending: null};
  // The server hears of a selection only once the reader pauses (QUIET_MS after the last click,
  // key, wheel or answer of the view's), and only of the latest one: each report costs a rerun,
  // and the rerun's redraw of the page (~150 ms at 2,000 steps) shares the view's thread. Reported
  // a fixed 250 ms after a click, it landed on a reader's next click in a run of clicks.
  function sendValue(v) {  // numbered, so the same selection reported twice is news
    V.seq += 1;
    root.dataset.reported = String(V.seq);
    V.set('selection', Object.assign({seq: V.seq}, v));
  }
  function flush() {
    const wait = QUIET_MS - (Date.now() - lastInput());
    if (wait > 0) { V.timer = setTimeout(flush, wait + 20); return; }
    V.timer = null;
    const s = V.pending;
    V.pending = null;
    if (s) sendValue({id: s.id, episode: s.episode});
  }
  function report(s) {
    // the view's answer counts as the reader's latest action: the page's heavy loads wait for a
    // pause after the reader has seen it (an episode takes ~1 s to draw at 2,000 steps, and a
    // reader clicks Next ▶ as soon as it shows)
    markInput();
    requestAnimationFrame(() => setTimeout(markInput, 0));
    syncUrl(s);
    V.pending = s;
    if (V.timer === null) V.timer = setTimeout(flush, QUIET_MS);
  }
  function apply(a) {
    if (!V.view || !a) return;
    const p = a.push || {};
    if (p.n === V.pushed) return;
    V.pushed = p.n;
    const ep = p.episode === null || p.episode === undefined ? null : Number(p.episode);
    const was = V.view.state();
    // (what the view shows already is not selected again: on a first load that redrew the map)
    if (was.id !== (p.id || null)) V.view.select(p.id || null);
    if (!p.id ? was.episode !== ep : V.view.state().episode !== ep && ep !== null) V.view.openEpisode(ep);
    const s = V.view.state();
    // the node opened its episode (the first wrong step on a long trace): tell the server
    if (p.id && s.id === p.id && s.episode !== ep) report(s); else syncUrl(s);
  }
  function load(a) {
    V.loading = true;
    const data = whenShown(root).then(() => fetch(a.url)).then((r) => {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    }).then((D) => { mark('o3viz:data'); return D; });
    Promise.all([data, whenShown(root).then(plotlyJs)]).then(([D]) => {
      const keep = V.view ? V.view.state() : null;
      root.querySelectorAll('.js-plotly-plot').forEach((gd) => Plotly.purge(gd));
      layout(root, D);
      if (keep) { D.selected = keep.id; D.episode = keep.episode; }
      V.view = makeView({}, scopedDocument(root))(D, {onChange: report});
      mark('o3viz:drawn');
      W.__o3vizMapDrawn = Date.now();
      V.loading = false;
      root.dataset.url = a.url;
      apply(V.latest);
      warm();
      tellDrawn();
    }).catch((e) => {
      V.loading = false;
      root.textContent = 'The view could not be loaded: ' + e;
    });
  }
  // Inspect draws its kept Attention tab (hidden) only once the map is drawn: the tab's widgets
  // held the first map back while their bundles loaded. Told once, at once (told in the reader's
  // first pause, a switch to Attention right after reading steps waited 1.4 s for the tab's run),
  // and only where the server does not know it yet (``a.drawn``).
  function tellDrawn() {
    if (V.told || (V.latest && V.latest.drawn !== false)) return;
    V.told = true;
    if (V.set) V.set('drawn', true);
  }
  function onData(a, setStateValue) {
    V.set = setStateValue;  // (each call's own: the newest knows the widget's latest value)
    V.latest = a;
    if (a.height) root.style.setProperty('--h', a.height + 'px');
    if (a.url !== V.url) { V.url = a.url; load(a); } else if (!V.loading) apply(a);
  }
  function close() {
    if (V.timer !== null) clearTimeout(V.timer);
    root.querySelectorAll('.js-plotly-plot').forEach((gd) => W.Plotly && Plotly.purge(gd));
  }
  return {onData, close};
}

export default function (component) {
  const {parentElement, data, setStateValue} = component;
  const s = stateOf(parentElement, () => {
    mark('o3viz:mount');
    const root = document.createElement('div');
    root.className = 'o3v o3 o3v-map';
    root.innerHTML = '<p class="muted">Drawing the map…</p>';
    parentElement.append(root);
    return mapView(root);
  });
  s.onData(data || {}, setStateValue);
  return () => unmount(parentElement, s);
}
