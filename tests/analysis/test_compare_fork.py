"""Compare aligns a branch with its parent at the fork: the steps before it are shared (greyed
on the maps), the edited step is the fork row, and the first divergence is the first difference
after the fork, whichever side the branch is on."""

from __future__ import annotations

from o3viz.analysis.compare import compare_traces
from o3viz.analysis.outline import build_outline
from o3viz.figures import alignment_figure, compare_maps
from o3viz.testing.synthetic import make_trace
from o3viz.trace import Round, Step, Trace
from o3viz.trace.branching import BranchParent


def _branch(parent: Trace, fork: int) -> Trace:
    """A branch at step ``fork`` that keeps one later step and then writes a new one."""
    steps = parent.final.steps
    kept, new = steps[fork + 1].text, "Something else entirely happens here."
    text = f"{kept} {new}"
    rnd = Round(text=text, steps=[Step(0, kept, 0, len(kept)), Step(1, new, len(kept) + 1, len(text))])
    t = Trace(parent.task, [rnd], parent.provenance)
    t.parent = BranchParent(
        "k", f"{len(parent.rounds) - 1}:{fork}", "edit", edited="An edit.", original=steps[fork].text
    )
    return t


def test_a_branch_is_aligned_at_its_fork_and_the_first_difference_is_after_it():
    parent = make_trace(8, seed=3, rounds=1)
    c = compare_traces(parent, _branch(parent, 3))
    tags = [r.tag for r in c.steps]
    assert tags[:4] == ["shared"] * 3 + ["fork"] and c.fork.b_text == "An edit."
    assert tags[4] == "equal" and c.first_divergence.a_index == 5
    assert any("forked at step 3" in line for line in c.summary())


def test_the_branch_may_be_side_a():
    parent = make_trace(8, seed=3, rounds=1)
    c = compare_traces(_branch(parent, 3), parent)
    assert [r.tag for r in c.steps][:4] == ["shared"] * 3 + ["fork"] and c.steps[0].b_index == 0


def test_an_unrelated_trace_is_aligned_as_before():
    parent = make_trace(8, seed=3, rounds=1)
    b = _branch(parent, 3)
    b.parent.original = "not the parent's step"
    assert "shared" not in {r.tag for r in compare_traces(parent, b).steps}


def test_the_maps_grey_the_shared_prefix_and_the_alignment_names_the_fork():
    parent = make_trace(8, seed=3, rounds=1)
    b = _branch(parent, 3)
    c = compare_traces(parent, b)
    fa, fb = compare_maps(c, build_outline(parent), build_outline(b))
    for fig in (fa, fb):
        shade = [s for s in fig.layout.shapes if s.fillcolor == "#e5e7eb"]
        assert shade and shade[0].x1 == 2.5
    assert {"shared", "fork"} <= {t.name for t in alignment_figure(c).data}


def test_the_first_divergence_of_a_branch_names_one_position_numbered_as_in_the_parent():
    """Issue 35, finding 8: "first divergence: A step 6 vs B step 1" for the same position."""
    parent = make_trace(8, seed=3, rounds=1)
    for a, b in ((parent, _branch(parent, 3)), (_branch(parent, 3), parent)):
        c = compare_traces(a, b)
        assert "first divergence: A step 5 vs B step 5 (final rounds)" in c.summary()
        assert c.shown(c.first_divergence) == (5, 5)


def test_the_aligned_table_keeps_the_fork_row_numbered_and_never_shows_none():
    parent = make_trace(8, seed=3, rounds=1)
    rows = compare_traces(parent, _branch(parent, 3)).table_rows()
    assert all(v is not None and v != "None" for r in rows for v in r.values())
    fork = next(r for r in rows if r[""] == "fork (edited)")
    assert (fork["A step"], fork["B step"], fork["B"]) == ("3", "3", "An edit.")
    assert [r["B step"] for r in rows[:3]] == ["0", "1", "2"]  # the shared prefix, numbered as in the parent
    assert any(r["A step"] == "—" or r["B step"] == "—" for r in rows)  # a side without a step reads "—"
