"""paired: dataset-scale paired comparison on GSM8K's 1,319 test questions answered by two systems
(6B fine-tuned vs 6B with a verifier, ``../shared/data/gsm8k/gsm8k_example_model_solutions.jsonl``),
imported as two datasets. Prints the time to load the two datasets' rows, the time of the whole
comparison (loading, pairing, the 2×2 table, McNemar, every paired measure with its interval) and
their ratio; with the columnar copy refreshed and without it (SQLite). Fails unless all 1,319
questions paired and the table equals a count straight from the file. Goal: ≤ 2 s server side."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

A, B = "6b_finetuning", "6b_verification"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, help="first N questions (default: all 1,319)")
    p.add_argument("--repeat", type=int, default=5, help="timed repetitions (the best is kept)")
    p.add_argument("--workers", type=int, default=2, help="import worker processes")


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _import(tmp: Path, src: Path, limit: int | None, workers: int):
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store
    from o3viz.testing.paired import system_files

    store = Store(tmp / "store")
    for path, name in zip(system_files(src, (A, B), tmp, limit), ("A", "B"), strict=True):
        import_dataset(path, store, ImportOptions(name), workers=workers)
    return store


def _check(result, want: dict) -> None:
    t = result.table
    got = {"both": t.both, "a_only": t.a_only, "b_only": t.b_only, "neither": t.neither}
    if result.n != want["n"] or got != {k: want[k] for k in got}:
        raise SystemExit(f"paired: measured the wrong thing: {result.n} pairs, {got}; the file says {want}")


def run(args: argparse.Namespace) -> int:
    from o3viz.analysis.paired import PairedCompareRequest, Side
    from o3viz.paths import data_dir
    from o3viz.store.columnar import refresh
    from o3viz.store.paired import compare_datasets, side_frame
    from o3viz.testing.paired import expected

    src = data_dir() / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    if not src.exists():
        raise SystemExit(f"paired: {src} not found")
    want = expected(src, A, B, args.limit)
    req = PairedCompareRequest(Side("A"), Side("B"), grade="source")
    with tempfile.TemporaryDirectory(prefix="o3viz-bench-paired-") as d:
        t0 = time.perf_counter()
        store = _import(Path(d), src, args.limit, args.workers)
        print(f"paired_import_seconds: {time.perf_counter() - t0:.1f}")
        print(f"paired_traces: {store.count()}")
        for engine in ("sqlite", "columnar"):
            if engine == "columnar":
                refresh(store)
            load, _ = _best(lambda: (side_frame(store, req.a), side_frame(store, req.b)), args.repeat)
            full, result = _best(lambda: compare_datasets(store, req), args.repeat)
            _check(result, want)
            print(f"paired_{engine}_load_rows_seconds: {load:.3f}")
            print(f"paired_{engine}_compare_seconds: {full:.3f} (goal ≤ 2 s)")
            print(f"paired_{engine}_compare_over_load: {full / load:.2f}")
        print(f"paired_pairs: {result.n} ({result.table}; McNemar p = {result.p_mcnemar:.3g})")
        print(f"paired_measures: {len(result.measures)}")
        if full > 2.0:
            raise SystemExit(f"paired: the comparison took {full:.2f} s, over the 2 s goal")
    return 0
