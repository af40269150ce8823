"""When did it know: stated answers over GSM8K's model solutions, and the running-answer figures on
the R1 and distill MATH-500 traces, beside the papers' figures.

- ``gsm8k_stated_seconds``: ``o3viz.analysis.running_answer.stated_record`` over every one of the
  5,276 GSM8K model solutions (imported first, not timed; goal ≤ 10 s), and
  ``gsm8k_stated_vs_import``: that time against importing the same solutions in this run;
- ``gsm8k_final_agreement``: the share whose last stated answer equals the trace's graded answer
  (``round.answer``; goal ≥ 99%); ``gsm8k_final_agreement_text_only``: the same without the
  graded-answer rule (the text's own statements only);
- per MATH-500 file (``FILE.*``), from stated answers: ``early_correct`` (the share of graded
  traces whose first correct point lies before the final 10% of the round's text), the
  convergence position (mean and median fraction of the round where the running answer last
  changed), ``flip_rate`` (the share that flipped right→wrong at least once), and what stopping at
  the first correct point saves (share of the round; tokens, estimated from the file's token
  count), each with n and a 95% interval (Wilson for shares, bootstrap for means);
- the published figures, as theirs; and the probe goals (forced-answer timing, refinement
  equality), run only with ``--probes`` where ``o3viz.answers.probes`` is present.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from o3viz.analysis.answer_dataset import PUBLISHED, Figure, answer_dataset_figures
from o3viz.analysis.answer_figures import first_correct, refine_first_correct
from o3viz.analysis.running_answer import grade, same_answer, stated_record
from o3viz.importers import import_trace
from o3viz.importers.bulk import fan_out
from o3viz.paths import data_dir
from o3viz.text.answers import answers_equivalent

FILES = (
    "topology_math500_deepseek_r1",
    "topology_pilot_math500_r1",
    "topology_pilot_math500_qwen7b",
    "topology_pilot_math500_llama8b",
)
GOALS = {"gsm8k_stated_seconds": "≤ 10 s", "gsm8k_final_agreement": "≥ 0.99"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=data_dir(), help="the shared data folder")
    parser.add_argument(
        "--probes", action="store_true", help="also run the forced-answer probe goals (a model)"
    )
    parser.add_argument(
        "--probe-traces", type=int, default=20, help="GSM8K traces for the refinement goal (20)"
    )


def _agrees(last: str | None, graded: str | None) -> bool:
    if last is None or graded is None:
        return last is graded
    return same_answer(last, graded) or answers_equivalent(last, graded)


def run_gsm8k(data: Path):
    path = data / "gsm8k" / "gsm8k_example_model_solutions.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    t0 = time.perf_counter()
    traces = [import_trace(sub, claims=False) for line in lines for _, sub in fan_out(json.loads(line))]
    t1 = time.perf_counter()
    recs = [stated_record(t.final, t.task.reference) for t in traces]
    t2 = time.perf_counter()
    assert len(traces) == 5276, f"{path}: {len(traces)} solutions, expected 5,276"
    print(f"gsm8k_traces: {len(traces)}")
    print(f"gsm8k_stated_seconds: {t2 - t1:.2f}")
    print(f"gsm8k_stated_vs_import: {(t2 - t1) / (t1 - t0):.3f}")
    for name, records in (
        ("gsm8k_final_agreement", recs),
        (
            "gsm8k_final_agreement_text_only",
            [stated_record(t.final, t.task.reference, graded=False) for t in traces],
        ),
    ):
        agree = sum(
            _agrees(next((a for a in reversed(r.answers) if a is not None), None), t.final.answer)
            for t, r in zip(traces, records, strict=True)
        )
        print(f"{name}: {agree / len(traces):.4f} ({agree} of {len(traces)})")
    return traces


def _fmt(f: Figure, pct: bool = True) -> str:
    if f.value is None:
        return "— (n = 0)"
    show = (lambda v: f"{v:.0%}") if pct else (lambda v: f"{v:,.0f}")
    med = f", median {show(f.median)}" if f.median is not None else ""
    return f"{show(f.value)} (n = {f.n}; 95% CI {show(f.low)}–{show(f.high)}{med})"


def run_math500(data: Path) -> None:
    items = []
    for name in FILES:
        path = data / "traces" / f"{name}.jsonl"
        n = len(path.read_text(encoding="utf-8").splitlines())
        for i in range(n):
            t = import_trace(path, record=i, claims=False)
            items.append((f"{name}:{i}", name, t.provenance.model_id, t))
    groups = answer_dataset_figures(items)
    assert groups and all(g.traces > 0 for g in groups), "no MATH-500 traces were read"
    for g in groups:
        p = g.dataset.removeprefix("topology_")
        print(f"{p}.model: {g.model} ({g.traces} traces)")
        print(f"{p}.early_correct: {_fmt(g.early_correct)}")
        print(f"{p}.convergence_position: {_fmt(g.convergence)}")
        print(f"{p}.flip_rate_right_to_wrong: {_fmt(g.flip_rate)}")
        print(f"{p}.harmful_overthinking: {_fmt(g.harmful)}")
        print(f"{p}.saved_share_at_first_correct: {_fmt(g.saved_share)}")
        print(
            f"{p}.saved_tokens_at_first_correct: {_fmt(g.saved_tokens, pct=False)} (estimated from characters)"
        )
    for measure, value, where in PUBLISHED:
        print(f"published.{measure}: {value} — {where}")


def run_probe_goals(traces: list, want: bool, n: int) -> None:
    """The probe goals: the refinement's first correct point against every prefix, with the local
    probe (``o3viz.answers.probes``), on ``n`` GSM8K traces."""
    try:
        from o3viz.answers.probes import PROBES
    except ImportError as exc:
        print(f"probe_goals: not run: o3viz.answers.probes is absent ({exc})")
        return
    if not want:
        print("probe_goals: not run: pass --probes (loads the embedded model; minutes on CPU)")
        return
    probe = PROBES.make("local", {})
    same = total = 0
    for t in traces[:n]:
        ref = t.task.reference

        def ask(bs, t=t, ref=ref):
            got = {r.step: r for r in probe.probe(t, 0, bs, ref)}
            return [grade(got[b].forced if b in got else None, ref) for b in bs]

        every = ask(list(range(len(t.final.steps))))
        refined = refine_first_correct(len(every), ask, lambda c: c, every=2)
        same += min((b for b, c in refined.items() if c), default=None) == first_correct(every)
        total += 1
    print(f"refinement_same_first_correct: {same} of {total}")
    print("forced_timing_vs_generation: not run: the 1,024-token local run is the probes' own benchmark")


def run(args: argparse.Namespace) -> int:
    print(f"load_average_1min: {os.getloadavg()[0]:.2f}")
    traces = run_gsm8k(args.data)
    run_math500(args.data)
    run_probe_goals(traces, args.probes, args.probe_traces)
    return 0
