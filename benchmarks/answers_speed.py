"""answers_speed: ``o3viz answers --dataset D --probe none`` against the import of the same traces.

Stated answers put on every stored trace and saved, against ``o3viz import`` of the same GSM8K
traces, both timed in this run on one fresh store, with the load average.

- ``import_seconds``: ``o3viz import FILE --all --dataset D`` (its default workers) of the first
  ``--traces`` model solutions of ``gsm8k/gsm8k_example_model_solutions.jsonl``;
- ``answers_seconds``: ``o3viz answers --dataset D`` over them, and ``answers_vs_import``, its
  ratio to the import (issue 63.8: was 2.0, 2.9 under load; goal ≤ 1);
- ``stated_in_memory_seconds``: the same stated answers on the same traces already parsed in
  memory, no store: what the CLI adds is reading, saving and reindexing each trace.

It checks that it measured the real thing: the import stored ``--traces`` traces, and after the
run every one of them holds a ``stated`` record on every round with steps.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from o3viz.paths import data_dir

GOALS = {"answers_vs_import": "≤ 1.0"}
BASELINES = {"stated_in_memory_seconds": "answers_seconds (the same traces, parsed, no store)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder")
    parser.add_argument("--traces", type=int, default=1000, help="GSM8K model solutions to use (1000)")


def _source(data: Path, n: int, folder: Path) -> tuple[Path, int]:
    """A JSONL of whole records of the GSM8K file holding at most ``n`` solutions; (path, solutions)."""
    from o3viz.importers.bulk import fan_out

    lines, total = [], 0
    for line in (
        (data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text(encoding="utf-8").splitlines()
    ):
        k = sum(1 for _ in fan_out(json.loads(line)))
        if total + k > n:
            break
        lines.append(line)
        total += k
    path = folder / "gsm8k_part.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, total


def _timed(argv: list[str]) -> float:
    from o3viz.cli.main import main

    t0 = time.perf_counter()
    code = main(argv)
    assert code == 0, f"o3viz {' '.join(argv)} exited {code}"
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    from o3viz.analysis.running_answer import STATED, add_stated
    from o3viz.store.query import Query
    from o3viz.store.store import Store

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="o3viz-answers-speed-") as tmp:
        os.environ["O3VIZ_HOME"] = str(Path(tmp) / "home")  # a fresh store, never the user's
        src, n = _source(args.data, args.traces, Path(tmp))
        t_import = _timed(["import", str(src), "--all", "--dataset", "g"])
        store = Store()
        keys = [r[0] for r in store.select(Query(dataset=["g"]), ("key",))]
        assert len(keys) == n, f"the import stored {len(keys)} traces, expected {n}"
        traces = [store.editable_trace(k) for k in keys]
        t0 = time.perf_counter()
        for t in traces:
            add_stated(t)
        t_memory = time.perf_counter() - t0
        t_answers = _timed(["answers", "--dataset", "g"])
        store = Store()
        keys = [r[0] for r in store.select(Query(dataset=["g"]), ("key",))]
        held = sum(
            all(any(x.probe == STATED for x in r.answers) for r in store.trace(k).rounds if r.steps)
            for k in keys
        )
        assert len(keys) == n and held == n, f"{held} of {len(keys)} traces hold stated answers, expected {n}"
    print(f"traces: {n}")
    print(f"import_seconds: {t_import:.2f}")
    print(f"answers_seconds: {t_answers:.2f}")
    print(f"answers_vs_import: {t_answers / t_import:.2f}")
    print(f"stated_in_memory_seconds: {t_memory:.2f}")
    print(f"load_average: {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (1 min)")
    return 0
