"""Attention steering (PASTA-style DAA ``steer`` mode) on instruction tasks the embedded model
often ignores: compliance and accuracy with and without steering, the attention the marked spans
get, and what steering costs at 256 tokens.

The task set is generated in code with known answers (``o3viz.tasks.steering``): ``one_word``
("Answer with one word." + a capital-city question + "Tell me about it."), ``json`` ('Answer in
JSON with the key "answer".' + the same question), and ``distractor`` (three "X lives in C."
sentences, then "Where does X live?"; the marked span is the sentence with the answer). Tasks
0..N-1 of each family are evaluated; ``--heads auto`` profiles on tasks 17 and 18, never
evaluated. Greedy decoding, so each run is deterministic.

Figures:
- ``span_attention_ratio``: attention mass on the marked spans (the mean over all layers and
  heads of each generated token's row, averaged over the tokens and tasks), steered / unsteered;
- ``compliance_*`` / ``accuracy_*``: rates over the set with Wilson 95% intervals;
- ``compute_ratio_256``: seconds of a steered 256-token capture / an unsteered one, median of
  interleaved pairs (noisy on a shared machine: read it with the pair spread it prints).
"""

from __future__ import annotations

import argparse
import statistics
import time

from o3viz.errors import UsageError

FAMILIES = ("one_word", "json", "distractor")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--per-family", type=int, default=5, help="tasks per family (default 5, at most 17)")
    p.add_argument("--families", default=",".join(FAMILIES), help="comma-separated (default all three)")
    p.add_argument("--max-new-tokens", type=int, default=16, help="tokens per reply (default 16)")
    p.add_argument("--alpha", type=float, default=0.01, help="steering alpha (default 0.01)")
    p.add_argument("--heads", default="auto", help="auto, all or layer.head pairs (default auto)")
    p.add_argument(
        "--compute-pairs", type=int, default=2, help="interleaved 256-token pairs (default 2; 0: skip)"
    )
    p.add_argument("--compute-tokens", type=int, default=256, help="tokens per compute run (default 256)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")


def _interval(k: int, n: int) -> str:
    from o3viz.analysis.dataset import wilson

    lo, hi = wilson(k, n) or (0.0, 1.0)
    return f"{k / n:.3f} [{lo:.2f}, {hi:.2f}] (n={n})"


def _run_task(model, tok, task, daa, max_new_tokens: int):
    from o3viz.run.capture import CaptureConfig, RunRequest, capture

    req = RunRequest(
        prompt=task.prompt,
        max_new_tokens=max_new_tokens,
        capture=CaptureConfig(layers="none", prefill=False),
        daa=daa,
    )
    return capture(model, tok, req, task="general").final


def _span_mass(rnd, ranges) -> float:
    rows = rnd.attention.mean.astype("float32")
    return float(sum(rows[:, s:e].sum(-1).mean() for s, e in ranges))


def _evaluate(model, tok, tasks, steer_cfg, max_new_tokens: int) -> dict:
    import dataclasses

    from o3viz.run.config import DAAConfig, SteerSpan
    from o3viz.tasks.steering import check_reply

    out = {"comply": [0, 0], "correct": [0, 0], "mass": [0.0, 0.0], "flips": [0, 0], "n": len(tasks)}
    for t in tasks:
        plain = _run_task(model, tok, t, DAAConfig(), max_new_tokens)
        steered = _run_task(
            model, tok, t, dataclasses.replace(steer_cfg, spans=[SteerSpan(t.span)]), max_new_tokens
        )
        ranges = steered.attention.steer.ranges
        (c0, a0), (c1, a1) = check_reply(t, plain.text), check_reply(t, steered.text)
        for i, (c, a, rnd) in enumerate([(c0, a0, plain), (c1, a1, steered)]):
            out["comply"][i] += c
            out["correct"][i] += a
            out["mass"][i] += _span_mass(rnd, ranges)
        out["flips"][0] += c1 and not c0  # steering made it comply
        out["flips"][1] += c0 and not c1  # steering broke compliance
    return out


def _compute_ratio(model, tok, steer_cfg, pairs: int, tokens: int) -> tuple[float, list[float]]:
    import dataclasses

    from o3viz.run.capture import RunRequest, capture
    from o3viz.run.config import DAAConfig, SteerSpan
    from o3viz.tasks.steering import steering_tasks

    t = steering_tasks("one_word", 1)[0]
    steer = dataclasses.replace(steer_cfg, spans=[SteerSpan(t.span)])
    ratios = []
    for _ in range(pairs):
        secs = []
        for daa in (DAAConfig(), steer):
            req = RunRequest(prompt=t.prompt, max_new_tokens=tokens, min_new_tokens=tokens, daa=daa)
            t0 = time.perf_counter()
            capture(model, tok, req)
            secs.append(time.perf_counter() - t0)
        ratios.append(secs[1] / secs[0])
    return statistics.median(ratios), ratios


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.hooks.steer import parse_steer_heads
    from o3viz.model import load_model
    from o3viz.run.config import DAAConfig, SteerSpan
    from o3viz.run.daa.steer_profile import PROFILE_START, choose_heads
    from o3viz.tasks.steering import steering_tasks

    if args.threads:
        torch.set_num_threads(args.threads)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    if not families or any(f not in FAMILIES for f in families):
        raise UsageError(f"--families: a comma-separated subset of {', '.join(FAMILIES)}")
    if not 1 <= args.per_family <= PROFILE_START:
        raise UsageError(
            f"--per-family must be 1..{PROFILE_START} (tasks {PROFILE_START}+ are the profiling set)"
        )
    model, tok = load_model()
    cfg = DAAConfig(
        mode="steer",
        spans=[SteerSpan("x")],
        steer_alpha=args.alpha,
        steer_heads=parse_steer_heads(args.heads),
    )
    cfg.validate()
    t0 = time.perf_counter()
    heads, choice, info = choose_heads(model, tok, cfg)
    print(f"heads: {choice} {info.get('chosen_layers', heads if choice == 'list' else 'all')}")
    print(f"head_choice_seconds: {time.perf_counter() - t0:.1f}", flush=True)
    total = {"comply": [0, 0], "correct": [0, 0], "mass": [0.0, 0.0], "flips": [0, 0], "n": 0}
    for fam in families:
        r = _evaluate(model, tok, steering_tasks(fam, args.per_family), cfg, args.max_new_tokens)
        for key in ("comply", "correct", "mass", "flips"):
            total[key] = [a + b for a, b in zip(total[key], r[key], strict=True)]
        total["n"] += r["n"]
        _report(fam, r)
    _report("all", total)
    if args.compute_pairs:
        med, ratios = _compute_ratio(model, tok, cfg, args.compute_pairs, args.compute_tokens)
        print(
            f"compute_ratio_{args.compute_tokens}: {med:.3f} (pairs: {', '.join(f'{x:.3f}' for x in ratios)})"
        )
    return 0


def _report(name: str, r: dict) -> None:
    n = r["n"]
    for i, side in enumerate(("unsteered", "steered")):
        print(f"{name}_compliance_{side}: {_interval(r['comply'][i], n)}")
        print(f"{name}_accuracy_{side}: {_interval(r['correct'][i], n)}")
    ratio = r["mass"][1] / r["mass"][0] if r["mass"][0] > 0 else float("nan")
    print(
        f"{name}_span_attention_ratio: {ratio:.3f} (mean span mass {r['mass'][0] / n:.3f} -> {r['mass'][1] / n:.3f})"
    )
    print(
        f"{name}_compliance_flips: +{r['flips'][0]} / -{r['flips'][1]} (steering made comply / broke)",
        flush=True,
    )
