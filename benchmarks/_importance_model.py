"""The on-model part of ``python -m benchmarks importance --part model``: the embedded model
reads its own traces, so the white-box scores are not a proxy's.

1. A task family with known answers: one-step addition word problems ("Sam has 7 coins. Sam gets
   5 more coins. How many coins does Sam have now?"), generated from ``--seed``; the embedded
   SmolLM2-135M answers about half of them right (greedy; measured and printed).
2. Its own greedy traces (``--capture-tokens``), of which the first ``--model-problems`` with at
   least 3 steps are kept.
3. Receiver heads (``--model-gap``: these traces have 3-10 steps, too few for the paper's gap of
   4), suppression and counterfactual resampling (``--model-k`` rollouts of
   ``--model-rollout-tokens`` tokens per prefix, the local batched backend) on the same model.
4. An adaptive run (``o3viz.analysis.importance.adaptive``, k_max = K) drawn from the same cached
   rollouts: rollouts used against the fixed run, and its recall of the fixed run's top steps.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

NAMES = ("Sam", "Mia", "Leo", "Ava", "Ben", "Zoe")
THINGS = ("apples", "books", "coins", "pens", "cards", "shells")


def problems(seed: int, n: int) -> list[tuple[str, int]]:
    """``n`` one-step addition word problems and their answers."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b, who, what = rng.randint(3, 19), rng.randint(2, 9), rng.choice(NAMES), rng.choice(THINGS)
        out.append(
            (f"{who} has {a} {what}. {who} gets {b} more {what}. How many {what} does {who} have now?", a + b)
        )
    return out


def _capture(model, tok, question: str, answer: int, tokens: int):
    from o3viz.run.capture import capture
    from o3viz.run.config import CaptureConfig
    from o3viz.run.request import RunRequest
    from o3viz.trace import Task

    req = RunRequest(prompt=question, max_new_tokens=tokens, capture=CaptureConfig(enabled=False))
    return capture(model, tok, req, task=Task(question, kind="math", reference=str(answer)))


def _top(scores: list, k: int) -> set[int]:
    ok = [(v, i) for i, v in enumerate(scores) if v is not None]
    return {i for _, i in sorted(ok, reverse=True)[:k]}


def top_recall(fixed: list, other: list, n: int) -> float | None:
    """The share of ``fixed``'s top ``n`` scored steps that are in ``other``'s top as many; a trace
    with fewer scored steps than ``n`` is judged on those it has (None when it has none)."""
    want = _top(fixed, n)
    return len(want & _top(other, len(want))) / len(want) if want else None


def _adaptive(trace, model, tok, k: int, sampling, cache, fixed) -> dict:
    from o3viz.analysis.importance import LocalBackend, resample_importance
    from o3viz.analysis.importance.adaptive import Adaptive, collect_adaptive
    from o3viz.analysis.importance.resample import prefixes, rollout_answer
    from o3viz.run.prompt import rollout_prompt
    from o3viz.text.answers import normalize_answer

    backend = LocalBackend(model, tok)
    prompt, pre = rollout_prompt(trace, tok), prefixes(trace)
    run = collect_adaptive(
        backend, prompt, pre, sampling, cache, rollout_answer,
        ref=normalize_answer(trace.task.reference), plan=Adaptive(k_min=2, k_max=k),
    )  # fmt: skip
    rec = resample_importance(
        trace, backend, (model, tok), k=k, sampling=sampling, cache=cache, rollouts=run.rollouts
    )
    n_top = min(5, max(1, len(fixed.scores) // 2))  # top-5, or the top half of a short trace
    want = _top(fixed.scores, n_top)  # fewer where fewer steps have a score
    if not want:
        return {"used": run.used, "fixed": len(pre) * k, "prefixes": len(pre), "top": 0, "recall": None}
    full = fixed_rollouts(trace, backend, k, sampling, cache)
    uniform = {}  # K' < K per prefix (the first K' of the same rollouts): recall of the fixed top
    for kk in range(2, k):
        sub = resample_importance(
            trace, backend, (model, tok), k=kk, sampling=sampling, cache=cache,
            rollouts=[r[:kk] for r in full],
        )  # fmt: skip
        uniform[kk] = top_recall(fixed.scores, sub.scores, n_top)
    return {
        "used": run.used,
        "fixed": len(pre) * k,
        "prefixes": len(pre),
        "top": len(want),
        "recall": top_recall(fixed.scores, rec.scores, n_top),
        "uniform_recall": uniform,
    }


def fixed_rollouts(trace, backend, k: int, sampling, cache) -> list[list[str]]:
    """The fixed run's K rollouts per prefix (from the cache it filled)."""
    from o3viz.analysis.importance.resample import collect_rollouts, prefixes
    from o3viz.run.prompt import rollout_prompt

    return collect_rollouts(
        backend, rollout_prompt(trace, backend.tokenizer), prefixes(trace), k, sampling, cache
    )


def _rows(trace, n: int, recs: dict) -> list[dict]:
    res = recs["resample"]
    rows = []
    for i, st in enumerate(trace.final.steps):
        rows.append(
            {
                "problem": n, "step": i, "n_steps": len(trace.final.steps), "chars": len(st.text),
                "position": res.series["baseline_position"][i], "headroom": res.series["baseline_headroom"][i],
                "receiver": recs["receiver"].scores[i], "receiver_nonlocal": recs["receiver"].series["receiver_nonlocal"][i],
                "suppression": recs["suppression"].scores[i], "resample": res.scores[i],
                "resampling_accuracy": res.series["resampling_accuracy"][i],
                "clears_floor": res.series["clears_floor"][i], "noise_floor": res.series["noise_floor"][i],
                "ci_low": res.series["ci_low"][i], "ci_high": res.series["ci_high"][i],
            }
        )  # fmt: skip
    return rows


def collect(args, model, tok) -> dict:
    """Capture, analyse and resample the on-model set; rows written to ``--json`` after each problem."""
    from o3viz.analysis.importance import (
        LocalBackend,
        RolloutCache,
        Sampling,
        add_importance,
        receiver_importance,
        resample_importance,
        suppression_importance,
    )  # fmt: skip
    from o3viz.text.answers import answers_equivalent, normalize_answer

    cache = RolloutCache(args.model_cache)
    sampling = Sampling(max_tokens=args.model_rollout_tokens)
    data: dict = {"rows": [], "problems": [], "adaptive": [], "locality": [], "settings": vars_of(args)}
    t_start = time.perf_counter()
    for n, (q, ans) in enumerate(problems(args.seed, args.model_candidates)):
        if sum(p.get("analysed", False) for p in data["problems"]) >= args.model_problems:
            break
        t = _capture(model, tok, q, ans, args.capture_tokens)
        right = t.final.answer is not None and answers_equivalent(normalize_answer(t.final.answer), str(ans))
        entry = {
            "question": q,
            "answer": ans,
            "got": t.final.answer,
            "right": right,
            "steps": len(t.final.steps),
        }
        data["problems"].append(entry)
        if len(t.final.steps) < 3:
            continue
        t0 = time.perf_counter()
        recs = {
            "receiver": receiver_importance(t, model, tok, gap=args.model_gap),
            "suppression": suppression_importance(t, model, tok),
        }
        recs["resample"] = resample_importance(
            t, LocalBackend(model, tok), (model, tok), k=args.model_k, sampling=sampling, cache=cache
        )
        for r in recs.values():
            add_importance(t, r)
        entry.update(
            analysed=True,
            p0_accuracy=recs["resample"].series["accuracy"][0],
            seconds=time.perf_counter() - t0,
        )
        data["rows"] += _rows(t, n, recs)
        data["adaptive"].append(_adaptive(t, model, tok, args.model_k, sampling, cache, recs["resample"]))
        data["locality"].append(recs["receiver"].info["receiver_head_locality"])
        data["elapsed_s"] = time.perf_counter() - t_start
        print(
            f"  on-model problem {n}: {len(t.final.steps)} steps, right={right}, {entry['seconds']:.0f} s",
            flush=True,
        )
        if args.model_json:
            Path(args.model_json).write_text(json.dumps(data, indent=1))
    return data


def vars_of(args) -> dict:
    keys = (
        "seed",
        "model_gap",
        "model_problems",
        "model_candidates",
        "model_k",
        "model_rollout_tokens",
        "capture_tokens",
    )
    return {k: getattr(args, k) for k in keys}


def report(data: dict) -> dict:
    """The on-model figures (``name: value [90% interval]`` lines) from ``collect``'s data."""
    import numpy as np

    from benchmarks._importance_report import agreement_figures, locality_figures, rho_figures
    from o3viz.analysis.dataset import wilson
    from o3viz.analysis.importance.stats import bootstrap_over_groups

    probs, rows = data["problems"], data["rows"]
    for r in rows:
        r["length"] = r["chars"]
    right, n = sum(p["right"] for p in probs), len(probs)
    lo, hi = wilson(right, n, 1.6449) or (None, None)
    print(
        f"on-model family accuracy (greedy, one-step addition word problems): {right}/{n} = {right / max(n, 1):.2f} {_iv((lo, hi))}"
    )
    done = [p for p in probs if p.get("analysed")]
    p0 = [p["p0_accuracy"] for p in done if p.get("p0_accuracy") is not None]
    print(
        f"on-model accuracy of the rollouts from the bare prompt: {np.mean(p0):.2f} ({len(p0)} traces x K = {data['settings']['model_k']})"
    )
    print(
        f"on-model traces analysed: {len(done)} ({sum(p['steps'] for p in done)} steps; {n - len(done)} of {n} captured had < 3 steps or were past the set)"
    )
    cl = [r["clears_floor"] for r in rows if r["clears_floor"] is not None]
    c_lo, c_hi = wilson(int(sum(cl)), len(cl), 1.6449) or (None, None)
    print(
        f"on-model steps clearing their noise floor: {int(sum(cl))}/{len(cl)} = {sum(cl) / max(len(cl), 1):.2f} {_iv((c_lo, c_hi))}"
    )
    out = {"accuracy": right / max(n, 1), "clears": sum(cl) / max(len(cl), 1)}
    preds = ["receiver", "receiver_nonlocal", "suppression", "position", "length", "headroom"]
    out["spearman"] = rho_figures(rows, preds, "resample", "on-model")
    out["agreement"] = agreement_figures(rows, ["receiver", "suppression", "resample"], "on-model")
    out["locality"] = locality_figures(data["locality"], "on-model")
    ad = data["adaptive"]
    if ad:
        used, fixed = sum(a["used"] for a in ad), sum(a["fixed"] for a in ad)
        scored = [a for a in ad if a.get("recall") is not None]  # traces with a scored step
        rec = float(np.mean([a["recall"] for a in scored]))
        saved_ci = bootstrap_over_groups(
            lambda g: 1 - sum(a["used"] for a in g) / sum(a["fixed"] for a in g), ad
        )
        rec_ci = bootstrap_over_groups(lambda g: float(np.mean([a["recall"] for a in g])), scored)
        print(
            f"on-model adaptive rollouts saved vs fixed K: {1 - used / fixed:.2f} {_iv(saved_ci)} ({used} of {fixed} rollouts)"
        )
        print(
            f"on-model adaptive recall of the fixed run's top steps (top 5, or top half of a short trace): {rec:.2f} {_iv(rec_ci)}"
        )
        uniform = [
            {int(x): v for x, v in a["uniform_recall"].items()} for a in scored if a.get("uniform_recall")
        ]
        if uniform:  # the smallest uniform K' whose mean recall reaches the adaptive run's
            k = data["settings"]["model_k"]
            equal = next((kk for kk in range(2, k) if np.mean([u[kk] for u in uniform]) >= rec), k)
            got = [a for a in scored if a.get("uniform_recall")]
            uni, mine = sum(a["prefixes"] * equal for a in got), sum(a["used"] for a in got)
            print(
                f"on-model adaptive at equal recall: a uniform K' = {equal} per prefix reaches it "
                f"({uni} rollouts); adaptive saves {1 - mine / uni:.2f} against it"
            )
        out["adaptive"] = {
            "saved": 1 - used / fixed,
            "saved_ci": saved_ci,
            "recall": rec,
            "recall_ci": rec_ci,
        }
    print(f"on-model elapsed: {data.get('elapsed_s', 0) / 60:.1f} min")
    return out


def _iv(ci) -> str:
    return "[—]" if ci is None or ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
