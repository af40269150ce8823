"""More samples from one node of a set's tree: "Resample from here" draws K continuations of the
reply that leads to a node (the branching machinery's ``resample_from``) and makes each one a
whole sample of the set (the prefix, then the continuation), so the set grows and the node's
estimate firms up in place.

Where a node's prefix ends: right after the node's last step, so the new samples pass through
the node and split below it (or end there, as some of its samples may have). The cut is at the
step's end, before the whitespace that follows it: the model picks what comes next as it did when
the set was drawn, so the new samples are more of the node's own distribution (a cut after the
whitespace would rule out ending there, and would leave a word-piece tokenizer a prompt ending in
a space). A leaf ends its samples: there the cut is after its parent, so the new samples pass
through the parent and branch beside it. The root is the question: fresh samples.

**Firming up.** ``firm_up`` applies the same draw to every split the fork test could not decide
(``undecided``: a node whose best and worst side have ``MIN_SIDE`` graded samples each but whose
Newcombe interval includes 0, typically 2 to 6 samples a side): K continuations after the first
step of each of its two sides, so both sides grow by K and the test is run again on more samples.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> tree = build_tree(split_set(2, 2))
>>> resample_point(tree, 1), resample_point(tree, 2), resample_point(tree, 0)
((0, 1), (0, 1), (0, -1))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from o3viz.errors import UsageError
from o3viz.samples.request import check_room
from o3viz.samples.tree import SampleTree
from o3viz.trace.ids import step_ref

if TYPE_CHECKING:  # the drawing parts load torch: the Samples page reads the point without them
    from o3viz.branch.continuation import Continuer
    from o3viz.clients import RolloutCache, Sampling
    from o3viz.samples.sets import SampleSet
    from o3viz.trace import Trace

__all__ = [
    "MAX_FIRM_NODES",
    "MAX_RESAMPLE",
    "firm_up",
    "resample_node",
    "resample_point",
    "side_point",
    "undecided",
]

MAX_RESAMPLE = 32  # continuations one "Resample from here" draws
MAX_FIRM_NODES = 16  # undecided splits one firm-up draws for (2 K continuations each)


def resample_point(tree: SampleTree, node_id: int) -> tuple[int, int]:
    """``(sample, through)``: the member sample whose reply is continued and the index of its last
    step kept (-1: none, the question); see the module docstring."""
    if not 0 <= node_id < len(tree.nodes):
        raise UsageError(f"node {node_id}: the tree has nodes 0 to {len(tree.nodes) - 1}")
    node = tree.nodes[node_id]
    if node.parent is None:
        return node.members[0], -1
    end = node.depth + node.steps  # the first step after the node
    sample = next((i for i in node.members if end < len(tree.samples[i].steps)), None)
    return (sample, end - 1) if sample is not None else (node.members[0], node.depth - 1)


def undecided(tree: SampleTree) -> list[int]:
    """The splits the fork test could not decide, largest gap first (then most samples): nodes with
    two sides of ``MIN_SIDE`` graded samples that are not forks."""
    nodes = [n for n in tree.nodes if n.sides and not n.fork]
    return [n.id for n in sorted(nodes, key=lambda n: (-(n.gap or 0.0), -n.samples, n.id))]


def side_point(tree: SampleTree, child_id: int) -> tuple[int, int]:
    """``(sample, through)`` that continues a side right after its first step: its first member
    and that step's index. A member that ended there can be continued too: the model may end it
    again, as the side's samples did."""
    child = tree.nodes[child_id]
    return child.members[0], child.depth


def resample_node(
    s: SampleSet,
    tree: SampleTree,
    node_id: int,
    k: int,
    continuer: Continuer,
    sampling: Sampling,
    *,
    cache: RolloutCache | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Trace]:
    """``k`` new samples of set ``s`` that continue the reply leading to node ``node_id`` of
    ``tree`` (built from ``s.traces``): each is the prefix followed by one continuation, graded
    against the set's reference. ``sampling.seed`` picks the stream: a repeated seed gives back the
    rollout cache's continuations, so callers pass a new one per draw. A stop keeps those finished."""
    if not 1 <= k <= MAX_RESAMPLE:
        raise UsageError(f"resample {k}: give 1 to {MAX_RESAMPLE} continuations")
    check_room(s.name, s.n, k)  # before drawing: a set over its cap keeps none of them
    sample, through = resample_point(tree, node_id)
    return _continue(
        s, tree, sample, through, node_id, k, continuer, sampling, cache, on_progress, should_stop
    )


def firm_up(
    s: SampleSet,
    tree: SampleTree,
    k: int,
    continuer: Continuer,
    sampling: Sampling,
    *,
    limit: int = MAX_FIRM_NODES,
    cache: RolloutCache | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Trace]:
    """New samples of set ``s`` that firm up the first ``limit`` undecided splits of ``tree``: ``k``
    continuations after the first step of each split's best and worst side (module docstring).
    Side ``j`` draws with seed ``sampling.seed + j``. A stop keeps the continuations finished."""
    from o3viz.clients import RolloutCache

    if not 1 <= k <= MAX_RESAMPLE:
        raise UsageError(f"firm up {k}: give 1 to {MAX_RESAMPLE} continuations a side")
    if not 1 <= limit <= MAX_FIRM_NODES:
        raise UsageError(f"firm up {limit} splits: give 1 to {MAX_FIRM_NODES}")
    points = [
        (side, side_point(tree, side)) for nid in undecided(tree)[:limit] for side in tree.nodes[nid].sides
    ]
    check_room(s.name, s.n, len(points) * k)  # before drawing: a set over its cap keeps none of them
    cache, out = cache or RolloutCache(), []
    for j, (side, (sample, through)) in enumerate(points):
        if should_stop and should_stop():
            break
        done = len(out)
        progress = (lambda d, _t, done=done: on_progress(done + d, len(points) * k)) if on_progress else None
        seeded = dataclasses.replace(sampling, seed=sampling.seed + j)
        out += _continue(s, tree, sample, through, side, k, continuer, seeded, cache, progress, should_stop)
        if on_progress:  # also when the rollout cache had them all
            on_progress(len(out), len(points) * k)
    return out


def _continue(s, tree, sample, through, node_id, k, continuer, sampling, cache, on_progress, should_stop):
    """``k`` whole samples: sample ``sample``'s reply through the end of its step ``through`` (none
    at -1), then a continuation."""
    from o3viz.branch.continuation import is_proxy
    from o3viz.branch.fork import Fork
    from o3viz.branch.resample import continue_reply
    from o3viz.clients import RolloutCache
    from o3viz.importers.build import build_trace
    from o3viz.importers.formats import Imported

    parent = s.traces[sample]
    rnd = parent.final
    if through >= len(rnd.steps):
        raise UsageError(f"node {node_id}: its sample has no step {through} to continue after")
    task, proxy = parent.task, is_proxy(parent, continuer)
    own = Fork(parent, len(parent.rounds) - 1, 0).own_prefix  # the reply prefix a branch round began with
    before = own + (rnd.text[: rnd.steps[through].end] if through >= 0 else "")
    _, got = continue_reply(
        parent, before, k, continuer, sampling, cache or RolloutCache(),
        on_progress=on_progress, should_stop=should_stop,
    )  # fmt: skip
    out = []
    for text in got:
        imp = Imported("sample", before + text, question=task.question or "", source_model=continuer.name)
        t = build_trace(imp, reference=task.reference, claims=False)
        t.info["sample"] = {
            "drawn": "resampled", "from_sample": tree.samples[sample].name,
            "after_step": step_ref(len(parent.rounds) - 1, through) if through >= 0 else None,
            "node": node_id, "continued_by": continuer.name, "proxy": proxy, "prefix_chars": len(before),
        }  # fmt: skip
        out.append(t)
    return out
