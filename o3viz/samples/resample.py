"""More samples from one node of a set's tree: "Resample from here" draws K continuations of the
reply that leads to a node (the branching machinery's ``resample_from``) and makes each one a
whole sample of the set (the prefix, then the continuation), so the set grows and the node's
estimate firms up in place.

Where a node's prefix ends: after the node's last step, so the new samples pass through the node
and split below it. A leaf ends its samples: there it is the step the node starts with, so the new
samples pass through its parent and branch beside it. The root is the question: fresh samples.

**Firming up.** ``firm_up`` applies the same draw to every split the fork test could not decide
(``undecided``: a node whose best and worst side have ``MIN_SIDE`` graded samples each but whose
Newcombe interval includes 0, typically 2 to 6 samples a side): K continuations after the first
step of each of its two sides, so both sides grow by K and the test is run again on more samples.
A side whose samples all end at its first step has nothing to continue and is left as it is.

>>> from o3viz.samples.tree import build_tree
>>> from o3viz.testing.sample_sets import split_set
>>> tree = build_tree(split_set(2, 2))
>>> resample_point(tree, 1), resample_point(tree, 2), resample_point(tree, 0)
((0, 2), (0, 2), (0, 0))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from o3viz.errors import UsageError
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
    """``(sample, step)``: the member sample whose reply is continued and the index of the step the
    continuations replace (see the module docstring)."""
    if not 0 <= node_id < len(tree.nodes):
        raise UsageError(f"node {node_id}: the tree has nodes 0 to {len(tree.nodes) - 1}")
    node = tree.nodes[node_id]
    if node.parent is None:
        return node.members[0], 0
    end = node.depth + node.steps  # the first step after the node
    sample = next((i for i in node.members if end < len(tree.samples[i].steps)), None)
    return (sample, end) if sample is not None else (node.members[0], node.depth)


def undecided(tree: SampleTree) -> list[int]:
    """The splits the fork test could not decide, largest gap first (then most samples): nodes with
    two sides of ``MIN_SIDE`` graded samples that are not forks."""
    nodes = [n for n in tree.nodes if n.sides and not n.fork]
    return [n.id for n in sorted(nodes, key=lambda n: (-(n.gap or 0.0), -n.samples, n.id))]


def side_point(tree: SampleTree, child_id: int) -> tuple[int, int] | None:
    """``(sample, step)`` that continues a side after its first step: a member with a step after
    it, and that step's index (the one the continuations replace); None when every member ends at
    its first step."""
    child = tree.nodes[child_id]
    step = child.depth + 1
    sample = next((i for i in child.members if step < len(tree.samples[i].steps)), None)
    return None if sample is None else (sample, step)


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
    sample, step = resample_point(tree, node_id)
    return _continue(s, tree, sample, step, node_id, k, continuer, sampling, cache, on_progress, should_stop)


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
        (side, p)
        for nid in undecided(tree)[:limit]
        for side in tree.nodes[nid].sides
        if (p := side_point(tree, side)) is not None
    ]
    cache, out = cache or RolloutCache(), []
    for j, (side, (sample, step)) in enumerate(points):
        if should_stop and should_stop():
            break
        done = len(out)
        progress = (lambda d, _t, done=done: on_progress(done + d, len(points) * k)) if on_progress else None
        seeded = dataclasses.replace(sampling, seed=sampling.seed + j)
        out += _continue(s, tree, sample, step, side, k, continuer, seeded, cache, progress, should_stop)
        if on_progress:  # also when the rollout cache had them all
            on_progress(len(out), len(points) * k)
    return out


def _continue(s, tree, sample, step, node_id, k, continuer, sampling, cache, on_progress, should_stop):
    """``k`` whole samples: sample ``sample``'s reply before its step ``step``, then a continuation."""
    from o3viz.branch.continuation import is_proxy
    from o3viz.branch.resample import resample_from
    from o3viz.clients import RolloutCache
    from o3viz.importers.build import build_trace
    from o3viz.importers.formats import Imported

    parent = s.traces[sample]
    rnd = parent.final
    if step >= len(rnd.steps):
        raise UsageError(f"node {node_id}: its sample has no step {step} to resample")

    ref = step_ref(len(parent.rounds) - 1, step)
    branch = resample_from(
        parent, ref, k, continuer, sampling, cache or RolloutCache(),
        on_progress=on_progress, should_stop=should_stop,
    )  # fmt: skip
    task, proxy = parent.task, is_proxy(parent, continuer)
    own = int(rnd.info.get("reply_prefix_chars") or 0)
    before = (rnd.rendered_prompt[-own:] if own else "") + rnd.text[: rnd.steps[step].start]
    out = []
    for r in branch.rounds:
        imp = Imported("sample", before + r.text, question=task.question or "", source_model=continuer.name)
        t = build_trace(imp, reference=task.reference, claims=False)
        t.info["sample"] = {
            "drawn": "resampled", "from_sample": tree.samples[sample].name, "from_step": ref,
            "node": node_id, "continued_by": continuer.name, "proxy": proxy, "prefix_chars": len(before),
        }  # fmt: skip
        out.append(t)
    return out
