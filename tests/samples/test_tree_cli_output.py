"""What ``o3viz tree`` and the tree's figure say of odd sets: a tie at the top count is said to be
a tie (no majority is named), an answer of 1,482 characters is clipped to one short line, and a
node of one sample reads "1 sample"."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.figures.sample_tree import sample_tree_figure
from o3viz.samples.sets import save_set
from o3viz.samples.tree import build_tree
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set, text_sample

pytestmark = [pytest.mark.light]


def test_a_four_way_tie_is_said_to_be_a_tie(capsys):
    traces = [text_sample(f"Count them all. The answer is {x}.") for x in (3, 5, 7, 9)]
    tree = build_tree(traces)
    assert tree.majority.answer == "3" and tree.majority.tied == ["5", "7", "9"]
    save_set(Store(), "tie", traces)
    assert main(["tree", "tie"]) == 0
    out = capsys.readouterr().out
    assert "no majority: a 4-way tie at 1 sample each (3, 5, 7, 9)" in out
    assert "majority: 3" not in out
    assert "4-way tie" in sample_tree_figure(tree).layout.title.text


def test_a_long_answer_is_clipped_to_one_line(capsys):
    long = " + ".join(f"x_{{{i}}}" for i in range(200))
    assert len(long) > 1400
    traces = [text_sample(f"Sum it up. The answer is \\boxed{{{long}}}.")] * 3 + [
        text_sample("So 2. The answer is 2.")
    ]
    save_set(Store(), "long", traces)
    assert main(["tree", "long"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) < 200
    assert any(line.startswith("answers: x_{0} + x_{1}") and "…" in line for line in lines)
    assert any(line.startswith("majority: x_{0}") for line in lines)


def test_a_node_of_one_sample_reads_one_sample():
    tree = build_tree(split_set(1, 3))
    assert any(n.samples == 1 for n in tree.nodes)
    hovers = " ".join(str(t.hovertext or "") + str(t.text or "") for t in sample_tree_figure(tree).data)
    assert "1 sample ·" in hovers and "1 samples" not in hovers
