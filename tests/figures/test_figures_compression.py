"""Compression figures: the map's states follow the events, pointer arcs, threshold lines, memory."""

from __future__ import annotations

import plotly.graph_objects as go

from o3viz.compress.context import compress_context
from o3viz.compress.record import build_compression_record
from o3viz.figures.compression import (
    build_compression_map,
    build_memory_chart,
    build_score_trace,
    compression_map_data,
)
from o3viz.trace.compression import SEGMENT_STATES, CompressionEvent, CompressionRecord

LINE = "Natalia sold clips to 48 of her friends in April, and then half as many in May."


def _record() -> CompressionRecord:
    ctx = compress_context(f"{LINE}\nWeng earns 12 dollars an hour for babysitting.\n{LINE}\nWhat now?\n")
    events = [
        CompressionEvent(1, 1, "release", 0.9, "unused"),
        CompressionEvent(3, 1, "restore", 0.1, "wanted"),
    ]
    scores = [[0.5, 0.8, 1.0, 0.4], [0.5, 0.9, 1.0, 0.4], [0.5, 0.2, 1.0, 0.4], [0.5, 0.1, 1.0, 0.4]]
    return build_compression_record(
        ctx, events, mode="pointer+eviction", memory_tokens=[40, 30, 31, 42], step_scores=scores
    )


def test_map_states_follow_pre_model_state_and_events():
    data = compression_map_data(_record())
    names = [[SEGMENT_STATES[c] for c in row] for row in data.states]
    assert data.steps.tolist() == [-1, 0, 1, 2, 3]
    assert names[2] == ["compressed"] * 5  # the pointer copy, from before the model on
    assert names[1] == [
        "kept",
        "kept",
        "released",
        "released",
        "kept",
    ]  # restore returns to the earlier state
    assert data.scores[1].tolist() == [0.5, 0.8, 0.9, 0.2, 0.1]
    assert data.edges == [(2, 0, "exact")]


def test_compression_map_has_heatmap_and_one_arc_per_pointer():
    fig = build_compression_map(_record())
    assert isinstance(fig, go.Figure)
    heat, arcs = fig.data
    assert heat.type == "heatmap" and len(heat.z) == 4
    assert sum(x is None for x in arcs.x) == 1 and min(y for y in arcs.y if y is not None) == 0


def test_score_trace_draws_the_threshold_lines():
    fig = build_score_trace(_record())
    assert sorted(round(s.y0, 2) for s in fig.layout.shapes) == [0.3, 0.7]
    assert len(fig.data) == 4 and list(fig.data[1].y) == [0.5, 0.8, 0.9, 0.2, 0.1]


def test_memory_chart_plots_cache_size_and_accepts_a_dict():
    rec = _record()
    fig = build_memory_chart(rec.to_dict())
    assert list(fig.data[0].y) == [40, 30, 31, 42]
    assert {a.text for a in fig.layout.annotations} >= {"release §1", "restore §1"}


def test_map_without_generation_has_only_the_pre_model_column():
    rec = build_compression_record(compress_context(f"{LINE}\n{LINE}\n"))
    data = compression_map_data(rec)
    assert data.states.shape == (2, 1) and data.steps.tolist() == [-1]
    assert build_memory_chart(rec).data[0].y in (None, ()) or len(build_memory_chart(rec).data[0].y) == 0


def test_the_prompt_strip_shows_pointers_along_the_prompt_with_an_arc_to_each_source():
    from o3viz.figures.compression import build_prompt_strip

    rec = _record()
    fig = build_prompt_strip(rec)
    bars = [t for t in fig.data if t.type == "bar"]
    assert {t.name for t in bars} == {"kept", "pointer"}
    assert sum(len(t.x) for t in bars) == len(rec.segments)
    arcs = next(t for t in fig.data if t.name == "pointer → source")
    assert sum(x is None for x in arcs.x) == sum(s.get("pointer_to") is not None for s in rec.segments)
    assert "tokens" in fig.layout.xaxis.title.text


def test_the_timeline_keeps_the_segments_that_change_during_generation():
    from o3viz.figures.compression import changed_segments

    data = compression_map_data(_record())
    assert changed_segments(data) == [1]  # released at step 1, restored at step 3
    fig = build_compression_map(_record(), only=[1])
    assert len(fig.data[0].z) == 1 and "generation step" in fig.layout.xaxis.title.text


def test_memory_is_labelled_in_tokens_on_a_generation_step_axis():
    fig = build_memory_chart(_record())
    assert "tokens" in fig.layout.yaxis.title.text and "generation step" in fig.layout.xaxis.title.text


def test_the_pointer_line_is_one_blue_in_both_figures():
    from o3viz.figures.compression import POINTER_COLOR, build_prompt_strip

    rec = _record()
    lines = [
        t.line.color
        for fig in (build_compression_map(rec), build_prompt_strip(rec))
        for t in fig.data
        if t.name == "pointer → source"
    ]
    assert lines == [POINTER_COLOR, POINTER_COLOR]
