"""The reasoning outline: rounds → steps → checks, types inferred where the trace has none, and
optional importance / dependency data read defensively."""

from __future__ import annotations

from o3viz.analysis.outline import build_outline, search_outline
from o3viz.testing.synthetic import make_trace
from o3viz.text.classify import TYPES
from o3viz.trace import Check, Round, Step, Task, Trace


def _trace(*steps: str, checks=()) -> Trace:
    text, out, pos = "", [], 0
    for i, s in enumerate(steps):
        out.append(Step(i, s, pos, pos + len(s)))
        text += s + " "
        pos += len(s) + 1
    return Trace(
        Task("q?"), [Round(text=text, steps=out, answer="4", verdict="correct", checks=list(checks))]
    )


def test_every_step_gets_a_thought_anchors_type_and_untyped_steps_are_flagged_inferred():
    t = _trace("First, let me plan the approach.", "2 + 2 = 4.", "Wait, is that right?")
    t.rounds[0].steps[1].type = "active_computation"
    o = build_outline(t)
    assert [s.type in TYPES for s in o.steps] == [True, True, True]
    assert [s.inferred for s in o.steps] == [True, False, True]
    assert o.steps[2].type == "uncertainty_management"


def test_checks_hang_under_the_step_they_judged_and_the_rest_under_the_round():
    checks = [Check("claim", "2+2=4", "correct", step=1), Check("answer", "final", "wrong")]
    o = build_outline(_trace("Plan.", "2 + 2 = 4.", checks=checks))
    assert [c.id for c in o.rounds[0].steps[1].checks] == ["check:0:0"]
    assert [c.id for c in o.rounds[0].checks] == ["check:0:1"]
    assert o.rounds[0].steps[1].verdict == "correct"


def test_importance_records_give_node_importance_and_dependencies():
    from o3viz.trace.importance import ImportanceRecord

    t = _trace("Plan.", "2 + 2 = 4.")
    rec = ImportanceRecord("suppression", "suppression", [0.2, 0.9], [(1, 0, 0.8)])
    t.rounds[0].importance = [rec]
    s = build_outline(t).steps
    assert (s[0].importance, s[1].importance) == (0.0, 1.0) and (s[0].depends_on, s[1].depends_on) == (
        [],
        [0],
    )


def test_importance_and_dependencies_are_read_defensively():
    from o3viz.trace.importance import ImportanceRecord

    t = _trace("Plan.", "2 + 2 = 4.")
    # built in memory, never validated: an edge to a later step and one to a missing step
    t.rounds[0].importance = [
        ImportanceRecord("receiver", "receiver", [None, None], [(0, 1, 1.0), (1, 7, 1.0)])
    ]
    s = build_outline(t).steps
    assert s[1].importance is None and s[0].depends_on == [] and s[1].depends_on == []


def test_a_trace_without_importance_reports_none():
    o = build_outline(make_trace(8, seed=1))
    assert not o.has_importance and not o.has_dependencies


def test_ids_match_the_run_graph_and_find_and_search_use_them():
    from o3viz.analysis.graph import build_graph

    t = make_trace(10, seed=2, rounds=2)
    o, G = build_outline(t), build_graph(t)
    ids = {s.id for s in o.steps} | {c.id for r in o.rounds for c in r.checks}
    assert ids <= set(G)
    step = o.steps[3]
    assert o.find(step.id) is step
    assert step.id in search_outline(o, step.id)
    assert o.find("answer:1") is o.rounds[1] and o.find("step:9:9") is None
