"""cli_start: how long ``o3viz library list --limit 1`` takes to answer, and its peak memory, against
``o3viz --version`` (which imports nothing but the version), each a fresh process, measured in
interleaved pairs in the same run (issue 62 break 11: every command imported torch, 1.6–1.7 s and
289 MB against 0.13 s and 31 MB on a quiet 2-core machine).

- ``list_vs_version``: the median wall time of the list over that of ``--version`` (goal: a small
  constant, not the seconds of a torch import);
- ``list_rss_vs_version``: the peak resident memory of the list over that of ``--version``;
- ``list_s``, ``version_s``, ``list_rss_mb``, ``version_rss_mb``: the medians themselves;
- ``torch_import_s``: ``python -c "import torch"`` alone, what a command that still imported it
  would add;
- ``load_average_1min``: before and after, since a loaded machine stretches every start.

The list reads a temporary store holding one imported trace, so it prints a real row; the run
checks that it did, and that neither command imported torch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINES = {
    "list_s": "version_s",
    "list_rss_mb": "version_rss_mb",
    "torch_import_s": "version_s",
    "torch_import_rss_mb": "version_rss_mb",
}
GOALS = {"list_vs_version": "<= 5 (a torch import alone is about 10x)"}
# Runs one o3viz command (or, with ``-m``, imports one module), then reports on stderr its own
# peak memory (VmHWM: the high-water mark of this program's memory since exec; the rusage of a
# child counts the parent's memory it was forked with) and whether torch came in.
_RUN = """
import sys
if sys.argv[1] == "-m":
    __import__(sys.argv[2]); code = 0
else:
    from o3viz.cli.main import main
    code = main(sys.argv[1:])
with open("/proc/self/status") as f:
    peak = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
sys.stderr.write(f"peak_kb {peak}\\n" + ("torch imported\\n" if "torch" in sys.modules else ""))
sys.exit(code)
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", type=int, default=7, help="interleaved version/list pairs (median; 7)")


def _timed(args: list[str], env: dict, torch_ok: bool = False) -> tuple[float, float, str]:
    """(wall seconds, peak memory in MB, stdout) of one fresh process running ``_RUN args``."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _RUN, *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0 or ("torch imported" in proc.stderr and not torch_ok):
        raise SystemExit(f"{' '.join(args)}: exit {proc.returncode}, {proc.stderr.strip()[-300:]}")
    peak_kb = next(int(ln.split()[1]) for ln in proc.stderr.splitlines() if ln.startswith("peak_kb "))
    return seconds, peak_kb / 1024, proc.stdout


def run(args: argparse.Namespace) -> int:
    from o3viz.testing.datasets import write_reasoning_jsonl

    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "O3VIZ_HOME": str(Path(tmp) / "home")}
        jsonl = write_reasoning_jsonl(Path(tmp) / "one.jsonl", 1)
        _timed(["import", str(jsonl), "--all", "--dataset", "bench", "--workers", "0"], env)
        times: dict[str, list[float]] = {"version": [], "list": []}
        rss: dict[str, list[float]] = {"version": [], "list": []}
        for _ in range(args.pairs):  # interleaved, so load hits both alike
            for name, argv in (("version", ["--version"]), ("list", ["library", "list", "--limit", "1"])):
                s, mb, out = _timed(argv, env)
                assert "of 1 traces" in out or name == "version", f"the list printed no row: {out!r}"
                times[name].append(s)
                rss[name].append(mb)
        torch_s, torch_mb, _ = _timed(["-m", "torch"], env, torch_ok=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    mem = {k: statistics.median(v) for k, v in rss.items()}
    print(f"list_vs_version: {med['list'] / med['version']:.2f}")
    print(f"list_rss_vs_version: {mem['list'] / mem['version']:.2f}")
    print(f"list_s: {med['list']:.3f}")
    print(f"version_s: {med['version']:.3f}")
    print(f"list_rss_mb: {mem['list']:.0f}")
    print(f"version_rss_mb: {mem['version']:.0f}")
    print(f"torch_import_s: {torch_s:.3f}")
    print(f"torch_import_rss_mb: {torch_mb:.0f}")
    print(f"load_average_1min_after: {os.getloadavg()[0]:.2f}")
    return 0
