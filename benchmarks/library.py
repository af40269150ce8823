"""library: the trace store. Import throughput (GSM8K solutions per second with 1 and 2 worker
processes, against the in-process import), then over stores of 10,000 and 100,000 traces (or the
``--sizes`` given, e.g. 100000 1000000): the time to create the store, an index query with filters
and full-text search, the Library page's first render (AppTest), the Dataset page's aggregates
over 10,000 and over 100,000 traces (from SQLite, and from the columnar copy through DuckDB), a
click on a Dataset bar until its traces are listed at 10,000 traces (server side, against a plain
rerun of the same page in the same run, and against its 1 s goal), and the disk per trace, each
at both sizes (growth) and against its goal.

Every row has a real trace file behind it: seeds imported from ``../shared/data`` (GSM8K's graded
GPT-3 solutions, the R1 MATH-500 traces) are copied with variations (question, model, grading,
dataset; ``benchmarks/_trace_variants.py``) by ``--build-workers`` processes, files written without
an fsync each, rows loaded by ``o3viz.store.bulk.BulkLoader``. Everything lives in a temporary
folder under ``--dir`` (default: the system's), removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from o3viz.paths import data_dir
from o3viz.store.query import Query

GSM8K = "gsm8k/gsm8k_example_model_solutions.jsonl"
R1 = "traces/topology_math500_deepseek_r1.jsonl"
BUILD_CHUNK = 5_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--import-lines", type=int, default=100, help="GSM8K lines (4 solutions each) to import")
    p.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000], metavar=("SMALL", "LARGE"))
    p.add_argument("--repeat", type=int, default=2, help="repetitions of each timed import (median)")
    p.add_argument("--skip-import", action="store_true", help="only the store figures")
    p.add_argument("--build-workers", type=int, default=2, help="processes writing the trace files")
    p.add_argument("--dir", default=None, help="where the temporary stores go (default: the system's)")
    p.add_argument(
        "--keep",
        type=Path,
        help="build the large store in this folder and keep it; a folder already holding it is "
        "measured again without building (a 1M store takes about half an hour to build)",
    )


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
    from benchmarks._trace_variants import load_seeds

    return load_seeds(store, store.rows(Query(limit=1000)))


_SEEDS: list = []


def _init_worker(seeds, root: str) -> None:
    from o3viz.store.store import Store

    _SEEDS[:] = [seeds, Store(root)]


def _write_chunk(job: tuple[int, int, int]):
    from benchmarks._trace_variants import write_variants

    seeds, store = _SEEDS
    return write_variants(store, seeds, *job)


def build_store(root: Path, n: int, seeds, workers: int = 2):
    """A store of ``n`` traces, files and rows, copied from ``seeds`` with variations."""
    import multiprocessing as mp

    from o3viz.store.bulk import BulkLoader
    from o3viz.store.store import Store

    store = Store(root)
    jobs = [(i, min(n, i + BUILD_CHUNK), n) for i in range(0, n, BUILD_CHUNK)]
    ctx = mp.get_context("forkserver")
    with ctx.Pool(workers, _init_worker, (seeds, str(root))) as pool, BulkLoader(store) as load:
        for rows in pool.imap(_write_chunk, jobs):  # in order: ids follow the variant number
            for row, text in rows:
                load.add(row, text)
    return store, load.report


def _time(fn, repeat: int = 5) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def time_query(store) -> float:
    from benchmarks._trace_variants import WORDS

    def one():
        for w in WORDS[:5]:
            q = Query(search=w, dataset=["set0"], correct="wrong", limit=50)
            store.count(q, cap=10_000)  # what the Library page asks
            store.rows(q)

    return _time(one) / 5


def time_search_page(store) -> float:
    """A word typed into the Library with no filter: count (cap 10,000), first page, snippets."""
    from benchmarks._trace_variants import WORDS

    def one():
        for w in WORDS[:5]:
            q = Query(search=w, limit=50)
            assert store.count(q, cap=10_000) > 0  # the words are in the seeds: a real page
            store.snippets(w, [r["key"] for r in store.rows(q)])

    return _time(one) / 5


def time_aggregates(store, traces: int, duck: bool) -> float:
    """The Dataset page's aggregates over ``traces`` traces (whole datasets), read from SQLite or
    (``duck``) from the columnar copy through DuckDB."""
    from benchmarks._trace_variants import PER_DATASET
    from o3viz.analysis.dataset import COLUMNS, dataset_summary, frame
    from o3viz.store.columnar import select_frame

    q = Query(dataset=[f"set{i}" for i in range(traces // PER_DATASET)])
    n = [0]

    def one():
        rows = (
            select_frame(store, q, COLUMNS, max_rows=traces)
            if duck
            else store.select(q, COLUMNS, max_rows=traces)
        )
        n[0] = len(rows)
        dataset_summary(frame(rows))

    t = _time(one, 3)
    return t if n[0] == traces else float("nan")


def chart_click(at, key: str, customdata: str) -> float:
    """Click a bar of the chart ``key`` on an ``AppTest`` page the way the browser reports it (the
    chart's selection, a point with ``customdata``, as its widget state), rerun, and return the
    seconds that rerun took (the server's side of the click)."""
    ids, stack = [], [at._tree]
    while stack:
        node = stack.pop()
        if getattr(node, "type", None) == "plotly_chart" and node.proto.id.endswith(f"-{key}"):
            ids.append(node.proto.id)
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            stack.extend(children.values())
    if not ids:
        raise RuntimeError(f"no chart {key!r} on the page")
    states = at._tree.get_widget_states()
    w = states.widgets.add()
    w.id = ids[0]
    selection = {"points": [{"customdata": customdata}], "point_indices": [0], "box": [], "lasso": []}
    w.string_value = json.dumps({"selection": selection})
    t0 = time.perf_counter()
    at._run(states)
    return time.perf_counter() - t0


def time_bar_click(root: Path, empty: Path) -> tuple[float, float, int]:
    """The Dataset page over the whole store: a plain rerun (the baseline) and a click on a bar of
    the step-type figure until its traces are listed, each the median of 3 (server side, AppTest).
    Returns (rerun s, click s, traces listed)."""
    import logging

    from streamlit.testing.v1 import AppTest

    from o3viz.paths import REPO_ROOT
    from o3viz.text.classify import TYPES

    logging.disable(logging.WARNING)
    os.environ["O3VIZ_HOME"], os.environ["O3VIZ_SAMPLES"] = str(root), str(empty)
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/dataset.py")
    at.run()  # the first render (aggregates and figures): not timed here
    if at.exception:
        raise RuntimeError(f"Dataset raised: {at.exception[0].value}")
    reruns, clicks = [], []
    for k in range(3):
        t0 = time.perf_counter()
        at.run()
        reruns.append(time.perf_counter() - t0)
        sel = json.dumps({"group": ("wrong", "correct")[k % 2], "type": TYPES[3]}, sort_keys=True)
        clicks.append(chart_click(at, "ds_types", sel))
        listed = [h.value for h in at.subheader if "behind that bar" in h.value]
        if at.exception or not listed:
            raise RuntimeError(
                f"the bar click listed no traces: {at.exception or [h.value for h in at.subheader]}"
            )
    n = int(listed[0].split()[0].replace(",", ""))
    return statistics.median(reruns), statistics.median(clicks), n


def disk_use(root: Path) -> dict[str, int]:
    """Bytes on disk (allocated blocks, not file sizes): trace files, metadata files, index, copy."""
    out = {"trace_files": 0, "meta_files": 0, "index": 0, "columnar": 0}
    for dirpath, _, names in os.walk(root):
        for name in names:
            st = os.stat(os.path.join(dirpath, name))
            part = (
                "columnar" if "columnar" in dirpath else "index" if name.startswith("index.sqlite3") else None
            )
            part = part or ("trace_files" if name.endswith(".o3trace.json.gz") else "meta_files")
            out[part] += st.st_blocks * 512
    return out


def time_first_render(root: Path, empty: Path) -> float:
    import logging

    from streamlit.testing.v1 import AppTest

    from o3viz.paths import REPO_ROOT

    logging.disable(logging.WARNING)  # AppTest's bare-mode warnings: hundreds of lines a render

    os.environ["O3VIZ_HOME"], os.environ["O3VIZ_SAMPLES"] = str(root), str(empty)
    out = []
    for _ in range(3):
        at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
        t0 = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - t0)
        assert not at.exception, [e.value for e in at.exception]
    return statistics.median(out)


def measure_store(store, n: int, empty: Path) -> dict[str, float]:
    from o3viz.store.columnar import refresh

    out = {
        "query": time_query(store),
        "search_page": time_search_page(store),
        "aggregates_10k": time_aggregates(store, 10_000, duck=False),
    }
    if n >= 100_000:
        out["aggregates_100k"] = time_aggregates(store, 100_000, duck=False)
    t0 = time.perf_counter()
    refresh(store)
    print(f"columnar_refresh_s_{n}: {time.perf_counter() - t0:.1f}")
    out["aggregates_10k_duckdb"] = time_aggregates(store, 10_000, duck=True)
    if n >= 100_000:
        out["aggregates_100k_duckdb"] = time_aggregates(store, 100_000, duck=True)
    out["library_render"] = time_first_render(store.root, empty)
    if n <= 10_000:  # the Dataset page reads at most 200,000 traces; the click is timed at 10k
        out["dataset_rerun"], out["dataset_bar_click"], out["dataset_bar_listed"] = time_bar_click(
            store.root, empty
        )
    return out


def report_store(store, n: int, seconds: float, load, empty: Path) -> dict[str, float]:
    if load.insert_s == load.insert_s:  # not NaN: this run built the store
        print(
            f"create_store_s_{n}: {seconds:.0f} (rows {load.insert_s:.0f} s, indexes and FTS merge {load.finish_s:.0f} s)"
        )
        print(f"create_traces_per_s_{n}: {n / seconds:.0f}")
    f = measure_store(store, n, empty)
    print(f"query_filter_fts_ms_{n}: {1000 * f['query']:.1f}")
    print(f"search_page_with_snippets_ms_{n}: {1000 * f['search_page']:.1f}")
    print(f"library_first_render_s_{n}: {f['library_render']:.2f}")
    if "dataset_bar_click" in f:
        print(
            f"dataset_bar_click_s_{n}: {f['dataset_bar_click']:.3f} ({f['dataset_bar_listed']:,} traces listed)"
        )
        print(f"dataset_rerun_s_{n}: {f['dataset_rerun']:.3f}")
        print(f"dataset_bar_click_vs_rerun_{n}: {f['dataset_bar_click'] / f['dataset_rerun']:.2f}")
        print(f"dataset_bar_click_vs_goal_1s_{n}: {f['dataset_bar_click']:.2f}")
    for name in ("10k", "100k"):
        for engine in ("", "_duckdb"):
            if f"aggregates_{name}{engine}" in f:
                print(f"dataset_aggregates_{name}{engine}_s_{n}: {f[f'aggregates_{name}{engine}']:.2f}")
    disk = disk_use(store.root)
    for part, b in disk.items():
        print(f"disk_{part}_bytes_per_trace_{n}: {b / n:.0f}")
    print(f"disk_bytes_per_trace_{n}: {sum(disk.values()) / n:.0f} (largest: {max(disk, key=disk.get)})")
    return f


def _kept(root: Path, n: int):
    """A store ``--keep`` built earlier, when it holds all ``n`` rows (its build time then reads 0)."""
    from o3viz.store.bulk import BulkReport
    from o3viz.store.store import Store

    if not (root / "index.sqlite3").is_file():
        return None
    store = Store(root)
    have = store.count()
    if not n <= have <= n + 100:  # the app adds its samples to a store it opens (the 11 samples)
        raise SystemExit(f"{root} holds {have} traces, not {n}: remove it or choose another --keep")
    print(f"store_{n}: reused from {root} ({have} traces, built by an earlier run; no create figures)")
    return store, BulkReport(added=n, insert_s=float("nan"))


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault(
        "STREAMLIT_LOGGER_LEVEL", "error"
    )  # AppTest's bare-mode warnings, hundreds a render
    with tempfile.TemporaryDirectory(prefix="o3viz-bench-library-", dir=args.dir) as d:
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
            root = args.keep / f"store{n}" if args.keep and n == large else tmp / f"store{n}"
            t0 = time.perf_counter()
            store, load = _kept(root, n) or build_store(root, n, seeds, args.build_workers)
            figures[n] = report_store(store, n, time.perf_counter() - t0, load, empty)
            store.close()
            if root.parent == tmp:
                shutil.rmtree(root)  # the disk is shared: one big store at a time
        big = figures[large]
        print(f"query_vs_goal_100ms: {1000 * big['query'] / 100:.2f}")
        print(f"library_render_vs_goal_2s: {big['library_render'] / 2:.2f}")
        for engine in ("", "_duckdb"):
            if f"aggregates_100k{engine}" in big:
                print(f"aggregates_100k{engine}_vs_goal_2s: {big[f'aggregates_100k{engine}'] / 2:.2f}")
        for name in ("query", "search_page", "aggregates_10k", "aggregates_10k_duckdb", "library_render"):
            grow = big[name] / figures[small][name]
            print(f"growth_{name}_{small}_to_{large}: {grow:.2f} (linear = {large / small:.0f})")
        print(f"load_average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0
