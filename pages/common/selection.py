"""What is selected on Inspect, as the views read it: the selected step's (round, index) and the round
a view shows. Shared by the Inspect views, so that no view reaches into another's private helpers."""

from __future__ import annotations

import streamlit as st

from o3viz.app import Trace, parse_id
from pages.common.ui import selected_node


def selected_step() -> tuple[int | None, int | None]:
    """(round, step) of the node selected on Inspect, where it is a step."""
    node = parse_id(selected_node())
    if node is not None and node.kind == "step":
        return node.round, node.index
    return None, None


def round_pick(trace: Trace, key: str, container=None):
    """The round an Inspect view shows: the only one, or a picker (in ``container``, else where the
    page is) defaulting to the selected step's round (else the last)."""
    if len(trace.rounds) == 1:
        return trace.rounds[0]
    indices = [r.index for r in trace.rounds]
    sel_round, _ = selected_step()
    default = indices.index(sel_round) if sel_round in indices else len(indices) - 1
    idx = (container or st).selectbox(
        "Round",
        list(range(len(trace.rounds))),
        index=default,
        key=f"att_round_{key}",
        format_func=lambda i: f"round {indices[i]} ({trace.rounds[i].verdict or '—'})",
    )
    return trace.rounds[idx]
