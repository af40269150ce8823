"""``o3viz branch``: fork a trace at step R:I. ``--edit TEXT`` continues the prompt, the steps
before it and the edited step with the trace's own settings; ``--resample K`` writes one trace of
K continuations from the reply before the step; ``--until-differs`` resamples until the step's
content no longer reappears (or, ``--until-differs answer``, the answer changes), at most
``--max-tries`` times. The cost is printed before anything runs; the branch is written to --out
and enters the store linked to its parent (which is stored too)."""

from __future__ import annotations

import argparse
import gzip
import math
import sys
from pathlib import Path

from o3viz.cli._trace_arg import TRACE_HELP, open_trace
from o3viz.cli.run import check_out
from o3viz.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("branch", help="edit a step and continue, or resample from it")
    p.add_argument("trace", type=Path, help="the trace to branch: " + TRACE_HELP)
    p.add_argument("--step", required=True, help="the step to fork at, R:I (round R, step I)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--edit", metavar="TEXT", help="what the step should say; the model continues from it")
    how.add_argument(
        "--resample", type=int, metavar="K", help="K continuations from the reply before the step"
    )
    how.add_argument(
        "--until-differs",
        nargs="?",
        const="step",
        choices=("step", "answer"),
        help="resample until the step's content no longer reappears (step) or the answer changes (answer)",
    )
    p.add_argument(
        "--says", metavar="TEXT", help="with --until-differs step: the text that must stop reappearing"
    )
    p.add_argument("--max-tries", type=int, default=16, help="cap on --until-differs tries (16)")
    p.add_argument(
        "--max-new-tokens", type=int, help="new tokens per continuation (default: the trace's own)"
    )
    p.add_argument("--temperature", type=float, default=0.7, help="resampling temperature (0.7)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    p.add_argument(
        "--model", help="with --base-url: the endpoint's model; else a local model (default: embedded)"
    )
    p.add_argument("--request-timeout", type=float, default=120.0, help="seconds per endpoint request (120)")
    p.add_argument("--cache-dir", type=Path, help="rollout cache (default: ~/.cache/o3viz/rollouts)")
    p.add_argument("--out", type=Path, required=True, help="where to write the branch trace")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--no-store", action="store_true", help="do not add the branch to the trace store")
    p.set_defaults(func=run)


def check_numbers(args: argparse.Namespace) -> None:
    """Every number argument in its range, before any work (a NaN temperature generated for 15 s,
    then failed on save and left a rollout cached under a NaN key); else one ``UsageError`` line."""
    from o3viz.branch.resample import MAX_K
    from o3viz.trace.core import MAX_TOKENS

    if not math.isfinite(args.temperature) or args.temperature < 0:
        raise UsageError(f"--temperature {args.temperature}: give a number from 0 (0 is greedy)")
    if not math.isfinite(args.request_timeout) or args.request_timeout <= 0:
        raise UsageError(f"--request-timeout {args.request_timeout}: give a number of seconds above 0")
    if args.max_new_tokens is not None and not 1 <= args.max_new_tokens <= MAX_TOKENS:
        raise UsageError(f"--max-new-tokens {args.max_new_tokens}: give 1 to {MAX_TOKENS:,}")
    if args.resample is not None and not 1 <= args.resample <= MAX_K:
        raise UsageError(
            f"--resample {args.resample}: give 1 to {MAX_K} continuations (a trace holds {MAX_K} rounds)"
        )
    if args.until_differs is not None and not 1 <= args.max_tries <= MAX_K:
        raise UsageError(f"--max-tries {args.max_tries}: give 1 to {MAX_K}")


def _continuer(args):
    from o3viz.branch import Continuer
    from o3viz.clients import OpenAIBackend, api_key_from_env

    if args.base_url:
        if not args.model:
            raise UsageError("--base-url needs --model, the endpoint's model name")
        return Continuer(
            OpenAIBackend(
                args.base_url, args.model, api_key_from_env(), retries=1, timeout=args.request_timeout
            )
        )
    from o3viz.model import load_model

    return Continuer(None, *load_model(args.model))


def _cost(args, trace) -> str:
    """The cost line: an edit's default budget is the parent's remaining length; the time comes
    from this machine's measured speed (``o3viz.run.speed``), or says it is not measured yet."""
    from o3viz.branch import find_fork
    from o3viz.branch.fork import measured_cost

    n = 1 if args.edit is not None else args.resample if args.resample is not None else args.max_tries
    own = int((trace.provenance.settings or {}).get("max_new_tokens") or 256)
    tokens = args.max_new_tokens or (
        find_fork(trace, args.step).default_budget if args.edit is not None else own
    )
    model = f"openai:{args.base_url.rstrip('/')}:{args.model}" if args.base_url else "local:*"
    return measured_cost(n, tokens, model, "edit" if args.edit is not None else "resample").line()


def _make(args, trace, continuer, key: str):
    from o3viz.branch import edit_and_continue, resample_from, resample_until
    from o3viz.clients import RolloutCache, Sampling

    if args.edit is not None:
        return edit_and_continue(
            trace, args.step, args.edit, continuer, parent_key=key, max_new_tokens=args.max_new_tokens
        )
    tokens = args.max_new_tokens or int((trace.provenance.settings or {}).get("max_new_tokens") or 256)
    sampling, cache = Sampling(tokens, args.temperature, 0.95, args.seed), RolloutCache(args.cache_dir)
    if args.resample is not None:
        return resample_from(trace, args.step, args.resample, continuer, sampling, cache)
    return resample_until(
        trace,
        args.step,
        continuer,
        sampling,
        cache,
        until=args.until_differs,
        says=args.says,
        max_tries=args.max_tries,
    )


def run(args: argparse.Namespace) -> int:
    from o3viz.branch import add_branch, check_edit, find_fork
    from o3viz.store.store import Store, content_key
    from o3viz.trace.files import read_bounded
    from o3viz.trace.io import MAX_FILE_BYTES

    check_out(args.out, args.overwrite)
    src = open_trace(args.trace)
    trace = src.trace
    find_fork(trace, args.step)  # bad step ids, a trace without a prompt: before any model loads
    if args.edit is not None:
        check_edit(args.edit)
    check_numbers(args)  # before the cost line: it must never say "-5 continuations"
    print(f"cost: {_cost(args, trace)}", file=sys.stderr)
    store = None if args.no_store else Store()
    if src.key is not None:  # already in the store
        key = src.key
    elif store is not None:
        key = store.add_file(args.trace, source="run")
    else:  # the key the store would give it (gzipped as the store keeps it)
        data = read_bounded(args.trace, MAX_FILE_BYTES)
        key = content_key(data if data[:2] == b"\x1f\x8b" else gzip.compress(data, mtime=0))
    branch = _make(args, trace, _continuer(args), key)
    branch.parent.key = key
    path = branch.save(args.out, overwrite=args.overwrite)
    stored = add_branch(store, branch) if store else None
    p = branch.parent
    said = {k: p.info[k] for k in ("tries", "found", "answers") if k in p.info}
    proxy = " (continued by a proxy: not the model that wrote the trace)" if p.info.get("proxy") else ""
    print(
        f"{p.kind} branch at step {p.step}: {len(branch.rounds)} round(s), answer {branch.final.answer or '—'}"
        f"{' ' + str(said) if said else ''}{proxy} -> {path}" + (f" (store key {stored})" if stored else "")
    )
    return 0
