"""What the trace view shows, as plain JSON-ready data: the reasoning map, the attention and
importance figures (from ``o3viz.figures``, never re-drawn here), the outline rows, and each
node's details, so the view's script (``static/view.js``) only lays them out and switches the
selection. Both hosts draw it: the notebook (``o3viz.show``, ``trace_view_data`` and
``compare_view_data``) and Inspect (``o3viz.app.inspect_view``, from ``node_table``,
``episode_data``, ``search_items`` and ``intro_panel``). Verifiers' verdicts are named once per
view (``o3viz.view.verifiers``)."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from o3viz.analysis.compare import compare_traces, shown_delta
from o3viz.analysis.episodes import OVERVIEW_FROM, Episode, find_episodes
from o3viz.analysis.outline import Outline, OutlineCheck, OutlineRound, OutlineStep, build_outline
from o3viz.analysis.wrong_step import first_wrong_step
from o3viz.figures import (
    VERDICT_COLORS,
    answer_facts,
    check_item,
    clip_label,
    compare_maps,
    episode_item,
    episode_map_figure,
    episode_span,
    importance_scores_figure,
    lane_of,
    map_layout,
    outline_items,
    readable,
    reasoning_map_figure,
    round_items,
    step_attention_heatmap,
    step_item,
    step_targets,
    token_facts,
)
from o3viz.trace import Round, Step, Trace
from o3viz.trace.ids import make_id, parse_id
from o3viz.view.verifiers import VERIFIER_COLORS, round_refs, step_refs, verifier_table

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


def node_table(trace: Trace, outline: Outline, verifiers: list[dict] | None = None) -> dict[str, dict]:
    """Every outline node's details panel, by id (steps, checks, rounds and their answers). A step
    of a round that holds verifiers' verdicts lists them as ``verdicts``, indices into
    ``verifiers``, the view's table of verifier names (``verifier_table``; one the table lacks is
    appended to it). Without a table the indices are into ``verifier_table(trace)``. A step's
    facts end with its stated and forced answers (``o3viz.figures.answer_lane.answer_facts``)."""
    verifiers = verifier_table(trace) if verifiers is None else verifiers
    answers = answer_facts(lane_of(trace))
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
        at = {x.index: k for k, x in enumerate(rnd.steps)}  # verdicts[k] belongs to rnd.steps[k]
        refs = round_refs(rnd, verifiers)
        for s in r.steps:
            out[s.id] = _step_details(rnd, steps[s.index], s, wrong)
            out[s.id]["facts"] += answers.get(s.id, [])
            if rnd.verdicts:
                out[s.id]["verdicts"] = step_refs(rnd, at[s.index], verifiers, refs)
    return out


def verifier_data(verifiers: list[dict]) -> dict:
    """What the view's data holds of the verifiers: their table of names and the colours of their
    verdicts (nothing where no verifier judged the trace)."""
    return {"verifiers": verifiers, "verifier_colors": VERIFIER_COLORS} if verifiers else {}


def search_items(outline: Outline) -> list[list[str]]:
    """What the view's search looks in (Inspect's search box), as
    ``o3viz.analysis.outline.search_outline`` does: each step's, check's and answer's id and its
    text (lower case), in reading order."""
    items: list[list[str]] = []
    for r in outline.rounds:
        items += [[s.id, s.text.lower()] for s in r.steps]
        items += [[c.id, f"{c.name} {c.message}".lower()] for s in r.steps for c in s.checks]
        items += [[c.id, f"{c.name} {c.message}".lower()] for c in r.checks]
        items += [[r.answer_id, (r.answer or "").lower()]] if r.answer is not None else []
    return items


def intro_panel(outline: Outline, wrong) -> dict:
    """What the details panel says before anything is selected: the final answer and the first
    wrong step (``wrong``, a ``FirstWrong`` or None)."""
    final = outline.rounds[-1] if outline.rounds else None
    lines = []
    if final is not None:
        lines.append(
            f"Final answer: {clip_label(readable(final.answer or '(no answer)'), 200)} · {final.verdict or 'no verdict'}"
        )
    if wrong is not None:
        lines.append(f"First wrong step: step {wrong.step} · {wrong.reason}")
    return {"title": "Details", "lines": lines}


STRIP_HEIGHT = 96  # px: the whole-trace strip above an open episode


def episode_data(
    outline: Outline,
    episodes: list[Episode],
    first_wrong: str | None,
    *,
    height: int = MAP_HEIGHT,
    lane=None,
    answer_lane=None,
) -> dict:
    """A long trace's episodes as the view's script (``static/view.js``) opens them in the browser:
    the overview (one bar per episode, drawn first), the whole-trace strip, each episode's span on
    the map's x axis (opening one zooms the map to it), the outline's rows (rounds → episodes →
    their steps and checks, each tagged ``ep``: shown while that episode is open) and which episode
    holds each node. ``lane``: one verifier's verdicts for the checks lane; ``answer_lane``: the
    running answer's row under the overview (``o3viz.figures.answer_lane``)."""
    lay = map_layout(outline)
    n = len(outline.steps)
    eps, node_ep, rows = [], {}, []
    for ep in episodes:
        x0, x1 = episode_span(lay, outline, ep)
        eps.append(
            {
                "id": ep.id,
                "index": ep.index,
                "x0": x0,
                "x1": x1,
                "title": f"Episode {ep.index}: steps {ep.start}–{ep.end} of {n}",
                "caption": f"Episode {ep.index} of {len(episodes)} · steps {ep.start}–{ep.end} ({ep.length}) · "
                f"opens with {ep.opens_with.replace('_', '-')}",
            }
        )
        r = next(x for x in outline.rounds if x.index == ep.round)
        for s in r.steps[ep.lo : ep.hi]:
            node_ep[s.id] = ep.index
            node_ep.update({c.id: ep.index for c in s.checks})
        if ep.hi == len(r.steps):  # the round's answer and whole-round checks sit after its last step
            if r.answer is not None:
                node_ep[r.answer_id] = ep.index
            node_ep.update({c.id: ep.index for c in r.checks})
    for r in outline.rounds:
        body: list[dict] = []
        for ep in (e for e in episodes if e.round == r.index):
            body.append(episode_item(ep, r.steps[ep.lo], False))
            for s in r.steps[ep.lo : ep.hi]:
                body.append({**step_item(s, 2, first_wrong), "ep": ep.index})
                body += [{**check_item(c, 3), "ep": ep.index} for c in s.checks]
        body += [check_item(c, 1) for c in r.checks]
        rows += round_items(r, body)
    overview = episode_map_figure(
        outline, episodes, first_wrong=first_wrong, height=height, verdicts=lane, answer_lane=answer_lane
    )
    strip = episode_map_figure(outline, episodes, first_wrong=first_wrong, strip=True, height=STRIP_HEIGHT)
    return {
        "episodes": eps,
        "node_ep": node_ep,
        "overview": figure_json(overview),
        "strip": figure_json(strip),
        "outline": rows,
    }


def _tabs(trace: Trace, outline: Outline, selected: int | None) -> list[dict]:
    """The tabs beyond the map, only those the trace has data for (an empty tab is hidden)."""
    rnd, tabs = trace.final, []
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
    """The single-trace view: map + outline + details, and the attention / importance tabs. A
    trace longer than ``OVERVIEW_FROM`` steps opens, as the app does, on its episodes
    (``episode_data``): the overview is drawn first (about fifty marks, not one per step), and an
    episode opens in the browser, on the map zoomed to its steps."""
    outline = build_outline(trace)
    wrong = first_wrong_step(trace)
    first_wrong = wrong.node if wrong else None
    long = len(outline.steps) > OVERVIEW_FROM
    episodes = find_episodes(outline) if long else []
    widths = sorted(e.hi - e.lo for e in episodes)
    answers = lane_of(trace)  # the running answer's row under the map and the overview
    fig = reasoning_map_figure(
        outline,
        answer_lane=answers,
        selected=None,
        first_wrong=first_wrong,
        # a long trace's map opens zoomed on one episode: its markers are sized for an episode's width
        x_range=(0, widths[len(widths) // 2] + 1) if widths else None,
        height=max(MAP_HEIGHT - STRIP_HEIGHT - 30, 260) if long else MAP_HEIGHT,
    )
    verifiers = verifier_table(trace)
    nodes = node_table(trace, outline, verifiers)
    if selected not in nodes:  # a long trace opens on its overview, nothing selected
        selected = None if long else (outline.steps[0].id if outline.steps else None)
    step = parse_id(selected).index if selected and selected.startswith("step:") else None
    data = {
        "kind": "trace",
        "question": clip_label(readable(trace.task.question or ""), 200),
        "answer": f"answer {clip_label(readable(outline.answer or '—'), 60)} · {outline.verdict or 'no verdict'}",
        "map": figure_json(fig),
        "outline": outline_items(outline, first_wrong),
        "nodes": nodes,
        "tabs": _tabs(trace, outline, step),
        "selected": selected,
        **verifier_data(verifiers),
    }
    if long:
        data.update(episode_data(outline, episodes, first_wrong, answer_lane=answers))
        if selected is not None and selected in data["node_ep"]:
            data["episode"] = data["node_ep"][selected]  # a step asked for opens its episode
    return data


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
    fa, fb = compare_maps(comp, oa, ob, height=260, answer_lanes=(lane_of(a), lane_of(b)))
    verifiers = verifier_table(a, b)  # one table for both sides
    nodes = {f"A/{k}": {**v, "title": f"A · {v['title']}"} for k, v in node_table(a, oa, verifiers).items()}
    nodes.update(
        {f"B/{k}": {**v, "title": f"B · {v['title']}"} for k, v in node_table(b, ob, verifiers).items()}
    )
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
        **verifier_data(verifiers),
    }
