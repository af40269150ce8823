"""The sample tree stays readable at 64 samples of 4k tokens: the samples that leave a node alone
are one mark per node, a spine keeps the figure's width, names never touch each other or a mark
(the rest say how many are in the hovers), and every sample is on exactly one terminal mark. The
twenty thinking texts and the GSM8K fork keep drawing every leaf and both sides."""

from __future__ import annotations

import pytest

from o3viz.figures import sample_tree as fig_mod
from o3viz.figures.sample_tree import sample_tree_figure
from o3viz.samples.tree import build_tree
from o3viz.samples.view_data import GROUP_LEAVES, tree_view_data
from o3viz.testing.sample_sets import long_texts, split_set, text_sample

pytestmark = [pytest.mark.light]

HEIGHT = 430  # the Samples page's


@pytest.fixture(scope="module")
def long_tree():
    return build_tree([text_sample(t) for t in long_texts(64, 200)])


@pytest.fixture
def rope_tree(shared_data):
    from o3viz.importers import import_trace

    paths = sorted((shared_data / "traces" / "thinking_texts").glob("*.txt"))
    q = "Two ropes each burn for 60 minutes; measure 20 minutes."
    return build_tree([import_trace(p, question=q, claims=False) for p in paths])


def _boxes(fig) -> list[tuple[float, float, float, float]]:
    """Each drawn name's box in px, read back from the figure alone (its ranges and height, the
    assumed plot width and the name metrics)."""
    (x_lo, x_hi), (y_bot, y_top) = fig.layout.xaxis.range, fig.layout.yaxis.range
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    ppx, ppy = fig_mod.PLOT_PX / (x_hi - x_lo), plot_h / (y_bot - y_top)
    out = []
    for t in fig.data:
        if t.mode == "text":
            for x, y, text in zip(t.x, t.y, t.text, strict=True):
                left, cy = (x - x_lo) * ppx, (y - y_top) * ppy
                half = fig_mod.LINE_PX / 2
                out.append((left, cy - half, left + len(text) * fig_mod.CHAR_PX + 4, cy + half))
    return out


def _dots(fig) -> list[tuple[float, float, float]]:
    (x_lo, x_hi), (y_bot, y_top) = fig.layout.xaxis.range, fig.layout.yaxis.range
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    ppx, ppy = fig_mod.PLOT_PX / (x_hi - x_lo), plot_h / (y_bot - y_top)
    return [
        ((x - x_lo) * ppx, (y - y_top) * ppy, s / 2)
        for t in fig.data
        if t.mode == "markers"
        for x, y, s in zip(t.x, t.y, t.marker.size, strict=True)
    ]


def _assert_readable(fig) -> None:
    boxes = _boxes(fig)
    assert 0 < len(boxes) <= 40
    gap = fig_mod.GAP_PX - 0.01
    for i, (a0, b0, a1, b1) in enumerate(boxes):
        for c0, d0, c1, d1 in boxes[i + 1 :]:
            if a0 < c1 and c0 < a1:  # they share an x column: apart in y by the gap
                assert d0 >= b1 + gap or b0 >= d1 + gap, ((a0, b0, a1, b1), (c0, d0, c1, d1))
        for cx, cy, r in _dots(fig):  # and clear of every mark
            assert not (a0 < cx + r - 0.5 and cx - r + 0.5 < a1 and b0 < cy + r - 0.5 and cy - r + 0.5 < b1)


def _terminal_counts(data: dict) -> list[int]:
    parents = {n["parent"] for n in data["nodes"]}
    leaves = [n["samples"] for n in data["nodes"] if n["group"] is None and n["id"] not in parents]
    return leaves + [g["samples"] for g in data["groups"]]


def test_64_samples_of_4k_tokens_group_the_lone_leavers_and_keep_the_names_apart(long_tree):
    data = tree_view_data(long_tree)
    assert sum(_terminal_counts(data)) == 64  # every sample on one terminal mark
    groups = data["groups"]
    assert (
        groups and len(groups) < 64 and all(g["label"].startswith(f"{g['samples']} sample") for g in groups)
    )
    assert any(g["samples"] > 1 for g in groups)
    # the spine is one straight row, and its width holds: far fewer columns than hops
    hops = max(n["x"] for n in tree_view_data(long_tree)["nodes"])
    assert hops < 16 < len({n.depth for n in long_tree.nodes})
    (chain,) = [c for c in data["chains"] if c["leave"]]
    assert chain["label"].startswith(f"{chain['steps']} shared steps") and chain["steps"] > 40
    fig = sample_tree_figure(long_tree, height=HEIGHT)
    _assert_readable(fig)
    (left_alone,) = [t for t in fig.data if t.name == "left alone"]
    assert len(left_alone.x) == len(groups)
    assert all(c in range(len(long_tree.nodes)) for c in left_alone.customdata)  # a click selects a node
    assert "#" in left_alone.hovertext[0] and "steps)" in left_alone.hovertext[0]  # its samples listed
    names = [t for t in fig.data if t.mode == "text"][0].text
    assert any("shared steps" in t for t in names) and any("leave here" in t for t in names)
    (note,) = fig.layout.annotations
    assert f"{len(names)} of " in note.text and "hover" in note.text


def test_the_twenty_thinking_texts_keep_every_leaf_and_their_names_apart(rope_tree):
    data = tree_view_data(rope_tree)
    assert data["groups"] == [] and len([n for n in rope_tree.nodes if not n.children]) <= GROUP_LEAVES
    assert sum(_terminal_counts(data)) == 20
    for height in (HEIGHT, None):
        fig = sample_tree_figure(rope_tree, height=height)
        _assert_readable(fig)
        assert len([t for t in fig.data if t.mode == "text"][0].text) >= 15


def test_the_gsm8k_fork_draws_both_sides(shared_data):
    from tests.samples.test_tree import gsm8k_systems

    tree = build_tree(gsm8k_systems(shared_data, 352 - 1))
    fig = sample_tree_figure(tree, height=HEIGHT)
    _assert_readable(fig)
    steps = next(t for t in fig.data if t.name == "steps")
    assert len(steps.x) == len(tree.nodes)  # nothing grouped: every node drawn
    f = tree.nodes[tree.forks[0]]  # the systems split 2 right / 2 wrong
    ids = list(steps.customdata)
    assert (
        len({steps.y[ids.index(c)] for c in f.sides}) == 2 and steps.marker.line.width[ids.index(f.id)] == 3
    )
    names = [t for t in fig.data if t.mode == "text"][0].text
    assert sum(t.startswith("→ ") for t in names) >= 2  # the leaves of both sides name their answer


def test_a_small_split_is_laid_out_as_before_with_its_names():
    data = tree_view_data(build_tree(split_set(3, 3, tail=4)))
    assert [(n["x"], n["y"]) for n in data["nodes"]] == [(0, 0.5), (1, 0.5), (2, 0.0), (2, 1.0)]
    assert data["groups"] == [] and data["chains"][0]["label"] == "2 shared steps"
    fig = sample_tree_figure(build_tree(split_set(3, 3, tail=4)))
    names = [t for t in fig.data if t.mode == "text"][0].text
    assert set(names) == {"2 shared steps", "→ 18 (7 shared steps)", "→ 14 (7 shared steps)"}
    assert not fig.layout.annotations  # nothing dropped


def test_names_that_would_touch_are_dropped_and_counted(long_tree, monkeypatch):
    """With names placed without a gap check, the layout test above fails: it can fail."""
    monkeypatch.setattr(fig_mod, "_fits", lambda box, taken, blocks, bottom: True)
    with pytest.raises(AssertionError):
        _assert_readable(sample_tree_figure(long_tree, height=HEIGHT))
