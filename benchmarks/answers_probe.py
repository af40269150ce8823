"""answers_probe: forced answers at every step boundary of a local run, against the run's own time.

One greedy run of ``--tokens`` new tokens (EOS suppressed) with the embedded model on a GSM8K
question is timed; then the local probe (``o3viz.answers.probes``: one prefill, the cache forked at
each step's end) forces an answer at every step boundary, and at every ``--every``-th. Goal
(issue 53): probing every boundary ≤ 1.3× the run's generation time, same run. ``measure`` returns
both probe sets, so ``benchmarks.answers`` can check that its refinement of the every-k probes finds
the first correct step the all-boundary probes find. Run with ``--threads 1`` on a shared machine
and read the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

from o3viz.answers.probe_types import ProbeResult

QUESTION = (
    "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
    "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 "
    "per fresh duck egg. How much in dollars does she make every day at the farmers' market?"
)
REFERENCE = "18"
GOALS = {"probe_every_step_vs_generation_ratio": "<= 1.3"}


@dataclass
class ProbeFigures:
    """One run and its probes: times in seconds, results by step index."""

    tokens: int
    steps: int
    generation_s: float
    probe_all_s: float
    probe_every_s: float
    every: int
    all_steps: dict[int, ProbeResult] = field(default_factory=dict)
    every_k: dict[int, ProbeResult] = field(default_factory=dict)
    trace: object = None  # the run, for the caller's refinement

    @property
    def ratio(self) -> float:
        return self.probe_all_s / self.generation_s


def first_correct(results: dict[int, ProbeResult], reference: str) -> int | None:
    """The first probed step whose forced answer matches ``reference`` (grading's equivalence)."""
    from o3viz.text.answers import answers_equivalent

    return next(
        (
            s
            for s in sorted(results)
            if results[s].forced and answers_equivalent(results[s].forced, reference)
        ),
        None,
    )


def measure(
    model,
    tokenizer,
    *,
    tokens: int = 1024,
    every: int = 8,
    question: str = QUESTION,
    reference: str = REFERENCE,
) -> ProbeFigures:
    """Time one ``tokens``-token run, then probe every step boundary and every ``every``-th."""
    from o3viz.answers.probe_local import LocalProbe
    from o3viz.run.capture import capture

    t0 = time.perf_counter()
    trace = capture(model, tokenizer, question, max_new_tokens=tokens, min_new_tokens=tokens)
    gen_s = time.perf_counter() - t0
    probe = LocalProbe(model, tokenizer)
    n = len(trace.final.steps)
    t0 = time.perf_counter()
    all_steps = {r.step: r for r in probe.probe(trace, 0, list(range(n)), reference)}
    all_s = time.perf_counter() - t0
    picks = sorted({*range(every - 1, n, every), n - 1})
    t0 = time.perf_counter()
    every_k = {r.step: r for r in probe.probe(trace, 0, picks, reference)}
    every_s = time.perf_counter() - t0
    return ProbeFigures(len(trace.final.tokens), n, gen_s, all_s, every_s, every, all_steps, every_k, trace)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokens", type=int, default=1024, help="new tokens of the run (1024)")
    p.add_argument("--every", type=int, default=8, help="probe every K-th step too (8)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared machine)")


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.model import load_model

    torch.set_num_threads(args.threads)
    model, tok = load_model(None)
    f = measure(model, tok, tokens=args.tokens, every=args.every)
    print(f"run_tokens: {f.tokens}")
    print(f"run_steps: {f.steps}")
    print(f"generation_s: {f.generation_s:.1f}")
    print(f"probe_every_step_s: {f.probe_all_s:.1f}")
    print(
        f"probe_every_step_vs_generation_ratio: {f.ratio:.2f} (goal <= 1.3; same run, {args.threads} thread(s))"
    )
    print(f"probe_every_{f.every}_s: {f.probe_every_s:.1f}")
    forced = sum(r.forced is not None for r in f.all_steps.values())
    print(f"steps_with_a_forced_answer: {forced}/{f.steps}")
    print(f"first_correct_step_all: {first_correct(f.all_steps, REFERENCE)}")
    print(f"first_correct_step_every_{f.every}_unrefined: {first_correct(f.every_k, REFERENCE)}")
    return 0
