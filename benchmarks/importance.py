"""importance: Thought Anchors step importance against the paper's own labels, and its cost.

``--part labels``: on the Thought Anchors file (``../shared/data/traces/
thought_anchors_math_base_solutions.jsonl``, 42 problems), each problem's labelled chunks become the
steps; receiver scores (embedded model as reader, first ``--max-tokens`` tokens) and suppression
scores (first ``--suppression-tokens`` tokens) are compared with the published
``counterfactual_importance_kl`` / ``_accuracy`` by Spearman correlation, pooled over all scored
chunks and as the per-problem median, beside two baselines: step position and step length. Then
the mean score per ``function_tag`` (scores ranked within each problem, 0..1).

``--part cost``: ratios measured in the same run, interleaved:
- receiver-head analysis vs the enrichment forward alone, on a ``--cost-tokens`` token trace;
- suppression of N steps vs N single (masked, uncached) forwards;
- K local rollouts of ``--rollout-tokens`` tokens from one prefix (shared cache, one batch) vs K
  separate generations.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from o3viz.analysis.importance.stats import ranks
from o3viz.errors import UsageError
from o3viz.paths import data_dir

TAGS_PAPER_TOP = ("plan_generation", "uncertainty_management")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--part", choices=("labels", "cost", "model", "budget", "all"), default="all")
    p.add_argument("--problems", type=int, default=42, help="first N problems of the file (42 = all)")
    p.add_argument("--max-tokens", type=int, default=8192, help="receiver: tokens read per problem")
    p.add_argument("--suppression-tokens", type=int, default=512, help="suppression: tokens read per problem")
    p.add_argument(
        "--suppression-problems", type=int, default=42, help="suppression on the first N problems only"
    )
    p.add_argument("--cost-tokens", type=int, default=8192)
    p.add_argument("--cost-steps", type=int, default=16, help="N for the suppression cost")
    p.add_argument("--rollouts", type=int, default=8, help="K for the rollout cost")
    p.add_argument("--rollout-tokens", type=int, default=128)
    p.add_argument("--repeat", type=int, default=1, help="interleaved repetitions of each cost pair")
    p.add_argument("--threads", type=int, default=1, help="torch threads (1 on a shared machine)")
    p.add_argument(
        "--json", type=Path, help="write per-chunk rows and the figures here (after every problem)"
    )
    p.add_argument("--from-json", type=Path, help="report the labels part from rows a (partial) run wrote")
    p.add_argument(
        "--resume",
        action="store_true",
        help="labels: keep the problems --json already holds and score only the rest",
    )
    p.add_argument(
        "--budget-k",
        type=int,
        nargs="+",
        default=[8, 16],
        help="budget: the fixed runs' K per prefix (the adaptive run's k_max)",
    )
    p.add_argument(
        "--budget-plan",
        action="append",
        type=_plan,
        metavar="TOL,FILL_TV,STRIDE",
        help="budget: an adaptive plan besides the default (0.3,0.1,2); repeatable",
    )
    m = p.add_argument_group("model: on-model validation (the embedded model reads its own traces)")
    m.add_argument("--seed", type=int, default=0, help="seed of the generated word problems")
    m.add_argument("--model-problems", type=int, default=12, help="traces analysed (with >= 3 steps)")
    m.add_argument("--model-candidates", type=int, default=40, help="problems generated at most")
    m.add_argument("--model-k", type=int, default=4, help="rollouts per prefix")
    m.add_argument("--model-gap", type=int, default=2, help="receiver gap on these short traces")
    m.add_argument("--model-rollout-tokens", type=int, default=40)
    m.add_argument("--capture-tokens", type=int, default=64, help="tokens of each captured trace")
    m.add_argument("--model-cache", type=Path, help="rollout cache (default: ~/.cache/o3viz/rollouts)")
    m.add_argument("--model-json", type=Path, help="write the on-model rows here (after every problem)")


def _plan(text: str) -> tuple[float, float, int]:
    try:
        tol, fill, stride = text.split(",")
        return float(tol), float(fill), int(stride)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give TOL,FILL_TV,STRIDE, e.g. 0.3,0.1,2") from None


def _records() -> list[dict]:
    path = data_dir() / "traces" / "thought_anchors_math_base_solutions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _trace(rec: dict):
    """The problem as a trace whose steps are the labelled chunks."""
    from o3viz.analysis.importance import published_importance, steps_from_chunks
    from o3viz.trace import Round, Task, Trace

    text = rec["base_solution"]["solution"]
    if rec.get("problem"):  # 40 MATH problems
        task = Task(
            rec["problem"]["problem"], kind="math", source="import", reference=rec["problem"]["gt_answer"]
        )
    else:  # the file's last 2 records are agentic-misalignment scenarios (an email, no reference)
        task = Task(rec["base_solution"].get("prompt") or "", kind="general", source="import")
    t = Trace(task, [Round(text=text)])
    t.provenance.source = {"source_model": rec["model"]}
    steps_from_chunks(t.final, rec["chunks_labeled"])
    return t, published_importance(t.final, rec["chunks_labeled"])


def _labels(args, model, tok) -> dict:
    from o3viz.analysis.importance import receiver_importance, suppression_importance
    from o3viz.analysis.importance.stats import binary_entropy

    rows, locality = [], []
    if args.resume and args.json and args.json.is_file():  # a stopped run's problems are kept as they are
        kept = json.loads(args.json.read_text())["labels"]
        rows, locality = kept["rows"], kept.get("locality") or []
        print(f"  resumed: {len({r['problem'] for r in rows})} problems from {args.json}", flush=True)
    done = {r["problem"] for r in rows}
    for n, rec in enumerate(_records()[: args.problems]):
        if n in done:
            continue
        t, pub = _trace(rec)
        t0 = time.perf_counter()
        try:
            recv = receiver_importance(t, model, tok, retokenize=True, max_tokens=args.max_tokens)
        except UsageError as exc:  # e.g. a prompt longer than --max-tokens: say so and go on
            print(f"  problem {n}: skipped ({exc})", flush=True)
            continue
        t1 = time.perf_counter()
        sup = None
        if n < args.suppression_problems:
            try:
                sup = suppression_importance(
                    t, model, tok, retokenize=True, max_tokens=args.suppression_tokens
                )
            except UsageError as exc:  # too few chunks fit in --suppression-tokens: leave it unscored
                print(f"  problem {n}: suppression skipped ({exc})")
        t2 = time.perf_counter()
        locality.append(recv.info["receiver_head_locality"])
        for i, st in enumerate(t.final.steps):
            rows.append(
                {
                    "problem": n,
                    "step": i,
                    "n_steps": len(t.final.steps),
                    "chars": len(st.text),
                    "tag": st.type,
                    "receiver": recv.scores[i],
                    "receiver_nonlocal": recv.series["receiver_nonlocal"][i],
                    "headroom": binary_entropy(pub.series["accuracy"][i]),
                    "suppression": None if sup is None else sup.scores[i],
                    "cf_kl": pub.series["counterfactual_importance_kl"][i],
                    "cf_acc": pub.series["counterfactual_importance_accuracy"][i],
                }
            )
        print(
            f"  problem {n}: {len(t.final.steps)} chunks, receiver {t1 - t0:.1f} s "
            f"({recv.params['steps_read']} chunks read), suppression {t2 - t1:.1f} s",
            flush=True,
        )
        if args.json:  # after every problem, so a stopped run keeps its rows (--from-json)
            _write_json(args.json, {"labels": {"rows": rows, "locality": locality}})
    return _report_labels(rows, locality)


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def _col(rows, key) -> np.ndarray:
    return np.array([np.nan if r[key] is None else float(r[key]) for r in rows])


def _report_labels(rows: list[dict], locality: list | None = None) -> dict:
    from benchmarks._importance_report import agreement_figures, locality_figures, rho_figures

    out: dict = {"rows": rows, "spearman": {}, "tags": {}}
    for r in rows:
        r["position"], r["length"] = r["step"], r["chars"]
        r.setdefault("receiver_nonlocal", None)
        r.setdefault("headroom", None)
    methods = ["receiver", "receiver_nonlocal", "suppression", "position", "length", "headroom"]
    for target in ("cf_kl", "cf_acc"):
        out["spearman"][target] = rho_figures(rows, methods, target, "thought-anchors")
    out["agreement"] = agreement_figures(rows, ["receiver", "suppression", "cf_kl"], "thought-anchors")
    out["locality"] = locality_figures(locality or [], "thought-anchors")
    for m in ("receiver", "suppression", "cf_kl"):
        by_tag: dict[str, list[float]] = {}
        for g in _groups(rows):
            vals = _col(g, m)
            if m == "cf_kl":  # the paper's labels on the chunks the receiver read, for a like comparison
                vals = np.where(np.isfinite(_col(g, "receiver")), vals, np.nan)
            ok = np.isfinite(vals)
            if ok.sum() < 2:
                continue
            q = np.full(len(g), np.nan)
            q[ok] = (ranks(vals[ok]) - 1) / (ok.sum() - 1)
            for r, v in zip(g, q, strict=True):
                if np.isfinite(v) and r["tag"]:
                    by_tag.setdefault(r["tag"], []).append(float(v))
        out["tags"][m] = {k: (float(np.mean(v)), len(v)) for k, v in sorted(by_tag.items())}
        top = sorted(out["tags"][m].items(), key=lambda kv: -kv[1][0])
        print(f"mean rank per tag, {m}: " + ", ".join(f"{k} {v[0]:.2f} (n={v[1]})" for k, v in top))
    return out


def _groups(rows):
    by: dict[int, list[dict]] = {}
    for r in rows:
        by.setdefault(r["problem"], []).append(r)
    return list(by.values())


def _f(x) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _cost(args, model, tok) -> dict:
    import torch

    from o3viz.analysis.importance.reading import ReadSequence
    from o3viz.analysis.importance.receiver import receiver_from_matrices, step_attention
    from o3viz.analysis.importance.suppression import suppression_matrix
    from o3viz.clients import Sampling
    from o3viz.clients.local import generate_shared_prefix
    from o3viz.hooks.blockwise import WindowRecorder, recording
    from o3viz.hooks.suppress import suppressing

    text = " ".join(r["base_solution"]["solution"] for r in _records()[:6])
    ids = tok(text, add_special_tokens=False)["input_ids"][: args.cost_tokens]
    t_len = len(ids)
    cfg = model.config
    step_len = max(1, t_len // 200)  # ~200 steps, like a long R1 trace
    steps = [(a, min(t_len, a + step_len)) for a in range(0, t_len - step_len + 1, step_len)]
    seq = ReadSequence(ids, 0, steps, {})

    def enrichment_forward():
        rec = WindowRecorder(0, t_len, t_len, 0, cfg.num_hidden_layers, cfg.num_attention_heads, [])
        with torch.inference_mode(), recording(model, rec):
            model.get_decoder()(input_ids=torch.tensor([ids]))

    def receiver():
        receiver_from_matrices(step_attention(model, seq))

    out = {}
    a = b = 0.0
    for _ in range(args.repeat):
        a += _timed(enrichment_forward)
        b += _timed(receiver)
    out["receiver_vs_enrichment"] = b / a
    print(
        f"receiver analysis / enrichment forward ({t_len} tokens, {len(steps)} steps): {b / a:.2f}x "
        f"({b / args.repeat:.1f} s vs {a / args.repeat:.1f} s; goal <= 1.2)",
        flush=True,
    )
    if args.cost_steps > 0:  # --cost-steps 0 / --rollouts 0 skip those parts
        out.update(_suppression_cost(args, model, tok, suppressing, suppression_matrix, ReadSequence))
    if args.rollouts > 0:
        out.update(_rollout_cost(args, model, tok, Sampling, generate_shared_prefix))
    return out


def _suppression_cost(args, model, tok, suppressing, suppression_matrix, ReadSequence) -> dict:
    import torch

    text = _records()[0]["base_solution"]["solution"]
    n = args.cost_steps
    ids = tok(text, add_special_tokens=False)["input_ids"][: 32 * (n + 1)]
    step = len(ids) // (n + 1)
    steps = [(a, a + step) for a in range(0, step * (n + 1), step)]
    seq = ReadSequence(ids, 0, steps, {})

    def naive():  # N single forwards: one full masked pass per step, nothing shared
        for a, b in steps[:-1]:
            sup = torch.zeros(1, len(ids), dtype=torch.bool)
            sup[0, a:b] = True
            with torch.inference_mode(), suppressing(model, sup):
                model.get_decoder()(input_ids=torch.tensor([ids]))

    x = y = 0.0
    for _ in range(args.repeat):
        x += _timed(naive)
        y += _timed(lambda: suppression_matrix(model, seq))
    print(
        f"suppression of {n} steps / {n} single forwards ({len(ids)} tokens): {y / x:.2f}x "
        f"({y / args.repeat:.1f} s vs {x / args.repeat:.1f} s; goal <= 1.1)",
        flush=True,
    )
    return {"suppression_vs_forwards": y / x}


def _rollout_cost(args, model, tok, Sampling, generate_shared_prefix) -> dict:
    import torch

    from o3viz.run.prompt import layout_prompt

    rec = _records()[0]
    prefix = layout_prompt(tok, rec["problem"]["problem"]).ids
    prefix += tok(rec["base_solution"]["solution"][:1500], add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prefix])
    k, n = args.rollouts, args.rollout_tokens
    sampling = Sampling(max_tokens=n, temperature=0.7, top_p=0.95)

    def separate():
        for i in range(k):
            torch.manual_seed(i)
            with torch.inference_mode():
                model.generate(
                    ids,
                    do_sample=True,
                    temperature=0.7,
                    top_p=0.95,
                    max_new_tokens=n,
                    min_new_tokens=n,
                    pad_token_id=tok.pad_token_id,
                )

    def shared():
        model.generation_config.min_new_tokens = n  # equal lengths on both sides
        try:
            generate_shared_prefix(model, tok, ids, k, sampling)
        finally:
            model.generation_config.min_new_tokens = None

    x = y = 0.0
    for _ in range(args.repeat):
        x += _timed(separate)
        y += _timed(shared)
    print(
        f"K={k} rollouts of {n} tokens, shared prefix one batch / {k} separate generations "
        f"({len(prefix)}-token prefix): {y / x:.2f}x ({y / args.repeat:.1f} s vs {x / args.repeat:.1f} s; "
        "goal <= 0.5)",
        flush=True,
    )
    return {"rollouts_vs_separate": y / x}


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.model import load_model

    torch.set_num_threads(args.threads)
    result: dict = {}
    if args.from_json:
        data = json.loads(args.from_json.read_text())
        if "labels" in data:
            rows = data["labels"]["rows"]
            print(
                f"{len({r['problem'] for r in rows})} problems, {len(rows)} chunks (from {args.from_json.name})"
            )
            _report_labels(rows, data["labels"].get("locality"))
        if "settings" in data:  # an on-model run's --model-json
            from benchmarks._importance_model import report

            report(data)
        return 0
    if args.part in ("budget", "all"):
        from benchmarks._importance_budget import report, simulate
        from o3viz.analysis.importance.adaptive import Adaptive

        recs = [r for r in _records()[: args.problems] if r.get("problem")]  # the 40 MATH problems
        result["budget"] = []
        d = Adaptive()
        plans = [(d.tol, d.fill_tv, d.stride), *(args.budget_plan or [])]
        for k in args.budget_k:
            for tol, fill, stride in plans:
                plan = Adaptive(k_min=2, k_max=k, stride=int(stride), tol=tol, fill_tv=fill)
                result["budget"].append(report(simulate(recs, k, plan), k, plan))
        if args.part == "budget":
            if args.json:
                args.json.write_text(json.dumps(result, indent=1))
            return 0
    model, tok = load_model()
    if args.part in ("model", "all"):
        from benchmarks._importance_model import collect, report

        result["model"] = report(collect(args, model, tok))
    if args.part in ("labels", "all"):
        result["labels"] = _labels(args, model, tok)
    if args.part in ("cost", "all"):
        result["cost"] = _cost(args, model, tok)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0
