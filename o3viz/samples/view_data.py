"""The sample tree as JSON-ready data for a view (the Samples page, ``o3viz.show``, the figure):
a left-to-right layout, each node's label (a collapsed chain says how many steps it holds), edge
widths by samples, colour values by reference share, and the top forks with both sides' steps.

Layout: ``x`` is the node's depth in the collapsed tree (hops from the question), ``y`` places the
leaves one row apart in pre-order and each inner node at the mean of its children's rows, so a
branch never crosses another.

**Grouping.** A tree with more leaves than ``GROUP_LEAVES`` (64 samples of 4k tokens that leave a
shared spine one by one) would give each leaf a row a few pixels high. There, the samples that
leave a node alone (a one-sample leaf: no fork can follow) become one ``group`` per node, drawn
as one mark on a short stub ("7 samples leave here → 3 answers (2 right)", each sample listed in
its hover); a node whose other samples all go on along one branch is a spine, and its hop is
``SPINE_DX`` wide rather than 1, so a spine of 40 such nodes keeps the figure's width, and its
groups hang ``GROUP_DY`` below it on short stubs, in a row of their own. Branches of 2+ samples
and forks are drawn in full. Rows then go heaviest branch first: a node sits on its heaviest
child's row, so a spine is one straight line; any other group (at a node where 2+ branches go on,
or where every sample goes alone) takes a row of its own, below the node's branches.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> data = tree_view_data(build_tree(split_set(3, 3)))
>>> [(n["x"], n["y"]) for n in data["nodes"]], data["forks"][0]["sides"][0]["text"]
([(0.0, 0.5), (1.0, 0.5), (2.0, 0.0), (2.0, 1.0)], 'There are 12 * 4 = 48 muffins.')
"""

from __future__ import annotations

from collections import Counter

from o3viz.samples.tree import SampleTree, TreeNode

__all__ = ["GROUP_LEAVES", "TOP_FORKS", "label_of", "tree_view_data"]

TOP_FORKS = 5  # forks listed with both sides' steps
LABEL_CHARS = 80  # a node's label; the full step text is in ``text``
GROUP_LEAVES = 24  # above this many leaves, lone leaves are grouped per node
SPINE_DX = 0.3  # x of a hop along a spine (its node's other samples all leave alone)
STUB_DX = 0.15  # x of the stub to a group's mark
GROUP_DY = 0.4  # rows below its spine a spine node's group hangs


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


def _lone(n: TreeNode) -> bool:
    """A leaf of one sample: it left its parent alone and never forks."""
    return n.samples == 1 and not n.children


def _groups(tree: SampleTree) -> list[tuple[int, list[int]]]:
    """Where the tree has more than ``GROUP_LEAVES`` leaves: each node's lone leaves, as one group
    (the node's id, the leaves' ids); else none (every leaf is drawn)."""
    if sum(1 for n in tree.nodes if not n.children) <= GROUP_LEAVES:
        return []
    out = []
    for n in tree.nodes:
        lone = [c for c in n.children if _lone(tree.nodes[c])]
        if lone:
            out.append((n.id, lone))
    return out


def _layout(tree: SampleTree, groups: list[tuple[int, list[int]]]) -> tuple[list, list, list, list]:
    """``x`` and ``y`` of each node and each group (see the module docstring)."""
    nodes, heavy = tree.nodes, bool(groups)
    group_at = {p: g for g, (p, _) in enumerate(groups)}
    grouped = {c for _, cs in groups for c in cs}
    kept = [[c for c in n.children if c not in grouped] for n in nodes]
    xs, gx = [0.0] * len(nodes), [0.0] * len(groups)
    for n in nodes:  # pre-order: a parent comes first
        if n.id in group_at:
            gx[group_at[n.id]] = xs[n.id] + STUB_DX
        through = n.id in group_at and len(kept[n.id]) == 1  # the rest leave alone: a spine goes on
        for c in kept[n.id]:
            xs[c] = xs[n.id] + (SPINE_DX if through else 1.0)
    ys, gy = [0.0] * len(nodes), [0.0] * len(groups)
    row = 0

    def place(i: int) -> None:  # depth <= the leaves (each inner node but the root has 2+ children)
        nonlocal row
        order = sorted(kept[i], key=lambda c: -nodes[c].samples) if heavy else kept[i]
        for c in order:
            place(c)
        g = group_at.get(i)
        if g is not None and len(order) == 1:  # a spine: its groups hang just below it, in no row
            ys[i] = ys[order[0]]
            gy[g], row = ys[i] + GROUP_DY, max(row, int(ys[i]) + 2)
            return
        if g is not None:
            gy[g], row = float(row), row + 1
        if not nodes[i].children:
            ys[i], row = float(row), row + 1
        elif heavy:  # the heaviest branch goes straight on; lighter ones hang below it
            ys[i] = ys[order[0]] if order else gy[g]
        else:
            ys[i] = sum(ys[c] for c in order) / len(order)

    place(0)
    for g, (_, cs) in enumerate(groups):
        for c in cs:
            xs[c], ys[c] = gx[g], gy[g]
    return xs, ys, gx, gy


def _group_label(k: int, answers: dict, graded: int, correct: int, alone: bool) -> str:
    """A group's name: how many leave (or, where no branch goes on, part), their answers, grade.

    >>> _group_label(7, {"18": 2, "14": 4, "—": 1}, 7, 2, False)
    '7 samples leave here → 3 answers (2 right)'
    >>> _group_label(1, {"14": 1}, 1, 0, False)
    '1 sample leaves here → answer 14 (wrong)'
    """
    verb = ("part" if alone else "leave") if k > 1 else "leaves"
    names = ", ".join(_clip(a, 12) for a in answers)
    ans = (
        f"answer{'s' if len(answers) > 1 else ''} {names}" if len(answers) <= 2 else f"{len(answers)} answers"
    )
    grade = ""
    if graded and k == 1:
        grade = " (right)" if correct else " (wrong)"
    elif graded:
        grade = f" ({correct} right)" if graded == k else f" ({correct} of {graded} graded right)"
    return f"{k} sample{'s' if k > 1 else ''} {verb} here → {ans}{grade}"


def _group_data(tree: SampleTree, groups: list, gx: list, gy: list) -> list[dict]:
    out = []
    for g, (p, cs) in enumerate(groups):
        leaves = [tree.nodes[c] for c in cs]
        answers = dict(Counter(a for n in leaves for a in n.answers).most_common())
        graded, correct = sum(n.graded for n in leaves), sum(n.correct for n in leaves)
        alone, spine = len(cs) == len(tree.nodes[p].children), len(tree.nodes[p].children) - len(cs) == 1
        out.append({
            "id": g, "parent": p, "x": gx[g], "y": gy[g], "samples": len(cs), "nodes": cs,
            "members": [tree.samples[n.members[0]].name for n in leaves], "steps": [n.steps for n in leaves],
            "answers": answers, "graded": graded, "correct": correct,
            "reference_share": correct / graded if graded else None,
            "label": _group_label(len(cs), answers, graded, correct, alone), "spine": spine,
        })  # fmt: skip
    return out


def _chains(tree: SampleTree, groups: list, xs: list, ys: list) -> list[dict]:
    """The shared chains to name: an inner node of 2+ samples holding several steps, and, where
    lone leaves are grouped, a spine of such nodes with the samples that leave along it."""
    nodes = tree.nodes
    group_of = {p: len(cs) for p, cs in groups}
    grouped = {c for _, cs in groups for c in cs}

    def through(i: int) -> int | None:  # the one branch that goes on from a spine node
        kept = [c for c in nodes[i].children if c not in grouped]
        return kept[0] if i in group_of and len(kept) == 1 else None

    out = []
    for n in nodes:
        if n.parent is None or n.samples < 2 or not n.children or through(n.parent) is not None:
            continue
        chain = [n.id]
        while (nxt := through(chain[-1])) is not None:
            chain.append(nxt)
        steps = sum(nodes[i].steps for i in chain)
        leave = sum(group_of[i] for i in chain[:-1])
        if steps > 1:
            name = f"{steps} shared steps" + (f" · {leave} samples leave along them" if leave else "")
            out.append({
                "node": n.id, "last": chain[-1], "x0": xs[n.id], "x1": xs[chain[-1]], "y": ys[n.id],
                "steps": steps, "leave": leave, "label": name,
            })  # fmt: skip
    return out


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


def _node_data(tree: SampleTree, xs: list, ys: list, group_of: dict) -> list[dict]:
    nodes = []
    for n in tree.nodes:
        share = n.reference_share
        nodes.append({
            "id": n.id, "parent": n.parent, "x": xs[n.id], "y": ys[n.id], "label": label_of(n),
            "text": n.text, "last": n.last, "steps": n.steps, "samples": n.samples,
            "answers": n.answers, "reference_share": share, "color": share,
            "interval": list(n.interval) if n.interval else None, "fork": n.fork,
            "entropy": n.entropy, "members": [tree.samples[i].name for i in n.members],
            "group": group_of.get(n.id),
        })  # fmt: skip
    return nodes


def tree_view_data(tree: SampleTree) -> dict:
    """The tree laid out for drawing (see the module docstring); plain JSON types only."""
    groups = _groups(tree)
    xs, ys, gx, gy = _layout(tree, groups)
    group_of = {c: g for g, (_, cs) in enumerate(groups) for c in cs}
    nodes = _node_data(tree, xs, ys, group_of)
    group_data = _group_data(tree, groups, gx, gy)
    edges = [
        {"source": n.parent, "target": n.id, "width": n.samples, "color": n.reference_share}
        for n in tree.nodes
        if n.parent is not None and n.id not in group_of
    ] + [
        {"source": g["parent"], "group": g["id"], "width": g["samples"], "color": g["reference_share"]}
        for g in group_data
    ]
    forks = []
    for fid in tree.forks[:TOP_FORKS]:
        f = tree.nodes[fid]
        forks.append({
            "node": fid, "text": f.last if f.parent is not None else "(the question)",
            "gap": f.gap, "gap_interval": list(f.gap_interval or ()), "entropy": f.entropy,
            "sides": [_side(tree, c) for c in f.sides or ()],
        })  # fmt: skip
    return {
        "n": len(tree.samples),
        "reference": tree.reference,
        "majority": tree.majority.to_json(),
        "nodes": nodes,
        "groups": group_data,
        "chains": _chains(tree, groups, xs, ys),
        "edges": edges,
        "forks": forks,
        "scale": {"min": 0.0, "max": 1.0, "what": "share of the samples through it that reach the reference"},
    }
