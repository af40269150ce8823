"""What the Samples page uses beyond ``o3viz.app``: the tree, its layout and figure, and its
background work. Kept apart from ``o3viz.app`` as ``o3viz.app.running`` is: the tree's interval
statistics live in ``o3viz.analysis.importance``, whose package imports torch. The jobs
(``o3viz.app.jobs.Job``; no streamlit):

- ``SampleSetJob``: N samples of a prompt or task on the local model, stored as a new set; a stop
  keeps the finished samples as a smaller set (two at least) and says so;
- ``ResampleNodeJob``: K continuations from one node of a set's tree
  (``o3viz.samples.resample.resample_node``), added to the set (``grow_set``);
- ``FirmUpJob``: K continuations after each side of every split the fork test could not decide
  (``o3viz.samples.resample.firm_up``), added to the set, and the forks before and after.

Each job's ``result`` is a ``SetOutcome``: the set, how many samples it kept of those asked for,
and the line the page shows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from o3viz.app.jobs import Job, Progress
from o3viz.errors import UsageError
from o3viz.figures.sample_tree import sample_tree_figure
from o3viz.samples.request import SampleRequest, check_room, new_set_name
from o3viz.samples.resample import MAX_FIRM_NODES, MAX_RESAMPLE, resample_point, undecided
from o3viz.samples.tree import SampleTree, build_tree
from o3viz.samples.view_data import TOP_FORKS, tree_view_data
from o3viz.store.query import Query
from o3viz.store.store import Store

__all__ = [
    "MAX_FIRM_NODES",
    "MAX_RESAMPLE",
    "FirmUpJob",
    "TOP_FORKS",
    "ResampleNodeJob",
    "SampleSetJob",
    "SampleTree",
    "SetOutcome",
    "build_tree",
    "resample_point",
    "sample_tree_figure",
    "tree_view_data",
    "undecided",
]

Load = Callable[[], tuple[Any, Any]]  # () -> (model, tokenizer), loaded in the job's thread
_D = SampleRequest()  # the defaults of every sampling setting (the command line's too)


@dataclass
class SetOutcome:
    """How a sampling job ended: the set's name (None: nothing stored), the samples kept of those
    asked for, whether a stop cut it short, and one line for people."""

    name: str | None
    kept: int
    asked: int
    stopped: bool
    line: str


class SampleSetJob(Job):
    """``req.n`` samples of ``req``'s prompt or task on the local model, stored as set
    ``req.set_name`` (made up when None). Bad settings and a taken name raise here, before any
    model loads; progress counts finished samples and the tokens of the current batch."""

    def __init__(self, req: SampleRequest, load: Load, store: Store) -> None:
        req.validate()
        self.name = req.set_name or new_set_name()
        if store.count(Query(dataset=[self.name]), cap=1):
            raise UsageError(f"set {self.name}: the store already has a dataset of that name; pick another")
        self.request, self.store = req, store

        def work(report, should_stop) -> SetOutcome:
            from o3viz.samples.draw import draw_local, draw_settings
            from o3viz.samples.sets import save_set

            model, tokenizer = load()
            if should_stop():
                return SetOutcome(None, 0, req.n, True, "Stopped before the first token: no set was made.")

            def progress(done: int, tokens: int, n: int) -> None:
                label = f"{done} of {n} samples finished · token {tokens} of {req.max_new_tokens}"
                report(Progress(done * req.max_new_tokens + tokens, n * req.max_new_tokens, label))

            report(Progress(0, req.n * req.max_new_tokens, "reading the prompt (prefill)…"))
            drawn = draw_local(model, tokenizer, req, on_progress=progress, should_stop=should_stop)
            kept = len(drawn.traces)
            if kept < 2:
                line = f"Stopped with {kept} finished sample(s): a set needs 2, so nothing was stored."
                return SetOutcome(None, kept, req.n, drawn.stopped, line)
            save_set(store, self.name, drawn.traces, draw_settings(req, drawn))
            line = f"Set {self.name}: {kept} samples stored."
            if drawn.stopped:
                line = f"Stopped: set {self.name} keeps the {kept} finished samples of the {req.n} asked for (a smaller set)."
            return SetOutcome(self.name, kept, req.n, drawn.stopped, line)

        super().__init__(work, start=Progress(0, req.n * req.max_new_tokens, "loading the model…"))


def _more_for_set(store: Store, name: str, expect_n: int, load: Load, plan, draw, ended) -> Callable:
    """The work of a job that adds continuations to set ``name`` with the local model: the set is
    read again, and one grown meanwhile (not ``expect_n`` samples) is refused in one line.
    ``plan(s, tree)`` gives (how many continuations, the progress line) or a ``SetOutcome`` that
    ends the job before the model loads; ``draw(s, tree, continuer, on_progress, should_stop)``
    returns the new traces; ``ended(s, tree, new, asked, stopped, grown)`` the last line."""

    def work(report, should_stop) -> SetOutcome:
        from o3viz.branch.continuation import Continuer
        from o3viz.samples.sets import grow_set, read_set

        s = read_set(store, name)
        if s.n != expect_n:
            return SetOutcome(
                name, 0, 0, False, f"Set {name} changed meanwhile ({s.n} samples now): nothing drawn."
            )
        tree = build_tree(s.traces)
        planned = plan(s, tree)
        if isinstance(planned, SetOutcome):
            return planned
        asked, label = planned
        check_room(name, s.n, asked)  # before the model loads: a set over its cap keeps none
        model, tokenizer = load()
        report(Progress(0, asked, label))
        new = draw(
            s, tree, Continuer(model=model, tokenizer=tokenizer),
            lambda done, total: report(Progress(done, total, f"{done} of {total} continuations")),
            should_stop,
        )  # fmt: skip
        if not new:
            return SetOutcome(
                name, 0, asked, True, "Stopped before a continuation finished: the set is unchanged."
            )
        stopped = bool(should_stop())  # (a side that ends its samples adds none: not a stop)
        grown = grow_set(store, name, new, {"stopped": True} if stopped else {})
        return SetOutcome(name, len(new), asked, stopped, ended(s, tree, new, asked, stopped, grown))

    return work


class ResampleNodeJob(Job):
    """``k`` continuations from node ``node`` of set ``name``'s tree with the local model, added to
    the set. The tree is rebuilt from the stored set first, so the node is the one the page drew
    for that many samples (``expect_n``; a set grown meanwhile is refused in one line)."""

    def __init__(
        self, store: Store, name: str, node: int, k: int, load: Load, *, expect_n: int,
        max_new_tokens: int = _D.max_new_tokens, temperature: float = _D.temperature,
    ) -> None:  # fmt: skip
        if not 1 <= k <= MAX_RESAMPLE:
            raise UsageError(f"K = {k}: give 1 to {MAX_RESAMPLE} continuations")
        self.name, self.node, self.k = name, node, k

        def draw(s, tree, continuer, on_progress, should_stop):
            from o3viz.clients import Sampling
            from o3viz.samples.resample import resample_node

            sampling = Sampling(max_new_tokens, temperature, 0.95, 1000 + s.n)  # a new stream per size
            return resample_node(
                s, tree, node, k, continuer, sampling, on_progress=on_progress, should_stop=should_stop
            )

        def ended(s, tree, new, asked, stopped, grown) -> str:
            if stopped:
                return f"Stopped: {len(new)} of {k} continuations from node {node} added ({grown.n} in all)."
            return f"Set {name}: {len(new)} continuations from node {node} added, {grown.n} samples in all."

        def plan(s, tree) -> tuple[int, str]:
            return k, f"drawing {k} continuations from node {node}…"

        work = _more_for_set(store, name, expect_n, load, plan, draw, ended)
        super().__init__(work, start=Progress(0, k, "loading the model…"))


class FirmUpJob(Job):
    """``k`` continuations after each side of the first ``splits`` undecided splits of set
    ``name``'s tree, with the local model, added to the set. Like ``ResampleNodeJob``, the tree is
    rebuilt from the stored set and a set grown meanwhile (``expect_n``) is refused in one line."""

    def __init__(
        self, store: Store, name: str, k: int, load: Load, *, expect_n: int, splits: int = MAX_FIRM_NODES,
        max_new_tokens: int = _D.max_new_tokens, temperature: float = _D.temperature,
    ) -> None:  # fmt: skip
        if not 1 <= k <= MAX_RESAMPLE:
            raise UsageError(f"K = {k}: give 1 to {MAX_RESAMPLE} continuations a side")
        self.name, self.k = name, k

        def plan(s, tree):
            todo = len(undecided(tree)[:splits])
            if not todo:
                return SetOutcome(name, 0, 0, False, f"Set {name}: no undecided split to firm up.")
            return 2 * todo * k, f"drawing {k} continuations a side for {todo} splits…"

        def draw(s, tree, continuer, on_progress, should_stop):
            from o3viz.clients import Sampling
            from o3viz.samples.resample import firm_up

            sampling = Sampling(max_new_tokens, temperature, 0.95, 5000 + s.n)  # a new stream per size
            return firm_up(
                s,
                tree,
                k,
                continuer,
                sampling,
                limit=splits,
                on_progress=on_progress,
                should_stop=should_stop,
            )

        def ended(s, tree, new, asked, stopped, grown) -> str:
            forks = len(build_tree(grown.traces).forks)
            if stopped:
                return f"Stopped: {len(new)} continuations added ({grown.n} in all); forks now {forks}."
            todo = asked // (2 * k)
            return (
                f"Set {name}: {len(new)} continuations added after the sides of {todo} undecided "
                f"split(s), {grown.n} samples in all; forks: {len(tree.forks)} before, {forks} now."
            )

        work = _more_for_set(store, name, expect_n, load, plan, draw, ended)
        super().__init__(work, start=Progress(0, 1, "loading the model…"))
