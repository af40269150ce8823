"""resample_dataset: dataset-wide counterfactual resampling against ``transformers serve`` (the
embedded model, CPU, 127.0.0.1): rollouts per second of the single-request loop (``collect_rollouts``,
one trace after another, the ``o3viz importance TRACE`` path) against the dataset job's concurrent
prefetch (``o3viz.analysis.importance.dataset_job``) at ``--concurrency``, each from an empty cache,
interleaved ``--repeat`` times; with ``--continuous-batching`` the server batches concurrent
requests (what vLLM does), without it it serves them one at a time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--records", type=int, default=2, help="toy dataset records to import (their traces)")
    p.add_argument("--k", type=int, default=2, help="rollouts per prefix")
    p.add_argument("--max-new-tokens", type=int, default=8)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--continuous-batching", action="store_true", help="start the server with it")


def _jobs(tmp: Path, records: int):
    from o3viz.analysis.importance.resample import prefixes
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.run.prompt import rollout_prompt
    from o3viz.store.query import Query
    from o3viz.store.store import Store
    from o3viz.testing.datasets import write_reasoning_jsonl

    store = Store(tmp / "store")
    import_dataset(write_reasoning_jsonl(tmp / "toy.jsonl", records), store, ImportOptions("toy"), workers=0)
    traces = [store.trace(r["key"]) for r in store.rows(Query(limit=1000))]
    return [(rollout_prompt(t), prefixes(t)) for t in traces]


def run(args: argparse.Namespace) -> int:
    from o3viz.analysis.importance.dataset_job import prefetch_rollouts
    from o3viz.analysis.importance.resample import collect_rollouts
    from o3viz.clients import OpenAIBackend, RolloutCache, Sampling
    from o3viz.model import resolve_model
    from o3viz.testing.serve import SAMPLING_BODY, transformers_serve

    with tempfile.TemporaryDirectory(prefix="o3viz-bench-resample-") as d:
        tmp = Path(d)
        jobs = _jobs(tmp, args.records)
        n = sum(len(pre) for _, pre in jobs) * args.k
        print(f"traces: {len(jobs)}")
        print(f"rollouts_per_run: {n}")
        sampling = Sampling(max_tokens=args.max_new_tokens, seed=1)
        path = resolve_model(None)[0]
        with transformers_serve(path, tmp / "serve.log", continuous_batching=args.continuous_batching) as url:
            backend = OpenAIBackend(url, path, extra_body=SAMPLING_BODY, timeout=600)
            backend.complete("warm up", 1, sampling)
            rates: dict[str, list[float]] = {"loop": [], "job": []}
            for r in range(args.repeat):  # interleaved: machine load hits both alike
                cache = RolloutCache(tmp / f"loop{r}")
                t0 = time.perf_counter()
                for prompt, pre in jobs:
                    collect_rollouts(backend, prompt, pre, args.k, sampling, cache)
                rates["loop"].append(n / (time.perf_counter() - t0))
                rep = prefetch_rollouts(
                    jobs,
                    backend,
                    args.k,
                    sampling,
                    RolloutCache(tmp / f"job{r}"),
                    concurrency=args.concurrency,
                )
                rates["job"].append(rep.per_s if rep.fetched == n else float("nan"))
        loop, job = (statistics.median(rates[x]) for x in ("loop", "job"))
        mode = "continuous_batching" if args.continuous_batching else "serial_server"
        print(f"rollouts_per_s_single_request_loop_{mode}: {loop:.2f}")
        print(f"rollouts_per_s_concurrency_{args.concurrency}_{mode}: {job:.2f}")
        print(f"concurrency_{args.concurrency}_vs_loop_{mode}: {job / loop:.2f}")
    return 0
