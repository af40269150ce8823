""" "Resample from here" keeps a new sample under the node it was drawn from: each resampled sample
goes through its source's steps up to ``after_step``, also where the model went on along the
prefix's last line (so its own text, split again, no longer repeats that step). Without a model:
the traces are built as ``o3viz.samples.resample`` builds them."""

from __future__ import annotations

import pytest

from o3viz.samples.tree import build_tree
from o3viz.testing.sample_sets import split_set, text_sample

pytestmark = [pytest.mark.light]

HEAD = "We need the muffins left. First count the muffins baked"
LINE = "We need the muffins left, and so we sell most of those at the market stall before noon."


def resampled(text: str, after: str, source: str = "#1"):
    t = text_sample(text)
    t.info["sample"] = {"drawn": "resampled", "from_sample": source, "after_step": after, "node": 1}
    return t


@pytest.mark.parametrize(
    ("text", "after", "node_steps"),
    [
        (HEAD + ", then we sell most of those at the market stall before noon. The answer is 18.", "0:1", 2),
        (HEAD + ". There are 12 * 4 = 48 muffins. The answer is 18.", "0:1", 2),  # a step of its own
        (LINE + " The answer is 18.", "0:0", 1),  # on along the first step's line
    ],
)
def test_a_resampled_sample_stays_under_its_node(text, after, node_steps):
    traces = split_set(2, 2) + [resampled(text, after), resampled(text, after, "#3")]
    tree = build_tree(traces)
    root = tree.nodes[0]
    assert len(root.children) == 1  # no new branch at the question
    opening = tree.nodes[root.children[0]]
    assert opening.samples == 6 and opening.depth == 0
    assert opening.steps >= node_steps  # all six share the prefix's steps: the node they were drawn from


def test_a_sample_that_is_not_resampled_is_read_as_it_is():
    t = text_sample(LINE + " The answer is 18.")
    tree = build_tree([*split_set(2, 2), t])
    assert len(tree.nodes[0].children) == 2  # its first step differs: a branch at the question
