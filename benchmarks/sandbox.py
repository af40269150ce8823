"""sandbox: per-verdict time of the judge/candidate split against one sandboxed process.

The baseline is the single-process design (tests and code in one interpreter), run through the
same harness as a reference job (``trusted_code``), so the two differ only in the split: a second
sandboxed process and plain-data calls over a pipe. Tasks are HumanEval's canonical solutions,
interleaved (split, single, split, single, ...) in one run; the ratio is of medians.
"""

from __future__ import annotations

import argparse
import statistics
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", type=int, default=40, help="first N HumanEval tasks (default 40)")
    p.add_argument("--isolation", default="auto", help="isolation mode (default auto)")
    p.add_argument("--repeat", type=int, default=2, help="passes over the tasks (default 2)")


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    from o3viz.tasks.code import load_humaneval
    from o3viz.verify.code import build_job
    from o3viz.verify.sandbox.run import resolve_isolation, run_sandboxed

    mode = resolve_isolation(args.isolation)
    tasks = load_humaneval()[: args.tasks]
    split, single, calls = [], [], 0
    for _ in range(args.repeat):
        for task in tasks:
            job = build_job(task.tests, task.entry_point)
            calls += len(job["steps"])
            both = dict(job, candidate_code=task.canonical_solution, context=task.context)
            alone = dict(job, trusted_code=task.canonical_solution)
            split.append(_time(lambda j=both: run_sandboxed(dict(j), isolation=mode)))
            single.append(_time(lambda j=alone: run_sandboxed(dict(j), isolation=mode)))
    a, b = statistics.median(split), statistics.median(single)
    print(f"isolation: {mode}")
    print(f"verdicts_each: {len(split)}")
    print(f"split_median_s: {a:.4f}")
    print(f"single_process_median_s: {b:.4f}")
    print(f"overhead_per_verdict_s: {a - b:.4f}")
    print(f"ratio_split_vs_single: {a / b:.2f}")
    print(f"split_mean_s: {statistics.mean(split):.4f}")
    print(f"single_process_mean_s: {statistics.mean(single):.4f}")
    return 0
