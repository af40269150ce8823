"""``o3viz importance TRACE --method receiver|suppression|resample|published --out F``: the Thought
Anchors step-importance measures, written into a copy of the trace."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from o3viz.cli._trace_arg import TRACE_HELP, open_trace
from o3viz.cli.run import check_out
from o3viz.errors import UsageError

EPILOG = """examples:
  o3viz importance run.o3trace.json --method receiver --out run.imp.o3trace.json
  o3viz importance r1.o3trace.json --method suppression --retokenize --max-tokens 2048 --out r1.s.o3trace.json
  o3viz importance run.o3trace.json --method resample --k 8 --max-new-tokens 256 --dry-run
  o3viz importance run.o3trace.json --method resample --base-url http://127.0.0.1:8000/v1 \\
      --model Qwen/Qwen2.5-7B-Instruct --max-rollouts 500 --out run.r.o3trace.json
  o3viz importance --dataset gsm8k --method resample --base-url http://127.0.0.1:8000/v1 \\
      --model Qwen/Qwen2.5-7B-Instruct --concurrency 16 --budget 7200
  o3viz importance ta.o3trace.json --method published --labels thought_anchors.jsonl --record 3 --out t.o3trace.json
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "importance",
        help="which steps mattered: receiver heads, attention suppression, counterfactual resampling",
        description="Score each step of a trace by the Thought Anchors measures (arXiv 2506.19143) and "
        "write the scores, the step x step matrix and the dependency edges into a copy of the trace. "
        "receiver and suppression read the text with a local model (a proxy when it did not write the "
        "trace); resample samples continuations from a local model or an OpenAI-compatible endpoint.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", type=Path, nargs="?", help=TRACE_HELP + "; import other formats first")
    p.add_argument("--dataset", help="resample every trace of this stored dataset instead (needs --base-url)")
    p.add_argument("--method", required=True, choices=("receiver", "suppression", "resample", "published"))
    p.add_argument("--out", type=Path, help="output trace file (required unless --dry-run)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.add_argument("--round", type=int, default=-1, help="round to analyse (default: the final one)")
    g = p.add_argument_group("reader (receiver, suppression; embeddings for resample)")
    g.add_argument(
        "--model",
        help="local model (default: the embedded SmolLM2-135M-Instruct); with "
        "--base-url, the endpoint's model name",
    )
    g.add_argument("--reader", help="local model for resample's sentence embeddings (default: embedded)")
    g.add_argument(
        "--retokenize",
        action="store_true",
        help="read the text with the reader's own tokens "
        "(needed when the reader's tokenizer differs from the writer's)",
    )
    g.add_argument(
        "--max-tokens",
        type=int,
        help="read at most this many tokens (prompt + text); steps past it are left unscored",
    )
    g.add_argument("--gap", type=int, default=4, help="receiver: skip this many nearest later steps (4)")
    g.add_argument("--top-k", type=int, default=16, help="receiver: receiver heads kept (16)")
    g.add_argument("--batch", type=int, default=4, help="suppression: masked passes per batch (4)")
    g.add_argument(
        "--min-weight", type=float, default=0.2, help="suppression: weakest dependency edge kept (0.2)"
    )
    r = p.add_argument_group("resample")
    r.add_argument("--k", type=int, default=8, help="rollouts per prefix (8)")
    r.add_argument("--max-new-tokens", type=int, default=256, help="tokens per rollout (256)")
    r.add_argument("--temperature", type=float, default=0.7)
    r.add_argument("--top-p", type=float, default=0.95)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument(
        "--threshold",
        type=float,
        default=0.8,
        help="cosine similarity under which a resampled step counts as different (0.8)",
    )
    r.add_argument("--max-rollouts", type=int, help="cap on new rollouts this run; the rest stay unscored")
    r.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
        "(API key from $O3VIZ_API_KEY or $OPENAI_API_KEY)",
    )
    r.add_argument("--extra-body", help="JSON object of server-specific request fields")
    r.add_argument("--retries", type=int, default=3, help="endpoint retries with backoff (3)")
    r.add_argument(
        "--request-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="total seconds one endpoint request may take, headers and body included (120)",
    )
    r.add_argument(
        "--budget",
        default="3600",
        metavar="B",
        help="a plain number: seconds this run may spend on the endpoint, then no new rollout starts "
        "and the rest stay unscored (cached rollouts resume on the next run) (3600); 500r or 20000t: "
        "rollouts or new tokens for an adaptive run (implies --adaptive)",
    )
    r.add_argument(
        "--adaptive",
        action="store_true",
        help="adaptive resampling: every 2nd prefix first, more rollouts (up to --k) only where the "
        "answer is undecided, and the prefixes in between only where the answer moved",
    )
    r.add_argument(
        "--concurrency", type=int, default=4, help="with --dataset: requests in flight to the endpoint (4)"
    )
    r.add_argument("--cache-dir", type=Path, help="rollout cache (default: ~/.cache/o3viz/rollouts)")
    r.add_argument("--dry-run", action="store_true", help="print the cost estimate and stop")
    l_ = p.add_argument_group("published")
    l_.add_argument("--labels", type=Path, help="Thought Anchors JSONL with chunks_labeled")
    l_.add_argument("--record", type=int, default=0, help="record of --labels (0)")
    l_.add_argument("--rechunk", action="store_true", help="make the labelled chunks the round's steps")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from o3viz.analysis.importance import add_importance

    if args.dataset is not None:
        from o3viz.cli._importance_dataset import run_dataset

        return run_dataset(args, _extra(args.extra_body), _load, _bar, _budget(args.budget))
    if args.trace is None:
        raise UsageError("give a TRACE file, or --dataset NAME")
    if args.out is None and not args.dry_run:
        raise UsageError("--out is required (or --dry-run to see the cost)")
    # writing the result over the input trace is asked for by naming it; anything else is replaced
    # only with --overwrite, also when it appears while the run goes on
    overwrite = args.out is not None and (args.overwrite or args.out.resolve() == args.trace.resolve())
    if args.out is not None:
        check_out(args.out, overwrite)
    trace = open_trace(args.trace).trace
    if not -len(trace.rounds) <= args.round < len(trace.rounds):
        raise UsageError(f"--round {args.round}: the trace has {len(trace.rounds)} round(s)")
    if args.method != "published":
        from o3viz.analysis.importance.reading import check_steps

        check_steps(trace.rounds[args.round], args.method)  # before loading any model
    t0 = time.perf_counter()
    rec = {"receiver": _white_box, "suppression": _white_box, "resample": _resample, "published": _published}[
        args.method
    ](args, trace)
    if rec is None:
        return 0
    add_importance(trace, rec, args.round, elapsed_s=time.perf_counter() - t0)
    path = trace.save(args.out, overwrite=overwrite)
    scored = [s for s in rec.scores if s is not None]
    top = sorted(range(len(rec.scores)), key=lambda i: -(rec.scores[i] or float("-inf")))[:3]
    if "noise_floor" in rec.series:
        print("\n".join(trust_lines(rec)))
    print(
        f"{args.method}: {len(scored)}/{len(rec.scores)} steps scored, {len(rec.depends_on)} dependency "
        f"edges, top steps {top}{' (reader is a proxy)' if rec.model.get('proxy') else ''} -> {path}"
    )
    if len(trace.rounds[args.round].importance) > 1:
        from o3viz.analysis.importance import agreement

        print(agreement(trace.rounds[args.round].importance).line())
    return 0


def _n(v: float | None) -> str:
    return "—" if v is None else f"{v:+.3f}"


def trust_lines(rec) -> list[str]:
    """One line per step of a resampling record: score, interval, noise floor, clears it or not,
    headroom."""
    s = rec.series
    level = round(100 * rec.params.get("level", 0.9))
    lines = [f"step  score   {level}% interval      noise floor  clears  headroom"]
    for i, v in enumerate(rec.scores):
        clears = {1.0: "yes", 0.0: "no"}.get(s["clears_floor"][i], "—")
        lines.append(
            f"{i:>4}  {_n(v)}  [{_n(s['ci_low'][i])}, {_n(s['ci_high'][i])}]  {_n(s['noise_floor'][i])}"
            f"       {clears:<6}  {_n(s['headroom'][i])}"
        )
    n_clear = sum(x == 1.0 for x in s["clears_floor"])
    lines.append(
        f"{n_clear}/{sum(x is not None for x in s['clears_floor'])} scored steps clear their noise floor"
    )
    return lines


def _load(name: str | None):
    from o3viz.model import load_model

    return load_model(name)


def _white_box(args, trace):
    from o3viz.analysis.importance import receiver_importance, suppression_importance

    model, tok = _load(args.model)
    common = {"round_index": args.round, "retokenize": args.retokenize, "max_tokens": args.max_tokens}
    if args.method == "receiver":
        return receiver_importance(trace, model, tok, gap=args.gap, top_k=args.top_k, **common)
    bar = _bar("suppression", "steps")
    try:
        return suppression_importance(
            trace, model, tok, batch=args.batch, min_weight=args.min_weight, on_progress=bar, **common
        )
    finally:
        bar.close()


def _resample(args, trace):
    from o3viz.analysis.importance import estimate
    from o3viz.analysis.importance.adaptive import Budget
    from o3viz.analysis.importance.resample import resample_importance
    from o3viz.clients import LocalBackend, OpenAIBackend, RolloutCache, Sampling, api_key_from_env
    from o3viz.run.prompt import rollout_prompt

    sampling = Sampling(args.max_new_tokens, args.temperature, args.top_p, args.seed)
    seconds, budget = _budget(args.budget)
    if args.base_url:
        if not args.model:
            raise UsageError("--base-url needs --model, the endpoint's model name")
        backend = OpenAIBackend(
            args.base_url,
            args.model,
            api_key_from_env(),
            retries=args.retries,
            timeout=args.request_timeout,
            extra_body=_extra(args.extra_body),
            budget_s=seconds,
        )
        reader = None
        prompt = rollout_prompt(trace, None, args.round)
    else:
        reader = _load(args.model)
        backend = LocalBackend(*reader)
        prompt = rollout_prompt(trace, reader[1], args.round)
    cache = RolloutCache(args.cache_dir)
    cost = estimate(trace, backend, prompt, args.k, sampling, cache, args.max_rollouts, args.round)
    print(f"cost: {cost.line()} via {backend.name}", file=sys.stderr)
    if args.dry_run:
        return None
    if reader is None or args.reader:
        reader = _load(args.reader)
    rolls = None
    if args.adaptive or budget is not None:
        rolls = _adaptive(args, trace, backend, prompt, sampling, cache, budget or Budget())
    bar = _bar("resample", "rollouts")
    try:
        rec = resample_importance(
            trace,
            backend,
            reader,
            rollouts=rolls,
            k=args.k,
            sampling=sampling,
            threshold=args.threshold,
            cache=cache,
            max_rollouts=args.max_rollouts,
            prompt=prompt,
            round_index=args.round,
            on_progress=bar,
            should_stop=getattr(backend, "spent", None),
        )
    finally:
        bar.close()
    if rolls is not None:
        b = budget or Budget()
        rec.params["adaptive"] = {"k_max": args.k, "budget_rollouts": b.rollouts, "budget_tokens": b.tokens}
    return rec


def _budget(text: str):
    """(seconds, None) for a plain number, else (3600 s, the rollouts / tokens ``Budget``)."""
    from o3viz.analysis.importance.adaptive import Budget

    try:
        seconds = float(text)
    except ValueError:
        return 3600.0, Budget.parse(text)
    if not seconds > 0:
        raise UsageError("--budget in seconds must be positive")
    return seconds, None


def _adaptive(args, trace, backend, prompt, sampling, cache, budget):
    from o3viz.analysis.importance.adaptive import Adaptive, collect_adaptive
    from o3viz.analysis.importance.resample import prefixes, rollout_answer
    from o3viz.text.answers import normalize_answer

    ref = normalize_answer(trace.task.reference) if trace.task.reference else None
    run = collect_adaptive(
        backend, prompt, prefixes(trace, args.round), sampling, cache, rollout_answer,
        ref=ref, plan=Adaptive(k_max=args.k), budget=budget, should_stop=getattr(backend, "spent", None),
    )  # fmt: skip
    full = len(run.rollouts) * args.k
    stop = " (stopped by the budget)" if run.stopped else ""
    print(
        f"adaptive: {run.used} rollouts of a fixed run's {full}, {run.tokens:,} new tokens{stop}",
        file=sys.stderr,
    )
    return run.rollouts


def _published(args, trace):
    from o3viz.analysis.importance import published_importance, steps_from_chunks
    from o3viz.importers.formats import read_input

    if args.labels is None or not args.labels.is_file():
        raise UsageError("--method published needs --labels FILE.jsonl (the Thought Anchors data)")
    raw = read_input(args.labels)
    records = raw.data if isinstance(raw.data, list) else [raw.data]
    if not 0 <= args.record < len(records) or not isinstance(records[args.record], dict):
        raise UsageError(f"--record {args.record}: {args.labels.name} has {len(records)} records")
    chunks = records[args.record].get("chunks_labeled")
    if not isinstance(chunks, list) or not chunks:
        raise UsageError(f"{args.labels.name} record {args.record} has no chunks_labeled")
    rnd = trace.rounds[args.round]
    if args.rechunk:
        steps_from_chunks(rnd, chunks)
    return published_importance(rnd, chunks)


def _extra(text: str | None) -> dict:
    if not text:
        return {}
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--extra-body is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise UsageError("--extra-body must be a JSON object")
    return obj


class _Bar:
    """A tqdm bar on stderr driven by (done, total) callbacks."""

    def __init__(self, desc: str, unit: str) -> None:
        from tqdm import tqdm

        self.bar = tqdm(desc=desc, unit=f" {unit}", file=sys.stderr, disable=None)

    def __call__(self, done: int, total: int) -> None:
        self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def _bar(desc: str, unit: str) -> _Bar:
    return _Bar(desc, unit)
