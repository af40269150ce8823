"""compare: the cost of aligning two traces' steps on Compare, at 200 and 2,000 R1-style steps
(real DeepSeek-R1 sentences, ``o3viz.testing.long_r1``), the second trace with one episode replaced.
Prints the alignment-matrix cells and the time at each size and their ratio (2,000 over 200), and the
cells the exact alignment of every step would take. Fails unless the alignment found the planted
divergence."""

from __future__ import annotations

import argparse
import time


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", type=int, nargs=2, default=[200, 2000], metavar=("SMALL", "LARGE"))
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions (the best is kept)")


def _measure(n: int, repeat: int) -> tuple[int, float, int]:
    from o3viz.analysis.align import align_rounds
    from o3viz.testing.compare_pair import planted_pair

    a, b, at = planted_pair(n)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        al = align_rounds(a.final, b.final)
        best = min(best, time.perf_counter() - t0)
    d = next((r for r in al.rows if r.tag != "equal"), None)
    if not al.rows or d is None or d.a_index != at or d.b_index != at:
        raise SystemExit(f"compare: at {n} steps the alignment missed the planted divergence at step {at}")
    print(
        f"compare_align_{n}_cells: {al.cells} ({al.method}; bound {al.bound}; exact would be {len(a.final.steps) * len(b.final.steps)})"
    )
    print(f"compare_align_{n}_seconds: {best:.3f}")
    return al.cells, best, len(a.final.steps)


def run(args: argparse.Namespace) -> int:
    small, large = args.sizes
    cs, ts, ns = _measure(small, args.repeat)
    cl, tl, nl = _measure(large, args.repeat)
    print(
        f"compare_align_cells_ratio: {cl / cs:.1f} (steps ratio {nl / ns:.1f}; exact would be {(nl / ns) ** 2:.0f})"
    )
    print(f"compare_align_time_ratio: {tl / ts:.1f}")
    return 0
