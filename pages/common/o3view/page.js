// What Inspect's two in-page components (map.js, figures.js) share, besides plotly.js (plotly.js,
// before this file): the reader's last input, the page's heavy loads held back until a pause, closed tabs kept
// laid out, and the page's URL kept in step. ``O3`` (written by pages/common/trace_view.py before
// this file) names plotly.js's URL, the Streamlit bundles to warm and the Streamlit page internals
// read here (``O3.st``: STREAMLIT_INTERNALS, each checked against the installed Streamlit by
// tests/app/test_view_streamlit_internals.py). Nothing here listens for messages: the components
// hear only Streamlit, through the data it gives their default export.
const W = window;
const ORIGIN = W.location.origin;
const PANEL = '[data-testid="' + O3.st.tab_panel + '"]';
const TABS = '[data-testid="' + O3.st.tabs + '"]';
const INACTIVE = O3.st.inactive_panel;
const OURS = '.o3v';  // the root of each of our views (the map, a tab's figures)

// the page's URL follows a selection ({id, episode}; an episode left out leaves the URL's as it is)
function syncUrl(s) {
  const u = new URL(W.location.href);
  if (s.id) u.searchParams.set('node', s.id); else u.searchParams.delete('node');
  if (s.episode !== null && s.episode !== undefined) u.searchParams.set('episode', String(s.episode));
  else if (s.episode === null) u.searchParams.delete('episode');
  if (u.toString() !== W.location.href) W.history.replaceState(W.history.state, '', u.toString());
}

// The reader's last click, key or wheel, once per page: the page's heavy loads wait for a pause
// (loading plotly.js or a bundle holds the page's thread for a few hundred ms, which a click
// meanwhile would wait for).
const QUIET_MS = 600;
function markInput() { W.__o3vizInput = Date.now(); }
if (!W.__o3vizInputHook) {
  W.__o3vizInputHook = true;
  ['pointerdown', 'keydown', 'wheel'].forEach((t) => W.addEventListener(t, markInput, true));
}
const lastInput = () => W.__o3vizInput || 0;
const mapDrawn = () => W.__o3vizMapDrawn || 0;  // when the map was drawn (ms since the epoch), 0 before
// at least ``after`` ms after the map was drawn, QUIET_MS after the reader's last input, and when
// the browser is idle (checked again then: the reader may have clicked meanwhile)
const idleAfterMap = (after = 0) => new Promise((r) => {
  const t0 = Date.now();
  const check = () => {
    if (!mapDrawn() && Date.now() - t0 < 8000) { setTimeout(check, 100); return; }
    const wait = Math.max(QUIET_MS - (Date.now() - Math.max(lastInput(), mapDrawn())),
      after - (Date.now() - mapDrawn()));
    if (wait > 0) { setTimeout(check, wait + 20); return; }
    if (!W.requestIdleCallback) { r(); return; }
    W.requestIdleCallback(() => (Date.now() - lastInput() < QUIET_MS ? check() : r()), {timeout: 2000});
  };
  check();
});

// A closed tab's panel is display:none in Streamlit, so a view in it has no size and plotly cannot
// draw there; the switch to the tab then waited for the drawing. The closed panels that hold one of
// our views are laid out at their full width but zero height and unseen instead (once per page),
// so a closed tab's figures are drawn before the reader opens it, and the map is not resized when
// its tab closes and opens again.
if (!document.getElementById('o3viz-kept')) {
  const st = document.createElement('style');
  st.id = 'o3viz-kept';
  st.textContent = PANEL + '[' + INACTIVE + ']:has(' + OURS + ') {' +
    ' display: block !important; height: 0 !important; min-height: 0 !important;' +
    ' overflow: hidden !important; visibility: hidden !important; padding: 0 !important;' +
    ' margin: 0 !important; border: 0 !important; }';
  document.head.append(st);
}
// laid out: the view has a size to draw at; shown: the reader can see it (its tab is open)
const laidOut = (el) => el.isConnected && el.getClientRects().length > 0;
const shown = (el) => laidOut(el) && (el.checkVisibility ? el.checkVisibility({visibilityProperty: true}) : true);
// resolves once ``test(el)`` holds: checked when el is resized (a display:none panel shown), when
// its tab panel's attributes change (a laid-out panel opened), and every 100 ms
const when = (el, test) => new Promise((r) => {
  if (test(el)) { r(); return; }
  const ro = W.ResizeObserver ? new ResizeObserver(() => check()) : null;
  const panel = el.closest(PANEL), mo = panel ? new MutationObserver(() => check()) : null;
  const poll = setInterval(() => check(), 100);
  function check() {
    if (!test(el)) return;
    clearInterval(poll);
    if (ro) ro.disconnect();
    if (mo) mo.disconnect();
    r();
  }
  if (ro) ro.observe(el);
  if (mo) mo.observe(panel, {attributes: true});
});
const whenShown = (el) => when(el, shown);
const whenLaidOut = (el) => when(el, laidOut);

// Inspect's other tabs draw with Streamlit's own widgets and plotly chart, whose bundles the page
// loads only when one first appears: the first switch to the Attention tab waited ~1.5 s for its
// widgets. Once the map is drawn and the reader pauses, the page imports the widgets' (``O3.warm``:
// the URLs Streamlit imports, so each module is evaluated once), once per page. The chart's bundle
// (``O3.chart``: 4.7 MB, plotly.js inside) holds the page's thread for 0.7-1 s while it is
// evaluated: loaded in a pause, it landed on the reader's next click. It is imported when the reader
// presses a tab whose panel holds none of our views (one drawn by the server with Streamlit's
// chart), so it loads while that tab's run is on the server. Each bundle is a file name written by
// the server (``Name.hash.js``), beside the page's main script, on this origin.
const WARM_MS = 1000;
const BUNDLE = /^[A-Za-z0-9]+\.[A-Za-z0-9_-]+\.js$/;
function bundles(names, main) {
  return names.filter((n) => BUNDLE.test(n)).map((n) => new URL(n, main.src))
    .filter((u) => u.origin === ORIGIN).map((u) => u.toString());
}
function chartOnPress(src) {
  const go = (e) => {
    const t = e.target && e.target.closest && e.target.closest('[role="tab"]');
    if (!t || W.__o3vizChartAt) return;
    // a closed tab's panel has no id: it is the one at the tab's place in its tab block
    const box = t.closest(TABS), mine = (x) => x.closest(TABS) === box;
    const k = box ? [...box.querySelectorAll('[role="tab"]')].filter(mine).indexOf(t) : -1;
    const p = document.getElementById(t.getAttribute('aria-controls') || '') ||
      (box ? [...box.querySelectorAll(PANEL)].filter(mine)[k] : null);
    if (p && p.querySelector(OURS)) return;
    W.__o3vizChartAt = Date.now();
    import(src).catch(() => {});
  };
  ['pointerdown', 'keydown'].forEach((k) => W.addEventListener(k, go, true));
}
function warm() {
  if (W.__o3vizWarm) return;
  const main = document.querySelector('script[src*="' + O3.st.main_script + '"]');
  if (!main) return;
  W.__o3vizWarm = true;
  const srcs = bundles(O3.warm, main), chart = bundles(O3.chart ? [O3.chart] : [], main)[0];
  if (chart) chartOnPress(chart);
  if (!srcs.length) return;
  // not while the reader is clicking: a click (Next ▶ right after an episode opened) waited for
  // the page's thread
  idleAfterMap(WARM_MS).then(() => {
    W.__o3vizWarmAt = Date.now();
    Promise.all(srcs.map((u) => import(u))).catch(() => {});
  });
}

// the closed tabs' figures take their turn, one after another, each when the browser is idle
function preloadTurn() {
  const mine = (W.__o3vizPreload || Promise.resolve()).then(() => idleAfterMap()).then(plotlyJs).catch(() => {});
  W.__o3vizPreload = mine;
  return mine;
}

// one state per mounted view: Streamlit calls the default export again, on the same element,
// whenever the server sends new data, and the view lives on between those calls
function stateOf(parent, make) {
  if (!parent.__o3) parent.__o3 = make();
  return parent.__o3;
}
// Streamlit runs the cleanup a call returns at unmount, but also, at once, for a call whose data
// was replaced while the module loaded: only a view whose element has left the page is closed.
function unmount(parent, s) {
  if (parent.isConnected) return;
  s.close();
  delete parent.__o3;
}
