"""The live view: an anywidget that embeds the trace view's page (``o3viz.view.page``, as
``o3viz.notebook.page`` writes it for a notebook) and keeps its selection in Python as
``view.selected`` (set it to move the selection; clicks set it back). Its display also carries the
static HTML, so nbconvert and GitHub's preview show the view too."""

from __future__ import annotations

import anywidget
import traitlets

from o3viz.notebook.page import iframe_html, notebook_page
from o3viz.view import page_html

ESM = r"""
function render({ model, el }) {
  const f = document.createElement('iframe');
  f.className = 'o3viz-view';
  f.style.cssText = 'width:100%;border:1px solid #e2e8f0;border-radius:4px;height:' + model.get('height') + 'px';
  f.srcdoc = model.get('page');
  el.appendChild(f);
  const push = () => f.contentWindow && f.contentWindow.postMessage({o3viz: 'select', id: model.get('selected')}, '*');
  const onMessage = (e) => {
    const m = e.data;
    if (e.source === f.contentWindow && m && m.o3viz === 'select') { model.set('selected', m.id); model.save_changes(); }
  };
  window.addEventListener('message', onMessage);
  model.on('change:selected', push);
  f.addEventListener('load', push);
  return () => { window.removeEventListener('message', onMessage); model.off('change:selected', push); };
}
export default { render };
"""


class TraceView(anywidget.AnyWidget):
    """One trace (or a pair) shown live; ``selected`` is the node id picked on either side."""

    _esm = traitlets.Unicode(ESM).tag(sync=True)
    page = traitlets.Unicode("").tag(sync=True)  # the HTML page (set when first displayed)
    height = traitlets.Int(620).tag(sync=True)
    selected = traitlets.Unicode(None, allow_none=True).tag(sync=True)

    def __init__(self, data: dict, height: int, selected: str | None, standalone: bool = False):
        super().__init__(page="", height=height, selected=selected)
        self._data, self._standalone, self._fallback = data, standalone, ""

    def _repr_mimebundle_(self, **kwargs):
        if not self.page:  # decided when first displayed: the kernel's first view carries plotly.js
            page = notebook_page(self._data, self._standalone)
            self.page, self._fallback = page, iframe_html(page, self.height)
        bundle = super()._repr_mimebundle_(**kwargs)
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = {**(data or {}), "text/html": self._fallback}
        return data, meta

    def html(self) -> str:
        """The self-contained page (what ``save_view`` writes), plotly.js inlined."""
        return page_html(self._data)
