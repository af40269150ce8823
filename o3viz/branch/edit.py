"""Edit and continue: the prompt, every step before the fork and the edited step, continued with
the parent's own settings (``request_from_trace``). Locally that is one run through ``execute``
(capture, DAA, checks, the verify loop where the parent used it); through an endpoint it is one
greedy completion made a round."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from o3viz.branch.continuation import Continuer, base_prompt, is_proxy, text_round
from o3viz.branch.fork import check_edit, find_fork, request_from_trace
from o3viz.clients import Sampling
from o3viz.errors import UsageError
from o3viz.run.dispatch import execute
from o3viz.run.loop import OnToken
from o3viz.run.prompt import refuse_control_tokens
from o3viz.run.provenance import library_versions
from o3viz.run.speed import SpeedLog
from o3viz.trace import Provenance, Task, Trace
from o3viz.trace.branching import BranchParent
from o3viz.trace.core import timestamp


def edit_and_continue(
    trace: Trace,
    step: str,
    text: str,
    continuer: Continuer,
    *,
    parent_key: str = "",
    max_new_tokens: int | None = None,
    min_new_tokens: int = 0,
    on_token: OnToken | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The branch where step ``step`` ("R:I") of ``trace`` says ``text``: a full trace whose
    ``parent`` names ``parent_key``, the step, the edited and the original text
    (``min_new_tokens``: EOS suppressed that long, for equal-length benchmarks)."""
    fork = find_fork(trace, step)
    prefix = fork.before + check_edit(text)
    req = dataclasses.replace(request_from_trace(fork, prefix, max_new_tokens), min_new_tokens=min_new_tokens)
    if continuer.local:
        t0 = time.perf_counter()
        branch = execute(
            continuer.model, continuer.tokenizer, req, on_token=on_token, should_stop=should_stop
        )
        made = sum(int(r.info.get("generated_tokens") or len(r.tokens)) for r in branch.rounds)
        SpeedLog().record(continuer.name, "edit", made, time.perf_counter() - t0)
        branch.task.reference = (
            branch.task.reference or trace.task.reference
        )  # a free prompt's run knows none
    elif continuer.backend is not None:
        refuse_control_tokens(prefix)
        branch = _by_endpoint(fork.trace, base_prompt(fork, continuer.tokenizer), prefix, continuer, req)
    else:
        raise UsageError("nothing to continue with: load a local model or give --base-url and --model")
    branch.parent = BranchParent(
        parent_key,
        fork.step_id,
        "edit",
        edited=text,
        original=fork.step.text,
        prefix_chars=len(fork.before),
        info={
            "continued_by": continuer.name,
            "proxy": is_proxy(trace, continuer),
            "prefix_steps": fork.prefix_steps(),  # the parent's steps before the fork, in its numbering
            "max_new_tokens": req.max_new_tokens,
        },
    )
    return branch


def _by_endpoint(trace: Trace, rendered: str, prefix: str, continuer: Continuer, req) -> Trace:
    """One greedy completion of ``rendered + prefix`` from the backend, as a one-round trace."""
    created = timestamp()
    sampling = Sampling(max_tokens=req.max_new_tokens, temperature=0.0, top_p=1.0, seed=req.seed)
    out = continuer.backend.complete(rendered + prefix, 1, sampling)[0]
    rnd = text_round(trace, out, rendered, prefix)
    task = Task(trace.task.question, trace.task.kind, trace.task.source, trace.task.id, trace.task.reference)
    prov = Provenance(
        model_id=continuer.name,
        library_versions=library_versions(),
        settings={"max_new_tokens": req.max_new_tokens, "sampling": sampling.key()},
        seed=req.seed,
        created_at=created,
        finished_at=timestamp(),
    )
    return Trace(task, [rnd], prov)
