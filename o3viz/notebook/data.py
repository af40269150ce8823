"""What a notebook view shows, as plain JSON-ready data: the reasoning map, the attention and
importance figures (from ``o3viz.figures``, never re-drawn here), the outline rows, and each
node's details, so the page's script only lays them out and switches the selection."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from o3viz.analysis.compare import compare_traces, shown_delta
from o3viz.analysis.episodes import OVERVIEW_FROM, find_episodes
from o3viz.analysis.outline import Outline, OutlineCheck, OutlineRound, OutlineStep, build_outline
from o3viz.analysis.wrong_step import first_wrong_step
from o3viz.figures import (
    compare_maps,
    episode_map_figure,
    importance_scores_figure,
    outline_items,
    reasoning_map_figure,
    step_attention_heatmap,
    step_targets,
    token_facts,
)
from o3viz.figures._style import VERDICT_COLORS, clip_label, readable
from o3viz.trace import Round, Step, Trace
from o3viz.trace.ids import make_id, parse_id

MAP_HEIGHT = 470  # px: the map beside the outline and the details, inside a 1280×720 first screen


def figure_json(fig: go.Figure) -> dict:
    """A figure as the plain dict plotly.js draws (numpy arrays become lists)."""
    return json.loads(fig.to_json())


def _num(v) -> str:
    if v is None:
        return "—"
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def _check_row(c: OutlineCheck) -> dict:
    return {
        "name": c.name,
        "verdict": c.verdict,
        "message": c.message,
        "color": VERDICT_COLORS.get(c.verdict, ""),
    }


def _step_details(rnd: Round, step: Step, s: OutlineStep, first_wrong) -> dict:
    facts = [f"{s.type.replace('_', ' ')}" + (" (type inferred)" if s.inferred else ""), f"kind: {s.kind}"]
    facts.append(token_facts(rnd, step, s.confidence))
    if s.importance is not None:
        facts.append(f"importance {s.importance:.2f}")
    if first_wrong is not None and first_wrong.node == s.id:
        facts.append(f"first wrong step: {first_wrong.reason}")
    return {
        "title": f"Step {s.index} of round {s.round}",
        "verdict": s.verdict,
        "facts": facts,
        "text": s.text,
        "checks": [_check_row(c) for c in s.checks],
        "attention": [[clip_label(k, 40), round(v, 3)] for k, v in step_targets(rnd, s.index)[:8]],
    }


def _round_details(r: OutlineRound, answer: bool) -> dict:
    if answer:
        return {
            "title": f"Answer of round {r.index}",
            "verdict": r.verdict,
            "facts": [],
            "text": r.answer or "",
        }
    facts = [f"{len(r.steps)} steps", f"action {r.action or '—'}"]
    return {
        "title": f"Round {r.index}",
        "verdict": r.verdict,
        "facts": facts,
        "text": r.feedback or "",
        "checks": [_check_row(c) for c in r.checks],
    }


def node_table(trace: Trace, outline: Outline) -> dict[str, dict]:
    """Every outline node's details panel, by id (steps, checks, rounds and their answers)."""
    wrong = first_wrong_step(trace)
    rounds = {r.index: (r, {x.index: x for x in r.steps}) for r in trace.rounds}  # one pass: long traces
    out: dict[str, dict] = {}
    for r in outline.rounds:
        out[r.id] = _round_details(r, answer=False)
        if r.answer is not None:
            out[r.answer_id] = _round_details(r, answer=True)
        for c in [*r.checks, *(c for s in r.steps for c in s.checks)]:
            out[c.id] = {
                "title": f"{c.kind} check · {c.name}",
                "verdict": c.verdict,
                "facts": [f"judges step {c.step}" if c.step is not None else f"round {r.index}"],
                "text": c.message,
            }
        rnd, steps = rounds[r.index]
        for s in r.steps:
            out[s.id] = _step_details(rnd, steps[s.index], s, wrong)
    return out


def _tabs(trace: Trace, outline: Outline, selected: int | None) -> list[dict]:
    """The tabs beyond the map, only those the trace has data for (an empty tab is hidden); a
    long trace adds the app's episode overview (runs of steps between turns)."""
    rnd, tabs = trace.final, []
    if len(outline.steps) > OVERVIEW_FROM:
        fig = episode_map_figure(outline, find_episodes(outline), height=MAP_HEIGHT, plot_px=800)
        tabs.append({"title": "Episodes", "figure": figure_json(fig)})
    att = rnd.attention
    if att is not None and att.step_alloc is not None and rnd.steps:
        fig = step_attention_heatmap(rnd, selected=selected)
        tabs.append({"title": "Attention", "figure": figure_json(fig)})
    if rnd.importance:
        tabs.append(
            {
                "title": "Importance",
                "figure": figure_json(importance_scores_figure(rnd.importance, rnd.steps)),
            }
        )
    return tabs


def trace_view_data(trace: Trace, selected: str | None = None) -> dict:
    """The single-trace view: map + outline + details, and the attention / importance tabs."""
    outline = build_outline(trace)
    wrong = first_wrong_step(trace)
    first_wrong = wrong.node if wrong else None
    fig = reasoning_map_figure(outline, selected=None, first_wrong=first_wrong, height=MAP_HEIGHT)
    nodes = node_table(trace, outline)
    if selected not in nodes:
        selected = outline.steps[0].id if outline.steps else None
    step = parse_id(selected).index if selected and selected.startswith("step:") else None
    return {
        "kind": "trace",
        "question": clip_label(readable(trace.task.question or ""), 200),
        "answer": f"answer {clip_label(readable(outline.answer or '—'), 60)} · {outline.verdict or 'no verdict'}",
        "map": figure_json(fig),
        "outline": outline_items(outline, first_wrong),
        "nodes": nodes,
        "tabs": _tabs(trace, outline, step),
        "selected": selected,
    }


def _metric_rows(comp) -> list[list[str]]:
    rows = []
    for m in comp.metrics:
        d = shown_delta(m.a, m.b) if not isinstance(m.a, str) and not isinstance(m.b, str) else None
        ints = isinstance(m.a, int) and isinstance(m.b, int)
        rows.append([m.name, _num(m.a), _num(m.b), "" if not d else f"{d:+.0f}" if ints else f"{d:+.2f}"])
    return rows


def compare_view_data(a: Trace, b: Trace, a_name: str = "A", b_name: str = "B") -> dict:
    """Compare's view: what changed (summary and metrics, A, B and B − A) and the two final rounds'
    maps on one scale, aligned steps one above the other, the first divergence marked."""
    comp = compare_traces(a, b, a_name=a_name, b_name=b_name)
    oa, ob = build_outline(a), build_outline(b)
    fa, fb = compare_maps(comp, oa, ob, height=260)
    nodes = {f"A/{k}": {**v, "title": f"A · {v['title']}"} for k, v in node_table(a, oa).items()}
    nodes.update({f"B/{k}": {**v, "title": f"B · {v['title']}"} for k, v in node_table(b, ob).items()})
    d = comp.first_divergence
    first = None
    if d is not None:
        side, idx, t = ("A", d.a_index, a) if d.a_index is not None else ("B", d.b_index, b)
        first = f"{side}/{make_id('step', t.final.index, idx)}"
    return {
        "kind": "compare",
        "question": clip_label(readable(a.task.question or ""), 200),
        "summary": [readable(p) for p in comp.summary()],
        "metrics": _metric_rows(comp),
        "maps": [figure_json(fa), figure_json(fb)],
        "nodes": nodes,
        "selected": first if first in nodes else None,
    }
