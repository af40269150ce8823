"""library: the trace store. Import throughput (GSM8K solutions per second with 1 and 2 worker
processes, against the in-process import), then over stores of 10,000 and 100,000 traces: an
index query with filters and full-text search, the Library page's first render (AppTest) and the
Dataset page's aggregates over 10,000 traces, each at both sizes (growth) and against its goal.

The large stores hold index rows only (no trace files): rows and search text come from real traces
imported from ``../shared/data`` (GSM8K's graded GPT-3 solutions, the R1 MATH-500 traces), copied
with variations (dataset, model, grading, length, a word of the text). Writing 100,000 trace files
would measure the disk, not the index. Everything lives in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from o3viz.paths import data_dir

GSM8K = "gsm8k/gsm8k_example_model_solutions.jsonl"
R1 = "traces/topology_math500_deepseek_r1.jsonl"
WORDS = ("eggs", "total", "wait", "check", "dollars", "minutes", "hence", "remainder", "twice", "answer")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--import-lines", type=int, default=100, help="GSM8K lines (4 solutions each) to import")
    p.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000], metavar=("SMALL", "LARGE"))
    p.add_argument("--repeat", type=int, default=2, help="repetitions of each timed import (median)")
    p.add_argument("--skip-import", action="store_true", help="only the store figures")


def _subset(src: Path, lines: int, out: Path) -> Path:
    with src.open(encoding="utf-8") as f:
        out.write_text("".join(next(f) for _ in range(lines)), encoding="utf-8")
    return out


def _throughput(path: Path, workers: int, tmp: Path) -> float:
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store

    store = Store(Path(tempfile.mkdtemp(dir=tmp)))
    rep = import_dataset(path, store, ImportOptions("bench"), workers=workers)
    return rep.traces / rep.seconds


def bench_import(args, tmp: Path) -> list[tuple[str, Path]]:
    src = data_dir() / GSM8K
    if not src.is_file():
        print("import: skipped (../shared/data/gsm8k is absent)")
        return []
    path = _subset(src, args.import_lines, tmp / "gsm8k_subset.jsonl")
    rates: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for _ in range(args.repeat):  # interleaved, so machine load hits every setting alike
        for w in (0, 1, 2):
            rates[w].append(_throughput(path, w, tmp))
    med = {w: statistics.median(v) for w, v in rates.items()}
    print(f"import_solutions: {4 * args.import_lines}")
    print(f"import_per_s_in_process: {med[0]:.0f}")
    print(f"import_per_s_1_worker: {med[1]:.0f}")
    print(f"import_per_s_2_workers: {med[2]:.0f}")
    print(f"import_2_workers_vs_1: {med[2] / med[1]:.2f}")
    print(f"cpu_cores: {os.cpu_count()}")
    return [(GSM8K, path)]


def _seed_rows(tmp: Path):
    """Index rows and search text of real traces (GSM8K solutions and R1 traces)."""
    from o3viz.importers.bulk import ImportOptions
    from o3viz.importers.parallel import import_dataset
    from o3viz.store.store import Store

    store = Store(tmp / "seed")
    for rel, lines in ((GSM8K, 150), (R1, 20)):
        src = data_dir() / rel
        if src.is_file():
            part = _subset(src, lines, tmp / Path(rel).name)
            import_dataset(part, store, ImportOptions(Path(rel).stem), workers=2)
    if store.count() == 0:
        from o3viz.testing.datasets import write_reasoning_jsonl

        print("seed: ../shared/data is absent; generated records stand in for real traces")
        import_dataset(write_reasoning_jsonl(tmp / "gen.jsonl", 300), store, ImportOptions("gen"), workers=2)
    texts = dict(store.conn.execute("SELECT t.key, f.text FROM traces t JOIN steps_fts f ON f.rowid = t.id"))
    from o3viz.store.query import Query

    return [(r, texts[r["key"]]) for r in store.rows(Query(limit=1000))]


def build_store(root: Path, n: int, seeds, rng: random.Random):
    """A store of ``n`` index rows copied from ``seeds`` with variations (no trace files)."""
    from o3viz.store.index import COLUMNS, IndexRow
    from o3viz.store.store import Store

    store = Store(root)
    batch = []
    for i in range(n):
        row, text = seeds[rng.randrange(len(seeds))]
        d = {c: row[c] for c in COLUMNS}
        d.update(
            key=f"{rng.getrandbits(64):016x}",
            dataset=f"set{i % max(1, n // 10_000)}",  # 10,000 traces per dataset
            model=f"{d['model']}-v{rng.randrange(3)}",
            correct=d["correct"] if rng.random() < 0.8 else rng.choice((0, 1, None)),
            steps=max(1, d["steps"] + rng.randrange(-2, 3)),
            name=f"{d['name']} v{i}",
            record=i,
            added_at=1.7e9 + i,
        )
        batch.append((IndexRow(**d), f"{text} {rng.choice(WORDS)}{i % 97}"))
        if len(batch) == 5000:
            store.insert(batch)
            batch = []
    if batch:
        store.insert(batch)
    return store


def _time(fn, repeat: int = 5) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def time_query(store) -> float:
    from o3viz.store.query import Query

    def one():
        for w in WORDS[:5]:
            q = Query(search=w, dataset=["set0"], correct="wrong", limit=50)
            store.count(q, cap=10_000)  # what the Library page asks
            store.rows(q)

    return _time(one) / 5


def time_aggregates(store) -> float:
    from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame
    from o3viz.store.query import Query

    q = Query(dataset=["set0"])  # one dataset: 10,000 traces in either store
    n = [0]

    def one():
        rows = store.select(q, COLUMNS)
        n[0] = len(rows)
        dataset_summary(frame(rows))

    t = _time(one, 3)
    return t if n[0] == 10_000 else float("nan")


def time_first_render(root: Path, empty: Path) -> float:
    from streamlit.testing.v1 import AppTest

    from o3viz.paths import REPO_ROOT

    os.environ["O3VIZ_HOME"], os.environ["O3VIZ_SAMPLES"] = str(root), str(empty)
    out = []
    for _ in range(3):
        at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
        t0 = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - t0)
        assert not at.exception, [e.value for e in at.exception]
    return statistics.median(out)


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="o3viz-bench-library-") as d:
        tmp = Path(d)
        if not args.skip_import:
            bench_import(args, tmp)
        seeds = _seed_rows(tmp)
        print(f"seed_traces: {len(seeds)}")
        empty = tmp / "no_samples"
        empty.mkdir()
        small, large = args.sizes
        figures = {}
        for n in (small, large):
            t0 = time.perf_counter()
            store = build_store(tmp / f"store{n}", n, seeds, random.Random(n))
            print(f"build_rows_per_s_{n}: {n / (time.perf_counter() - t0):.0f}")
            figures[n] = (time_query(store), time_aggregates(store), time_first_render(store.root, empty))
            q, agg, render = figures[n]
            print(f"query_filter_fts_ms_{n}: {1000 * q:.1f}")
            print(f"dataset_aggregates_10k_s_{n}: {agg:.2f}")
            print(f"library_first_render_s_{n}: {render:.2f}")
        q, agg, render = figures[large]
        print(f"query_vs_goal_100ms: {1000 * q / 100:.2f}")
        print(f"library_render_vs_goal_2s: {render / 2:.2f}")
        print(f"aggregates_vs_goal_2s: {agg / 2:.2f}")
        for i, name in enumerate(("query", "aggregates_10k", "library_render")):
            grow = figures[large][i] / figures[small][i]
            print(f"growth_{name}_{small}_to_{large}: {grow:.2f} (linear = {large / small:.0f})")
    return 0
