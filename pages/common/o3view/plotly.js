// plotly.js, loaded once per page by one script tag in its head, for every view and every rerun
// (the app's static file, ``O3.plotly``: the browser keeps it and its compiled code between loads).
// This file opens each of Inspect's component modules (map.js, figures.js). (Started by a component
// of the router's instead, the load began no sooner: Streamlit mounts every component of a run's
// first page in one commit, after the page's other elements are drawn.)

// a User Timing mark, once per page (``python -m benchmarks ui`` reads where the first map's time goes)
const mark = (name) => {
  if (window.performance && !performance.getEntriesByName(name).length) performance.mark(name);
};

function plotlyJs() {
  if (window.Plotly) return Promise.resolve();
  if (!window.__o3vizPlotly) {
    window.__o3vizPlotly = new Promise((r, fail) => {
      const s = document.createElement('script');
      s.id = 'o3viz-plotly';
      s.src = new URL(O3.plotly, document.baseURI).toString();
      s.onload = () => { mark('o3viz:plotly'); r(); };
      s.onerror = () => { window.__o3vizPlotly = null; fail(new Error('plotly.js did not load from ' + s.src)); };
      document.head.append(s);
    });
  }
  return window.__o3vizPlotly;
}
