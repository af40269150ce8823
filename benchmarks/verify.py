"""pass@1 of the default model with ``rounds=1`` and ``rounds=3`` of the verify/optimize loop on
the first N HumanEval and M GSM8K problems.

Decoding is greedy, so a ``rounds=1`` run is exactly the first round of a ``rounds=3`` run: each
problem is solved once with ``max_rounds=3`` and scored at round 1 and at the last round. Math
verification uses the reference answer (the issue's "where the reference is known") plus the
claim checker; ``--claims-only`` hides the reference from the loop (it is still used to score).
"""

from __future__ import annotations

import argparse
import time

from o3viz.verify.policy import numbers_equal


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--humaneval", type=int, default=10, metavar="N", help="first N HumanEval problems (default 10)"
    )
    p.add_argument(
        "--gsm8k", type=int, default=10, metavar="M", help="first M GSM8K test problems (default 10)"
    )
    p.add_argument("--rounds", type=int, default=3, help="max rounds of the loop (default 3)")
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument(
        "--claims-only", action="store_true", help="math: verify by claims only, not the reference"
    )
    p.add_argument("--model", default=None, help="model (default: the embedded SmolLM2-135M-Instruct)")


def _solved(task_kind: str, rnd, reference: str | None) -> bool:
    if task_kind == "code":
        return rnd.verdict == "pass"
    return numbers_equal(rnd.answer, reference)


def _bench(model, tok, ids: list[str], args, claims_only: bool) -> tuple[int, int, int, float]:
    from o3viz.run.capture import CaptureConfig, RunRequest
    from o3viz.run.solve import solve
    from o3viz.tasks.spec import load_task

    first = last = rounds_used = 0
    t0 = time.perf_counter()
    for tid in ids:
        spec = load_task(tid)
        reference = spec.task.reference
        if claims_only:
            spec.task.reference = None
        req = RunRequest(
            task_id=tid,
            rounds=args.rounds,
            max_new_tokens=args.max_new_tokens,
            capture=CaptureConfig(enabled=False),
        )
        trace = solve(model, tok, req, spec=spec)
        first += _solved(spec.task.kind, trace.rounds[0], reference)
        last += _solved(spec.task.kind, trace.rounds[-1], reference)
        rounds_used += len(trace.rounds)
        print(
            f"# {tid}: rounds={len(trace.rounds)} first={trace.rounds[0].verdict} last={trace.rounds[-1].verdict}",
            flush=True,
        )
    return first, last, rounds_used, time.perf_counter() - t0


def run(args: argparse.Namespace) -> int:
    from o3viz.model import load_model

    model, tok = load_model(args.model)
    rows = []
    suites = [
        ("humaneval", [f"humaneval:HumanEval/{i}" for i in range(args.humaneval)]),
        ("gsm8k", [f"gsm8k:{i}" for i in range(args.gsm8k)]),
    ]
    for name, ids in suites:
        if not ids:
            continue
        first, last, used, secs = _bench(model, tok, ids, args, args.claims_only and name == "gsm8k")
        n = len(ids)
        print(f"{name}_n: {n}")
        print(f"{name}_pass_at_1_rounds_1: {first / n:.3f}")
        print(f"{name}_pass_at_1_rounds_{args.rounds}: {last / n:.3f}")
        print(f"{name}_uplift: {(last - first) / n:+.3f}")
        print(f"{name}_mean_rounds: {used / n:.2f}")
        rows.append(
            f"| {name} | {n} | {first}/{n} ({first / n:.0%}) | {last}/{n} ({last / n:.0%}) | {used / n:.2f} | {secs:.0f} s |"
        )
    print(f"\n| suite | problems | pass@1, rounds=1 | pass@1, rounds={args.rounds} | mean rounds | time |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    return 0
