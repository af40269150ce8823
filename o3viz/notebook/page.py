"""The trace view's page in a notebook output. The page itself is ``o3viz.view.page`` (re-exported
here, as it was written here before it moved); this module holds what only a notebook needs.

In a notebook, plotly.js travels once: the first view a kernel displays carries it (in a
``<script id="o3-plotly">``) and the views after it are written ``shared``, with only a loader that
reads that script out of the first view's iframe (``srcdoc`` iframes are same-origin with the
notebook) and runs it in their own frame; the text is kept on the notebook's window
(``__o3vizPlotlyJs``) for the views after. Every kind of view takes part (a trace, a pair, the
paired dataset comparison of ``o3viz.notebook.paired``): each is a ``PageRenderer`` that writes its
page with or without the copy, and ``notebook_page`` decides which. A saved page (``save_view``)
always carries its own copy.
"""

from __future__ import annotations

import html
from typing import Any

from o3viz.view.page import (
    CSS,
    NO_PLOTLY,
    NO_PLOTLY_TEXT,
    PLOTLY_MARK,
    SCRIPT,
    SHARED_PLOTLY,
    STATIC,
    VIEW_JS,
    PageRenderer,
    page_html,
    plotly_head,
    script_json,
)

__all__ = [
    "CSS",
    "NO_PLOTLY",
    "NO_PLOTLY_TEXT",
    "PLOTLY_MARK",
    "SCRIPT",
    "SHARED_PLOTLY",
    "STATIC",
    "VIEW_JS",
    "PageRenderer",
    "iframe_html",
    "notebook_page",
    "page_html",
    "plotly_head",
    "reset_shared_plotly",
    "script_json",
]

_CARRIED = [False]  # whether a view this kernel displayed carries plotly.js


def reset_shared_plotly() -> None:
    """Make the next view displayed carry plotly.js again (after clearing the notebook's outputs)."""
    _CARRIED[0] = False


def notebook_page(data: Any, standalone: bool = False, render: PageRenderer = page_html) -> str:
    """The page a notebook output holds, written by ``render`` (a trace's ``page_html`` unless
    told): the whole page for the first view this kernel displays, whatever its kind (or a
    ``standalone`` one), then pages that borrow its plotly.js."""
    if standalone or not _CARRIED[0]:
        _CARRIED[0] = True
        return render(data)
    return render(data, shared=True)


def iframe_html(page: str, height: int) -> str:
    """``page`` in an iframe (``srcdoc``), the form a notebook's HTML output keeps it in: its script
    and styles stay apart from the notebook's, and it works where widgets don't (nbconvert)."""
    return (
        f'<iframe class="o3viz-view" srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{height}px;border:1px solid #e2e8f0;border-radius:4px"></iframe>'
    )
