"""The tree of where N samples of one question part ways.

**Merging.** The samples' steps are merged into a prefix tree: the root is the question; a sample
walks down from it, and at each node its next step joins the child whose step is *equivalent*
(``o3viz.samples.steps.equivalent``: the same normalised text as Compare aligns by, or the same
result with the same numbers or words) or else opens a new child. Two samples share a node only if
every step before it was equivalent too, so a node is a shared prefix of reasoning, and a node
with several children is where samples part ways.

**Counts.** Each node has ``samples`` (how many pass through), ``answers`` (final answer → count
over those samples, answers merged by ``o3viz.text.answers.answers_equivalent``, in near-linear
time by ``o3viz.samples.answer_classes``; ``"—"`` for none), and ``reference_share``: the share of
its graded samples whose answer is right, with its 95% Wilson interval. A sample is graded by
o3viz's answer check against the reference, else by its source's own grade
(``o3viz.analysis.provenance.grading``); a cut-short sample is ungraded.

**Forks.** A node is a ``fork`` when its children's reference shares differ by an interval that
excludes zero: among the children with at least ``MIN_SIDE`` graded samples, the best and the
worst, and Newcombe's hybrid score interval (95%) of their difference lies above 0. Forks are
ranked by that difference (``gap``). For samples drawn locally, ``entropy`` is the mean entropy
(nats) of the next-token distribution at the first token of the step after the node, over its
samples: how undecided the model was where they parted.

**Collapsing.** A node with one child that every one of its samples follows is merged with that
child, so a chain of unforked steps is one node that says how many steps it holds (``steps``) and
its first and last step text (``text``, ``last``). Building is linear in the number of steps
(each step is keyed once and compared with the children of one node).

>>> from o3viz.testing.sample_sets import split_set
>>> tree = build_tree(split_set(6, 6))
>>> [(n.id, n.parent, n.samples, n.steps, n.fork) for n in tree.nodes]
[(0, None, 12, 0, False), (1, 0, 12, 2, True), (2, 1, 6, 3, False), (3, 1, 6, 3, False)]
>>> tree.forks, tree.nodes[1].gap, [tree.nodes[i].reference_share for i in tree.nodes[1].sides]
([1], 1.0, [1.0, 0.0])
>>> tree.majority.answer, tree.majority.share
('18', 0.5)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from o3viz.analysis.align import norm_text
from o3viz.analysis.proportions import wilson, wilson_difference
from o3viz.analysis.provenance import grading
from o3viz.samples.answer_classes import NO_ANSWER, answer_classes
from o3viz.samples.steps import StepKey, equivalent, step_key
from o3viz.text.answers import answers_equivalent
from o3viz.trace import Trace
from o3viz.trace.ids import parse_step_ref

__all__ = ["LEVEL", "MIN_SIDE", "Majority", "SampleTree", "Sample", "TreeNode", "build_tree", "sample_of"]

LEVEL = 0.95  # coverage of every interval here
MIN_SIDE = 2  # graded samples a child needs to count in the fork test


@dataclass
class Sample:
    """What the tree reads of one sample."""

    name: str
    steps: list[str]
    answer: str | None = None
    correct: bool | None = None  # graded against the reference (None: ungraded)
    entropies: list[float | None] = field(default_factory=list)  # at each step's first token


@dataclass
class TreeNode:
    """A run of steps shared by ``samples`` samples (the root, id 0, is the question)."""

    id: int
    parent: int | None
    depth: int  # the index, in every one of its samples, of the node's first step (root: -1)
    steps: int  # how many steps the node stands for (a collapsed chain: more than 1; root: 0)
    text: str  # its first step's text (the first sample's wording)
    last: str  # its last step's text (== text for one step)
    members: list[int]  # the samples through it (indices into ``SampleTree.samples``)
    children: list[int] = field(default_factory=list)
    answers: dict[str, int] = field(default_factory=dict)
    graded: int = 0
    correct: int = 0
    interval: tuple[float, float] | None = None  # Wilson interval of the reference share
    fork: bool = False
    gap: float | None = None  # best minus worst child's reference share (children with MIN_SIDE)
    gap_interval: tuple[float, float] | None = None  # its Newcombe interval
    sides: tuple[int, int] | None = None  # the best and the worst child's ids
    entropy: float | None = None  # mean entropy at the first token after the node (local samples)

    @property
    def samples(self) -> int:
        return len(self.members)

    @property
    def reference_share(self) -> float | None:
        return self.correct / self.graded if self.graded else None


@dataclass
class Majority:
    """The most common answer, its share of all samples and that share's Wilson interval. Where
    several answers share the top count, ``tied`` names the others (``answer`` is the first seen
    of them): there is no majority, and what shows it says so."""

    answer: str | None
    count: int
    n: int
    interval: tuple[float, float] | None
    correct: bool | None = None  # whether it is the reference's answer (None: no reference)
    tied: list[str] = field(default_factory=list)  # other answers with ``count`` samples each

    @property
    def share(self) -> float | None:
        return self.count / self.n if self.n else None

    def to_json(self) -> dict:
        """The JSON form ``o3viz tree --json`` and the tree's view data both carry."""
        return {
            "answer": self.answer, "count": self.count, "share": self.share,
            "interval": _pair(self.interval), "correct": self.correct, "tied": self.tied,
        }  # fmt: skip


@dataclass
class SampleTree:
    """The merged samples: ``nodes`` in pre-order (a parent before its children), ranked ``forks``."""

    nodes: list[TreeNode]
    samples: list[Sample]
    majority: Majority
    forks: list[int]  # node ids, largest gap first
    reference: str | None = None

    def to_json(self) -> dict:
        """One JSON-ready object: ``nodes`` (``id``, ``parent``, ``samples``, ``answers``,
        ``reference_share``, ``fork`` and the rest of each node), ``majority``, ``forks``."""
        nodes = []
        for n in self.nodes:
            nodes.append({
                "id": n.id, "parent": n.parent, "samples": n.samples, "answers": n.answers,
                "reference_share": n.reference_share, "fork": n.fork, "interval": _pair(n.interval),
                "graded": n.graded, "steps": n.steps, "depth": n.depth, "text": n.text, "last": n.last,
                "gap": n.gap, "gap_interval": _pair(n.gap_interval), "entropy": n.entropy,
                "members": [self.samples[i].name for i in n.members],
            })  # fmt: skip
        return {
            "n": len(self.samples),
            "reference": self.reference,
            "majority": self.majority.to_json(),
            "forks": self.forks,
            "nodes": nodes,
        }


def _pair(p):
    return list(p) if p is not None else None


def sample_of(trace: Trace, name: str = "") -> Sample:
    """A trace's final round as a tree sample: its steps, answer (none for a reply cut short), grade
    (the answer check, else the source's grade) and the entropy at each step's first token where it
    has tokens."""
    rnd = trace.final
    g = grading(trace)
    grade = g.check if g.check is not None else g.source
    ents = []
    if rnd.tokens:
        ents = [
            rnd.tokens[s.token_start].entropy if s.token_start < len(rnd.tokens) else None for s in rnd.steps
        ]
    correct = None if grade is None else bool(grade)
    answer = None if g.not_graded else rnd.answer  # a cut-short reply's last number is no answer
    return Sample(name or trace.provenance.model_id, [s.text for s in rnd.steps], answer, correct, ents)


@dataclass
class _Raw:
    parent: int | None
    depth: int
    text: str
    norm: str
    members: list[int] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    by_norm: dict[str, int] = field(default_factory=dict)
    _key: StepKey | None = None

    @property
    def key(self) -> StepKey:  # keyed on first need: most nodes are never compared
        if self._key is None:
            self._key = step_key(self.text)
        return self._key


def _merge(samples: list[Sample]) -> list[_Raw]:
    """The uncollapsed prefix tree: one node per shared step. A step is keyed only when its node
    has children that its normalised text does not match (a sample alone on its branch is never
    keyed), so the work past the last split is one normalisation per step."""
    raw = [_Raw(None, -1, "", "", list(range(len(samples))))]
    for i, s in enumerate(samples):
        cur = 0
        for d, text in enumerate(s.steps):
            node, norm = raw[cur], norm_text(text)
            nxt = node.by_norm.get(norm)
            if nxt is None and node.children:
                key = step_key(text)
                nxt = next((c for c in node.children if equivalent(raw[c].key, key)), None)
            if nxt is None:
                nxt = len(raw)
                raw.append(_Raw(cur, d, text, norm))
                node.children.append(nxt)
                node.by_norm.setdefault(norm, nxt)
            raw[nxt].members.append(i)
            cur = nxt
    return raw


def _collapse(raw: list[_Raw]) -> list[TreeNode]:
    """Chains of single-child nodes that every sample follows, merged; ids in pre-order."""
    out: list[TreeNode] = []
    stack: list[tuple[int, int | None]] = [(0, None)]
    while stack:
        r, parent = stack.pop()
        node, steps, end = raw[r], 0 if r == 0 else 1, r
        while (
            r != 0
            and len(raw[end].children) == 1
            and len(raw[raw[end].children[0]].members) == len(node.members)
        ):
            end = raw[end].children[0]
            steps += 1
        t = TreeNode(len(out), parent, node.depth, steps, node.text, raw[end].text, node.members)
        out.append(t)
        if parent is not None:
            out[parent].children.append(t.id)
        stack.extend((c, t.id) for c in reversed(raw[end].children))
    return out


def _through_its_prefix(samples: list[Sample], i: int, drawn: object) -> None:
    """A resampled sample (``info["sample"]``: ``from_sample`` ``#j`` and ``after_step`` ``R:S``)
    goes through its source's first S + 1 steps, the prefix it was drawn after. Its own text was
    split again, and where the model went on along the prefix's last line that step holds the
    prefix's last step and the first words drawn: it becomes the step after the prefix, so the
    sample stays under the node it was drawn from instead of opening a branch at the root."""
    if not isinstance(drawn, dict) or drawn.get("drawn") != "resampled":
        return
    ref, src = parse_step_ref(drawn.get("after_step")), str(drawn.get("from_sample") or "")
    j = int(src[1:]) - 1 if src.startswith("#") and src[1:].isdigit() else -1
    if ref is None or not 0 <= j < i or ref.index >= len(samples[j].steps):
        return
    prefix, own = samples[j].steps[: ref.index + 1], samples[i].steps
    same = next(
        (k for k, (a, b) in enumerate(zip(prefix, own, strict=False)) if a != b), min(len(prefix), len(own))
    )
    if same >= ref.index:  # all but the last prefix step were split alike: the cut is where it was
        samples[i].steps = prefix + own[same:]
        samples[i].entropies = []  # (a resampled sample's text has no tokens of its own)


def _fork_test(node: TreeNode, nodes: list[TreeNode]) -> None:
    sides = [nodes[c] for c in node.children if nodes[c].graded >= MIN_SIDE]
    if len(sides) < 2:
        return
    best = max(sides, key=lambda c: (c.reference_share, c.graded))
    worst = min(sides, key=lambda c: (c.reference_share, -c.graded))
    lo, hi = wilson_difference(best.correct, best.graded, worst.correct, worst.graded, LEVEL)
    node.gap = best.reference_share - worst.reference_share
    node.gap_interval, node.sides = (lo, hi), (best.id, worst.id)
    node.fork = lo is not None and lo > 0


def _entropy(node: TreeNode, samples: list[Sample]) -> float | None:
    at = node.depth + node.steps if node.parent is not None else 0
    vals = [samples[i].entropies[at] for i in node.members if at < len(samples[i].entropies)]
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def build_tree(samples: list[Sample] | list[Trace], reference: str | None = None) -> SampleTree:
    """The tree of ``samples`` (``Sample``s, or traces read by ``sample_of``); see the module
    docstring. ``reference``: shown with the majority (default: the first trace's)."""
    if samples and isinstance(samples[0], Trace):
        reference = reference if reference is not None else samples[0].task.reference
        traces, samples = samples, [sample_of(t, f"#{i + 1}") for i, t in enumerate(samples)]
        for i, t in enumerate(traces):
            _through_its_prefix(samples, i, t.info.get("sample"))
    nodes = _collapse(_merge(samples))
    answers = answer_classes([s.answer for s in samples])
    for node in nodes:
        node.answers = dict(Counter(answers[i] for i in node.members).most_common())
        graded = [samples[i].correct for i in node.members if samples[i].correct is not None]
        node.graded, node.correct = len(graded), sum(graded)
        node.interval = wilson(node.correct, node.graded, LEVEL) if node.graded else None
    for node in reversed(nodes):  # children first (pre-order reversed)
        _fork_test(node, nodes)
        if len(node.children) > 1:
            node.entropy = _entropy(node, samples)
    forks = sorted((n.id for n in nodes if n.fork), key=lambda i: (-nodes[i].gap, i))
    return SampleTree(nodes, samples, _majority(samples, answers, reference), forks, reference)


def _majority(samples: list[Sample], answers: list[str], reference: str | None) -> Majority:
    counts = Counter(a for a in answers if a != NO_ANSWER)
    if not counts:
        return Majority(None, 0, len(samples), None)
    (answer, count), *rest = counts.most_common()  # ties in first-seen order
    tied = [a for a, c in rest if c == count]
    ok = answers_equivalent(answer, reference) if reference else None
    return Majority(answer, count, len(samples), wilson(count, len(samples), LEVEL), ok, tied)
