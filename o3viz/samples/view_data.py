"""The sample tree as JSON-ready data for a view (the Samples page, ``o3viz.show``, the figure):
a left-to-right layout, each node's label (a collapsed chain says how many steps it holds), edge
widths by samples, colour values by reference share, and the top forks with both sides' steps.

Layout: ``x`` is the node's depth in the collapsed tree (hops from the question), ``y`` places the
leaves one row apart in pre-order and each inner node at the mean of its children's rows, so a
branch never crosses another.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> data = tree_view_data(build_tree(split_set(3, 3)))
>>> [(n["x"], n["y"]) for n in data["nodes"]], data["forks"][0]["sides"][0]["text"]
([(0, 0.5), (1, 0.5), (2, 0.0), (2, 1.0)], 'There are 12 * 4 = 48 muffins.')
"""

from __future__ import annotations

from o3viz.samples.tree import SampleTree, TreeNode

__all__ = ["TOP_FORKS", "label_of", "tree_view_data"]

TOP_FORKS = 5  # forks listed with both sides' steps
LABEL_CHARS = 80  # a node's label; the full step text is in ``text``


def _clip(s: str, n: int = LABEL_CHARS) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def label_of(node: TreeNode) -> str:
    """A node's label: the question, its step, or a collapsed chain's size and ends.

    >>> from o3viz.samples.tree import TreeNode
    >>> label_of(TreeNode(3, 1, 4, 5, "First we add.", "So 18.", [0, 1]))
    '5 steps: First we add. … So 18.'
    """
    if node.parent is None:
        return "question"
    if node.steps <= 1:
        return _clip(node.text)
    return f"{node.steps} steps: {_clip(node.text, 40)} … {_clip(node.last, 36)}"


def _layout(tree: SampleTree) -> tuple[list[int], list[float]]:
    nodes = tree.nodes
    xs = [0] * len(nodes)
    for n in nodes:  # pre-order: a parent comes first
        if n.parent is not None:
            xs[n.id] = xs[n.parent] + 1
    ys = [0.0] * len(nodes)
    row = 0
    for n in nodes:  # pre-order leaves are top to bottom
        if not n.children:
            ys[n.id] = float(row)
            row += 1
    for n in reversed(nodes):
        if n.children:
            ys[n.id] = sum(ys[c] for c in n.children) / len(n.children)
    return xs, ys


def _side(tree: SampleTree, child: int) -> dict:
    c = tree.nodes[child]
    return {
        "node": c.id,
        "text": c.text,
        "samples": c.samples,
        "reference_share": c.reference_share,
        "answers": c.answers,
        "sample": tree.samples[c.members[0]].name,  # one sample of this side, to open in Compare
        "step": c.depth,  # its index of the first step after the fork, in that sample
    }


def tree_view_data(tree: SampleTree) -> dict:
    """The tree laid out for drawing (see the module docstring); plain JSON types only."""
    xs, ys = _layout(tree)
    nodes = []
    for n in tree.nodes:
        share = n.reference_share
        nodes.append({
            "id": n.id, "parent": n.parent, "x": xs[n.id], "y": ys[n.id], "label": label_of(n),
            "text": n.text, "last": n.last, "steps": n.steps, "samples": n.samples,
            "answers": n.answers, "reference_share": share, "color": share,
            "interval": list(n.interval) if n.interval else None, "fork": n.fork,
            "entropy": n.entropy, "members": [tree.samples[i].name for i in n.members],
        })  # fmt: skip
    edges = [
        {"source": n.parent, "target": n.id, "width": n.samples, "color": n.reference_share}
        for n in tree.nodes
        if n.parent is not None
    ]
    forks = []
    for fid in tree.forks[:TOP_FORKS]:
        f = tree.nodes[fid]
        forks.append({
            "node": fid, "text": f.last if f.parent is not None else "(the question)",
            "gap": f.gap, "gap_interval": list(f.gap_interval or ()), "entropy": f.entropy,
            "sides": [_side(tree, c) for c in f.sides or ()],
        })  # fmt: skip
    m = tree.majority
    return {
        "n": len(tree.samples),
        "reference": tree.reference,
        "majority": {
            "answer": m.answer,
            "share": m.share,
            "interval": list(m.interval) if m.interval else None,
            "correct": m.correct,
        },  # fmt: skip
        "nodes": nodes,
        "edges": edges,
        "forks": forks,
        "scale": {"min": 0.0, "max": 1.0, "what": "share of the samples through it that reach the reference"},
    }
