"""The trace view as one self-contained HTML page: plotly.js inlined from the installed plotly
package (nothing loads from the network), the view's data as JSON (``o3viz.view.data``), and the
view's script (``static/view.js``, shared with Inspect's component) and styles, which lay out the
outline, the map and the details panel and keep one selection among them.

A page can also be written ``shared``: without plotly.js, carrying only ``SHARED_PLOTLY``, a loader
that finds the copy another view on the same notebook page carries (in a
``<script id="o3-plotly">``, ``PLOTLY_MARK``) and runs it in its own frame; a shared page that
finds none says so instead of drawing. Which page a notebook output gets is the notebook's choice
(``o3viz.notebook.page``). Every kind of view writes its page through a ``PageRenderer``
(``page_html``, and ``o3viz.view.paired.paired_page`` for the paired comparison).

The page talks to whatever embeds it through ``postMessage``: it posts ``{o3viz: "select", id}``
when the user picks a node and selects a node it is sent the same message for (the notebook's
widget keeps ``view.selected`` in Python that way). Text from the trace is only ever set as
``textContent``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Protocol

from plotly.offline import get_plotlyjs

from o3viz.figures import VERDICT_COLORS

# view.js and view.css, shared with Inspect's component (pages/common/o3view; o3viz.app.VIEW_STATIC)
STATIC = Path(__file__).parent / "static"
CSS = (STATIC / "view.css").read_text(encoding="utf-8")
VIEW_JS = (STATIC / "view.js").read_text(encoding="utf-8")  # defines window.o3view(D, opts)
SCRIPT = (
    VIEW_JS
    + """
(function () {
  const D = JSON.parse(document.getElementById('o3-data').textContent);
  const view = window.o3view(D, {onChange: (s) => {
    if (window.parent !== window && s.id !== null) window.parent.postMessage({o3viz: 'select', id: s.id}, '*');
  }});
  window.addEventListener('message', (e) => {
    const m = e.data;
    if (m && m.o3viz === 'select' && typeof m.id === 'string' && m.id !== view.state().id && D.nodes[m.id])
      view.select(m.id);
  });
})();
"""
)

_TRACE_BODY = """<header><div class="q"></div><div class="ans"></div></header><nav></nav>
<section id="tab0" class="panel on"><div class="grid"><div id="outline"></div><div id="map"></div>
<div id="details"></div></div></section>"""

# a long trace's centre: the overview, or an open episode (its bar, the whole-trace strip, the map)
_EPISODE_CENTRE = """<div><div id="overview"></div><div id="epview" style="display:none"><div id="epbar">
<button id="epover">Overview</button><button id="epprev">◀ Prev</button><button id="epnext">Next ▶</button>
<span id="epcap"></span></div><div id="strip"></div><div id="map"></div></div></div>"""

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


PLOTLY_MARK = '<script id="o3-plotly">'  # opens the carried copy of plotly.js

# In a page without plotly.js: find the carried copy in the notebook (its window, or the srcdoc of
# an o3viz view's iframe) and run it here. The mark is built in two parts so this text never
# matches it.
SHARED_PLOTLY = r"""
(function () {
  var src = null, P = window.parent, mark = '<script id="o3-' + 'plotly">', end = '</' + 'script>';
  try {
    if (P && P !== window) {
      src = P.__o3vizPlotlyJs || null;
      var frames = src ? [] : P.document.querySelectorAll('iframe.o3viz-view');
      for (var k = 0; k < frames.length && !src; k++) {
        var doc = frames[k].getAttribute('srcdoc') || '', a = doc.indexOf(mark);
        if (a >= 0) src = doc.slice(a + mark.length, doc.indexOf(end, a));
      }
      if (src) P.__o3vizPlotlyJs = src;
    }
  } catch (e) { src = null; }
  if (src) { var s = document.createElement('script'); s.text = src; document.head.appendChild(s); }
})();
"""

NO_PLOTLY_TEXT = (
    "This view draws with the plotly.js carried by the first o3viz view shown in this kernel, and "
    "that view is not on this page. Show it with o3viz.show(..., standalone=True), or restart the "
    "kernel and run all."
)
NO_PLOTLY = f"""
document.querySelector('.o3').replaceChildren(Object.assign(document.createElement('p'), {{className: 'muted',
  textContent: {json.dumps(NO_PLOTLY_TEXT)}}}));
"""


def plotly_head(shared: bool) -> str:
    """A page's plotly.js: the carried copy (marked ``PLOTLY_MARK``, so the views after can find
    it), or, ``shared``, the loader that borrows it. A shared page checks ``window.Plotly``."""
    return f"<script>{SHARED_PLOTLY}</script>" if shared else f"{PLOTLY_MARK}{get_plotlyjs()}</script>"


class PageRenderer(Protocol):
    """Writes one kind of view as a whole HTML page: with its own plotly.js, or ``shared``, with
    the loader that borrows the notebook's copy (``page_html``, ``paired.paired_page``)."""

    def __call__(self, data: Any, *, shared: bool = False) -> str: ...


def page_html(data: dict, *, shared: bool = False) -> str:
    """The whole view as one HTML page (about 5 MB, most of it plotly.js). ``shared``: the page
    without plotly.js, which borrows the copy the notebook's first view carries (see above)."""
    data = {**data, "colors": VERDICT_COLORS}
    payload = script_json(data)
    if data["kind"] == "trace":
        body = _TRACE_BODY + _tab_panels(len(data["tabs"]))
        if data.get("episodes"):  # a long trace opens on its episodes (the same markup as Inspect's)
            body = body.replace('<div id="map"></div>', _EPISODE_CENTRE, 1)
    else:
        body = _COMPARE_BODY
    head = html.escape(data.get("question", ""))
    body = body.replace('<div class="q"></div>', f'<div class="q" title="{head}">{head}</div>', 1)
    body = body.replace(
        '<div class="ans"></div>', f'<div class="ans">{html.escape(data.get("answer", ""))}</div>', 1
    )
    plotly = plotly_head(shared)
    script = f"if (window.Plotly) {{{SCRIPT}}} else {{{NO_PLOTLY}}}" if shared else SCRIPT
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>o3viz</title>'
        f"<style>{CSS}</style>{plotly}</head>"
        f'<body><div class="o3">{body}</div>'
        f'<script type="application/json" id="o3-data">{payload}</script><script>{script}</script></body></html>'
    )
