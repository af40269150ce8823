"""The run graph: a pure function from a ``Trace`` to a ``networkx.DiGraph`` (the decision tree).

Node ids (a small grammar; ``R`` round, ``I`` step, ``T`` generated-token index, ``K``/``B``/``J``/``E``
positions in their lists):

============  ===============  =============================================================
id            kind             what
============  ===============  =============================================================
task          task             the task or prompt
seg:R:I       segment          prompt segment I of round R
round:R       round            attempt R (``action``, ``feedback``)
step:R:I      step             reasoning step I of round R (``type``, ``step_kind``, tokens)
dp:R:T        decision         decision point at generated token T (``entropy``, ``margin``)
alt:R:T:K     alternative      K-th alternative token there (``score`` = its probability)
branch:R:B    branch           explored continuation B
check:R:J     check            J-th check of round R (test, claim or answer verdict)
answer:R      answer           the answer of round R
comp:E        compression      compression event E
============  ===============  =============================================================

Every node has ``kind``, ``label``, ``text``, ``round``, ``step``, ``verdict`` and ``score``.
Every edge has ``kind``: contains, next, backtrack, decision, alternative, explores, checks,
answers, revision (``label`` = feedback), attends (``weight``), compresses.

>>> from o3viz.trace import Round, Step, Task, Trace
>>> t = Trace(Task("2+2?"), [Round(text="2+2=4.", steps=[Step(0, "2+2=4.", 0, 6)], answer="4")])
>>> sorted(build_graph(t).nodes)
['answer:0', 'round:0', 'step:0:0', 'task']
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import networkx as nx

from o3viz.trace import Round, Trace
from o3viz.trace.ids import make_id

LABEL_CHARS = 48
ATTENDS_TOP = 2  # strongest allocation links drawn per step
ATTENDS_MIN = 0.15  # ... and only when they carry at least this share


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _add(G: nx.DiGraph, node: str, kind: str, text: str, r: int | None, **attrs: Any) -> None:
    base = {
        "kind": kind,
        "label": _label(text),
        "text": text,
        "round": r,
        "step": None,
        "verdict": None,
        "score": None,
    }
    base.update(attrs)
    G.add_node(node, **base)


def _step_confidence(rnd: Round, s0: int, s1: int) -> float | None:
    probs = [math.exp(t.logprob) for t in rnd.tokens[s0:s1] if t.logprob is not None]
    return sum(probs) / len(probs) if probs else None


def _step_of_token(rnd: Round, starts: list[int], t: int) -> int | None:
    """The step holding generated token ``t`` (steps are ordered by ``token_start``)."""
    i = bisect.bisect_right(starts, t) - 1
    if i >= 0 and t < rnd.steps[i].token_end:
        return rnd.steps[i].index
    return rnd.steps[-1].index if rnd.steps else None


def _add_steps(G: nx.DiGraph, rnd: Round) -> None:
    r, prev = rnd.index, make_id("round", rnd.index)
    for s in rnd.steps:
        node = make_id("step", r, s.index)
        _add(
            G,
            node,
            "step",
            s.text,
            r,
            step=s.index,
            type=s.type,
            step_kind=s.kind,
            token_start=s.token_start,
            token_end=s.token_end,
            score=_step_confidence(rnd, s.token_start, s.token_end),
        )
        parent = make_id("step", r, s.parent) if s.parent is not None else None
        if parent in G:
            G.add_edge(parent, node, kind="backtrack")
        else:
            G.add_edge(prev, node, kind="next" if G.nodes[prev]["kind"] == "step" else "contains")
        prev = node


def _add_decisions(G: nx.DiGraph, rnd: Round) -> None:
    r = rnd.index
    branches = {b.id: b for b in rnd.branches}
    starts = [s.token_start for s in rnd.steps]
    for dp in rnd.decision_points:
        tok = rnd.tokens[dp.token_index] if dp.token_index < len(rnd.tokens) else None
        node, si = make_id("dp", r, dp.token_index), _step_of_token(rnd, starts, dp.token_index)
        _add(
            G,
            node,
            "decision",
            tok.text if tok else "",
            r,
            step=si,
            entropy=dp.entropy,
            margin=dp.margin,
            score=1.0 - dp.margin,
        )
        G.add_edge(make_id("step", r, si) if si is not None else make_id("round", r), node, kind="decision")
        for k, alt in enumerate(dp.alternatives):
            a = make_id("alt", r, dp.token_index, k)
            _add(G, a, "alternative", alt.text, r, step=si, score=alt.prob)
            G.add_edge(node, a, kind="alternative")
        for bid in dp.branch_ids:
            b = branches.get(bid)
            if b is None:
                continue
            bn = make_id("branch", r, bid)
            _add(G, bn, "branch", b.text, r, step=si, verdict=b.verdict, score=b.mean_logprob)
            src = next(
                (
                    make_id("alt", r, dp.token_index, k)
                    for k, a in enumerate(dp.alternatives)
                    if a.id == b.forced.id
                ),
                node,
            )
            G.add_edge(src, bn, kind="explores")


def _add_checks(G: nx.DiGraph, rnd: Round) -> None:
    r = rnd.index
    last = make_id("step", r, rnd.steps[-1].index) if rnd.steps else make_id("round", r)
    for j, c in enumerate(rnd.checks):
        node = make_id("check", r, j)
        text = c.name + (f": {c.message}" if c.message else "")
        _add(G, node, "check", text, r, step=c.step, verdict=c.verdict, check_kind=c.kind, rule=c.rule)
        src = make_id("step", r, c.step) if c.step is not None else last
        src = src if src in G else last
        G.add_edge(src, node, kind="checks")
    if rnd.answer is not None:
        _add(G, make_id("answer", r), "answer", rnd.answer, r, verdict=rnd.verdict, score=rnd.confidence)
        G.add_edge(last, make_id("answer", r), kind="answers")


def _add_attends(G: nx.DiGraph, rnd: Round) -> None:
    att = rnd.attention
    if att is None or att.step_alloc is None or not att.alloc_labels:
        return
    r, alloc = rnd.index, att.step_alloc.astype(float)
    targets = []
    for label in att.alloc_labels:
        kind, _, idx = label.partition(" ")
        ok = idx.isascii() and idx.isdigit()  # labels come from the file: a bad one links nowhere
        targets.append(make_id("seg" if kind == "seg" else "step", r, int(idx)) if ok else None)
    for si in range(min(alloc.shape[0], len(rnd.steps))):
        src = make_id("step", r, rnd.steps[si].index)
        for k in alloc[si].argsort()[::-1][:ATTENDS_TOP]:
            if alloc[si, k] >= ATTENDS_MIN and targets[k] in G and targets[k] != src:
                G.add_edge(src, targets[k], kind="attends", weight=float(alloc[si, k]))


def build_graph(trace: Trace) -> nx.DiGraph:
    """The decision tree of ``trace``: task → rounds → steps → decisions/checks → answers."""
    G = nx.DiGraph(name=trace.task.id or "run", model=trace.provenance.model_id)
    _add(G, "task", "task", trace.task.question, None, verdict=trace.final.verdict if trace.rounds else None)
    for rnd in trace.rounds:
        r = rnd.index
        _add(
            G,
            make_id("round", r),
            "round",
            f"round {r}" + (f" ({rnd.verdict})" if rnd.verdict else ""),
            r,
            verdict=rnd.verdict,
            score=rnd.confidence,
            action=rnd.action,
            feedback=rnd.feedback,
        )
        if r == trace.rounds[0].index:
            G.add_edge("task", make_id("round", r), kind="contains")
        for seg in rnd.segments:
            _add(G, make_id("seg", r, seg.index), "segment", rnd.rendered_prompt[seg.start : seg.end], r)
            G.add_edge("task", make_id("seg", r, seg.index), kind="contains")
        _add_steps(G, rnd)
        _add_decisions(G, rnd)
        _add_checks(G, rnd)
        _add_attends(G, rnd)
    for a, b in zip(trace.rounds, trace.rounds[1:], strict=False):
        G.add_edge(
            make_id("round", a.index), make_id("round", b.index), kind="revision", label=a.feedback or ""
        )
    if trace.compression is not None:
        for e, ev in enumerate(trace.compression.events):
            _add(
                G,
                make_id("comp", index=e),
                "compression",
                f"{ev.kind} segment {ev.segment}: {ev.reason}",
                None,
                score=ev.score,
                event=ev.kind,
                at_step=ev.step,
            )
            seg = make_id("seg", trace.rounds[0].index if trace.rounds else 0, ev.segment)
            if seg in G:
                G.add_edge(make_id("comp", index=e), seg, kind="compresses")
    return G
