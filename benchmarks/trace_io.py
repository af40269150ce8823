"""trace_io: how fast hostile trace files are refused (the goal: each well under 1 s, so a bad
upload never stalls the app). Cases are the trace-file tests' inputs: a truncated file, a truncated
gzip stream, a 300 MB sparse file, 100,000 levels of nesting, NaN, and a gzip bomb (10 GiB
expanded). Each case's median time is printed, and as a ratio against loading a valid trace of
the same shape, measured interleaved in the same run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import tempfile
import time
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--repeat", type=int, default=5, help="timed loads per case (default 5); the median is printed"
    )


def _cases(tmp: Path) -> dict:
    from o3viz.testing.builders import small_trace
    from o3viz.trace import trace_bytes

    raw = trace_bytes(small_trace())
    sparse = tmp / "big.o3trace.json"
    with sparse.open("wb") as f:  # sparse: costs no disk
        f.truncate(300 * 1024 * 1024)
    member = gzip.compress(b"\0" * (1 << 20), compresslevel=9)
    good = json.loads(raw)
    good["rounds"][0]["confidence"] = float("nan")
    return {
        "truncated": raw[: len(raw) // 2],
        "truncated_gzip": gzip.compress(raw)[:100],
        "sparse_300mb": sparse,
        "deep_nesting": b"[" * 100_000 + b"]" * 100_000,
        "nan": json.dumps(good).encode(),
        "gzip_bomb": member * 10_240,
    }, raw


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    from o3viz.errors import TraceError
    from o3viz.trace import load_trace

    def refuse(data) -> None:
        try:
            load_trace(data)
        except TraceError:
            return
        raise AssertionError("a hostile input loaded")

    with tempfile.TemporaryDirectory() as tmp:
        cases, good = _cases(Path(tmp))
        refuse(cases["truncated"])  # warm-up: imports and the first parse
        load_trace(good)
        for name, data in cases.items():
            bad, base = [], []
            for _ in range(args.repeat):  # interleaved with the baseline
                bad.append(_time(lambda data=data: refuse(data)))
                base.append(_time(lambda: load_trace(good)))
            b, g = statistics.median(bad), statistics.median(base)
            print(f"refuse_{name}_s: {b:.4f} (over a valid load {b / g:.2f}x, valid {g:.4f} s)")
    return 0
