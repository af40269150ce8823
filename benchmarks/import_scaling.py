"""import_scaling: time and peak memory to import 10k, 25k, 50k and 100k tiny steps (``1+1=2``
lines) and a 20 MB text, each in a fresh process. The linearity figure is seconds per step at each
size as a ratio to the 10k run in the same invocation (1.0 = linear); 100k steps and the 20 MB text
are past what a trace holds (MAX_STEPS), so the figure there is the time to refuse."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
from o3viz.errors import TraceError
from o3viz.importers import build, import_trace
n = int(sys.argv[1])
if sys.argv[2] == "uncapped":
    build.MAX_CLAIM_STEPS = build.MAX_CLAIM_CHARS = build.MAX_CLAIMS = 10**9
text = "\n".join("1+1=2" for _ in range(n))
t = time.perf_counter()
try:
    steps = len(import_trace(text).final.steps)
except TraceError:
    steps = -1
print(json.dumps({"s": time.perf_counter() - t, "steps": steps, "mb": len(text) / 1e6,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sizes", default="10000,25000,50000,100000,3300000", help="step counts (comma-separated)"
    )
    p.add_argument(
        "--uncapped", action="store_true", help="check every claim (lift MAX_CLAIM_*): GC fix alone"
    )


def run(args: argparse.Namespace) -> int:
    sizes = [int(x) for x in args.sizes.split(",")]
    base = None
    for n in sizes:
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(n), "uncapped" if args.uncapped else "capped"],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout)
        per_step = r["s"] / n
        base = base or per_step
        what = f"{r['steps']} steps" if r["steps"] >= 0 else "refused (over MAX_STEPS)"
        print(
            f"import_{n}_steps_s: {r['s']:.2f}  ({r['mb']:.1f} MB text, peak {r['peak_mb']:.0f} MB, {what})"
        )
        print(f"import_{n}_per_step_ratio_vs_{sizes[0]}: {per_step / base:.2f}")
    return 0
