"""UI speed and payload: build the Inspect figures and render the Inspect page through AppTest
for synthetic traces of 200 and 2,000 steps; print times, their ratio and the page payload.

The traces come from ``o3viz.testing.synthetic`` (about 5.7 tokens per step, attention on every token).
"First render" is the first AppTest run of the Inspect page with the trace in the session's
library: the outline, the reasoning map, the details panel and the rest of the default tab. Each other
tab is then timed on its own (tabs render lazily). Payload is the sum of the serialized element
protos the page sends to the browser. This module imports streamlit only inside ``run``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

TABS = ("Attention", "Compression", "Verification", "Tokens")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--steps",
        type=int,
        nargs=2,
        default=[200, 2000],
        metavar=("SMALL", "LARGE"),
        help="step counts of the two synthetic traces (default 200 2000)",
    )


def _figures(trace) -> float:
    """Seconds to build what the Inspect page builds on first view, outside streamlit."""
    from o3viz.analysis.graph import build_graph
    from o3viz.analysis.outline import build_outline
    from o3viz.figures import (
        checks_figure,
        layer_head_heatmap,
        outline_items,
        reasoning_map_figure,
        relevance_figure,
        step_attention_heatmap,
        token_heatmap,
        tokens_html,
    )

    t0 = time.perf_counter()
    build_graph(trace)  # the details panel's graph
    outline = build_outline(trace)
    reasoning_map_figure(outline).to_json()
    outline_items(outline)
    rnd = trace.final
    for fig in (
        step_attention_heatmap(rnd),
        token_heatmap(rnd, 0, 64),
        layer_head_heatmap(rnd, 0, 8),
        relevance_figure(rnd, 0, 64),
        checks_figure(trace),
    ):
        fig.to_json()
    tokens_html(rnd)
    return time.perf_counter() - t0


def _payload(at) -> int:
    """Bytes of every element proto on the page (what the browser receives, before compression)."""
    total, stack = 0, [at._tree]
    while stack:
        node = stack.pop()
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ByteSize"):
            total += proto.ByteSize()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    return total


def _render(trace) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    from o3viz.app.library import LibraryEntry

    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=300)
    key = f"bench-{len(trace.steps)}"  # distinct per trace: the app caches graphs by this key
    at.session_state["library"] = {key: LibraryEntry(key, key, "sample", trace)}
    at.session_state["samples_loaded"] = True
    at.session_state["inspect_key"] = key
    at.run()  # the library page (not timed)
    at.switch_page("pages/inspect.py")
    t0 = time.perf_counter()
    at.run()
    out = {"first": time.perf_counter() - t0, "payload": _payload(at)}
    if at.exception:
        raise RuntimeError(f"Inspect raised: {at.exception[0].value}")
    for tab in TABS:
        at.session_state["inspect_view"] = tab
        t0 = time.perf_counter()
        at.run()
        out[tab] = time.perf_counter() - t0
        out[f"payload_{tab}"] = _payload(at)
    return out


def run(args: argparse.Namespace) -> int:
    from o3viz.testing.synthetic import make_trace

    small, large = args.steps
    with tempfile.TemporaryDirectory() as empty:
        os.environ["O3VIZ_SAMPLES"] = empty  # no samples: only the benchmark trace is in the library
        results = {}
        warm = make_trace(20, seed=1)  # imports, plotly validators and streamlit's first run are not timed
        _figures(warm)
        _render(warm)
        for n in (small, large):
            trace = make_trace(n, seed=0)
            print(f"tokens_{n}: {len(trace.tokens)}")
            fig_s = _figures(trace)
            page = _render(trace)
            results[n] = (fig_s, page)
            print(f"figures_s_{n}: {fig_s:.3f}")
            print(f"inspect_first_render_s_{n}: {page['first']:.3f}")
            print(f"inspect_payload_mb_{n}: {page['payload'] / 1e6:.3f}")
            for tab in TABS:
                print(f"tab_{tab.lower()}_s_{n}: {page[tab]:.3f}")
                print(f"tab_{tab.lower()}_payload_mb_{n}: {page[f'payload_{tab}'] / 1e6:.3f}")
    (fs, ps), (fl, pl) = results[small], results[large]
    print(f"figures_ratio_{large}_vs_{small}: {fl / fs:.2f}")
    print(f"inspect_first_render_ratio_{large}_vs_{small}: {pl['first'] / ps['first']:.2f}")
    print(f"steps_ratio: {large / small:.2f}")
    return 0
