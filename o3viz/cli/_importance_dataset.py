"""``o3viz importance --dataset NAME --method resample --base-url URL``: counterfactual resampling
of every trace of a stored dataset, many requests at once to one OpenAI-compatible server
(``o3viz.analysis.importance.dataset_job``); each scored trace replaces its original in the store
(``o3viz.store.replace``)."""

from __future__ import annotations

import argparse
import sys

from o3viz.errors import O3vizError, UsageError

MAX_TRACES = 100_000


def _traces(store, args: argparse.Namespace) -> tuple[list, list[str]]:
    from o3viz.analysis.importance.reading import check_steps
    from o3viz.store.query import Query

    keys = [r[0] for r in store.select(Query(dataset=[args.dataset]), ("key",), max_rows=MAX_TRACES)]
    if not keys:
        raise UsageError(f"no traces in dataset {args.dataset!r} (`o3viz library list` shows the datasets)")
    out, skipped = [], []
    for key in keys:
        try:
            trace = store.editable_trace(key)  # scored below: never the process's shared copy
            if not -len(trace.rounds) <= args.round < len(trace.rounds):
                raise UsageError(f"has {len(trace.rounds)} round(s)")
            check_steps(trace.rounds[args.round], "resampling")
        except O3vizError as exc:
            skipped.append(f"{key}: {exc}")
            continue
        out.append((key, trace))
    return out, skipped


def run_dataset(args: argparse.Namespace, extra: dict, load, bar, budget=(3600.0, None)) -> int:
    """The ``--dataset`` form of ``o3viz importance`` (``extra``: the parsed --extra-body; ``load``
    and ``bar``: the command's model loader and progress bar)."""
    from o3viz.analysis.importance import add_importance
    from o3viz.analysis.importance.dataset_job import plan, prefetch_rollouts
    from o3viz.analysis.importance.resample import prefixes, resample_importance
    from o3viz.clients import OpenAIBackend, RolloutCache, Sampling, api_key_from_env
    from o3viz.run.prompt import rollout_prompt
    from o3viz.store.replace import branch_parents, replace_trace
    from o3viz.store.store import Store

    if args.method != "resample" or not args.base_url or not args.model:
        raise UsageError("--dataset runs --method resample against --base-url URL --model NAME")
    if args.trace is not None or args.out is not None:
        raise UsageError("--dataset scores the stored traces in place: give no TRACE and no --out")
    seconds, counted = budget  # --budget: seconds, or rollouts (500r) as a cap on new requests
    if counted is not None and counted.tokens is not None:
        raise UsageError("--dataset takes --budget in seconds (3600) or rollouts (500r), not tokens")
    if counted is not None:
        args.max_rollouts = min(args.max_rollouts or counted.rollouts, counted.rollouts)
    store = Store()
    traces, skipped = _traces(store, args)
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    backend = OpenAIBackend(
        args.base_url, args.model, api_key_from_env(), retries=args.retries, timeout=args.request_timeout,
        extra_body=extra, budget_s=seconds,
    )  # fmt: skip
    sampling = Sampling(args.max_new_tokens, args.temperature, args.top_p, args.seed)
    cache = RolloutCache(args.cache_dir)
    jobs = [(rollout_prompt(t, None, args.round), prefixes(t, args.round)) for _, t in traces]
    _, cached = plan(jobs, backend, args.k, sampling, cache)
    need = sum(len(pre) for _, pre in jobs) * args.k - cached
    print(
        f"cost: {len(traces)} traces, {need} rollouts to fetch ({cached} cached) via {backend.name}",
        file=sys.stderr,
    )
    if args.dry_run:
        return 0
    progress = bar("rollouts", "rollouts")
    try:
        rep = prefetch_rollouts(
            jobs, backend, args.k, sampling, cache, concurrency=args.concurrency,
            max_rollouts=args.max_rollouts, should_stop=backend.spent, on_progress=progress,
        )  # fmt: skip
    finally:
        progress.close()
    print(f"rollouts: {rep.line()} at concurrency {args.concurrency}", file=sys.stderr)
    for e in rep.errors:
        print(f"failed: {e}", file=sys.stderr)
    reader = load(args.reader)
    complete = steps = 0
    branches = branch_parents(store)
    for old, trace in traces:  # scoring reads the cache only (should_stop): no request here
        rec = resample_importance(
            trace, backend, reader, k=args.k, sampling=sampling, threshold=args.threshold, cache=cache,
            max_rollouts=args.max_rollouts, prompt=rollout_prompt(trace, None, args.round),
            round_index=args.round, should_stop=lambda: True,
        )  # fmt: skip
        add_importance(trace, rec, args.round)
        replace_trace(store, old, trace, branches=branches)  # in place: dataset, record, labels, branches
        complete += bool(rec.info.get("complete"))
        steps += sum(s is not None for s in rec.scores)
    print(
        f"resample: {complete}/{len(traces)} traces of {args.dataset!r} complete ({steps} steps scored), "
        f"saved in {store.root}"
    )
    return 0
