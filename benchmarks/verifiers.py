"""Step verifiers scored the field's way, beside the published numbers (named as theirs).

MR-GSM8K first-error-step accuracy on incorrect solutions, and ProcessBench's F1 on PRM800K phase 1
and on ProcessBench's GSM8K and MATH splits where the data folder has them
(``benchmarks/_verifiers_data.py`` says how each is read), for the claim checker, a PRM
(``--prm``), a judge (``--base-url`` or ``--serve-embedded``), and the claim checker then the PRM
or the judge on the steps it leaves unsure (``claims+prm``; ``*_combined_beats_both`` says whether
the combination beats both alone on the set's headline figure).

Every figure has its n and a 95% interval (a bootstrap over whole problems); the published numbers
printed beside them are the papers' own, on their sets. The claim checker runs on every solution;
model verifiers on a seeded sample of ``--limit`` solutions per set, with the claim checker
measured again on the same sample so the rows compare like with like.

- ``--prm default`` reads the embedded SmolLM2-135M as a tag-shape PRM. It was never trained as a
  PRM: its row is a floor that shows the pipeline runs, not a PRM's figure.
- ``--serve-embedded`` starts ``transformers serve`` of the embedded model on 127.0.0.1 and asks it
  as a judge with ProcessBench's prompt (``--judge-limit`` solutions per set).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import time
from pathlib import Path

from benchmarks._verifiers_data import (
    PUBLISHED_MR_GSM8K_FIRST_ERROR,
    PUBLISHED_PROCESSBENCH_F1,
    Item,
    accuracy,
    f1,
    interval,
    mr_gsm8k,
    prm800k,
    processbench,
    sample,
)
from o3viz.errors import UsageError
from o3viz.paths import data_dir
from o3viz.verify.verifiers import (
    ClaimVerifier,
    Judgement,
    JudgeVerifier,
    Solution,
    make_verifier,
    verify_all,
)
from o3viz.verify.verifiers.builtin import combine


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=data_dir(), help="shared data folder")
    parser.add_argument("--prm", help="a PRM folder or hub id ('default': the embedded model as a floor)")
    parser.add_argument(
        "--trust-remote-code", action="store_true", help="PRM: run the checkpoint's head code"
    )
    parser.add_argument("--device", help="PRM device (default: cuda when there is one)")
    parser.add_argument("--dtype", help="PRM dtype (float32; bfloat16 on a GPU)")
    parser.add_argument("--batch-size", type=int, default=8, help="PRM solutions per forward pass")
    parser.add_argument("--base-url", help="a judge: OpenAI-compatible endpoint ending in /v1")
    parser.add_argument("--model", help="the judge's served model name (with --base-url)")
    parser.add_argument("--serve-embedded", action="store_true", help="judge: serve the embedded model here")
    parser.add_argument("--limit", type=int, default=200, help="solutions per set for a PRM (200)")
    parser.add_argument("--judge-limit", type=int, default=20, help="solutions per set for a judge (20)")
    parser.add_argument("--judge-max-tokens", type=int, default=512, help="judge reply tokens (512)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the samples and the bootstrap")


def _judge_all(verifier, items: list[Item]) -> tuple[list[Judgement], float]:
    t0 = time.perf_counter()
    judged = verify_all(verifier, [Solution(i.question, i.steps) for i in items])
    return judged, time.perf_counter() - t0


def _preds(judged: list[Judgement]) -> list[int]:
    """Each solution's predicted first error: -1 when none was found; -2 (never right) when the
    verifier abstained on every step (all unsure: a judge's unparseable reply, a checker that found
    nothing to check), as ProcessBench counts an unparseable answer as a miss."""
    return [_pred(j) for j in judged]


def _pred(j: Judgement) -> int:
    if j.first_wrong is not None:
        return j.first_wrong
    return -1 if any(v == "ok" for v in j.verdicts) else -2


def _key(name: str) -> str:
    """A verifier's label as part of a figure name (letters, digits, ``_ . -``), so that
    ``benchmarks._results`` records the line: ``claims, sample 24`` -> ``claims.sample_24``."""
    parts = [re.sub(r"[^0-9A-Za-z.\-]+", "_", p.strip()).strip("_") for p in name.split(",")]
    return ".".join(p for p in parts if p)


def _fmt(v: float, lo: float, hi: float, n: int) -> str:
    return f"{100 * v:.1f}  (95% CI {100 * lo:.1f}-{100 * hi:.1f}, n={n})"


def report_mr(name: str, items: list[Item], preds: list[int], seed: int) -> None:
    stat = lambda it, pr: accuracy(it, pr, errors=True)[0]  # noqa: E731
    acc, n = accuracy(items, preds, errors=True)
    print(f"mr_gsm8k_first_error_acc.{_key(name)}: {_fmt(acc, *interval(items, preds, stat, seed=seed), n)}")
    cor, n_cor = accuracy(items, preds, errors=False)
    print(
        f"mr_gsm8k_correct_acc.{_key(name)}: "
        + (f"{100 * cor:.1f} (n={n_cor})" if n_cor else "none (n=0: every solution in this file is wrong)")
    )
    for kind in sorted({i.kind for i in items}):
        sub = [(i, p) for i, p in zip(items, preds, strict=True) if i.kind == kind]
        it, pr = [a for a, _ in sub], [b for _, b in sub]
        a, n = accuracy(it, pr, errors=True)
        print(
            f"mr_gsm8k_first_error_acc.{_key(name)}.{_key(kind)}: {_fmt(a, *interval(it, pr, stat, seed=seed), n)}"
        )


def report_f1(set_name: str, name: str, items: list[Item], preds: list[int], seed: int) -> None:
    """ProcessBench's figures (F1, and its two accuracies) on a set of wrong and correct solutions."""
    err, n_err = accuracy(items, preds, errors=True)
    cor, n_cor = accuracy(items, preds, errors=False)
    e_stat = lambda it, pr: accuracy(it, pr, errors=True)[0]  # noqa: E731
    c_stat = lambda it, pr: accuracy(it, pr, errors=False)[0]  # noqa: E731
    print(
        f"{set_name}_f1.{_key(name)}: {_fmt(f1(items, preds), *interval(items, preds, f1, seed=seed), len(items))}"
    )
    print(
        f"{set_name}_error_acc.{_key(name)}: {_fmt(err, *interval(items, preds, e_stat, seed=seed), n_err)}"
    )
    print(
        f"{set_name}_correct_acc.{_key(name)}: {_fmt(cor, *interval(items, preds, c_stat, seed=seed), n_cor)}"
    )


def measure(name: str, verifier, sets: dict[str, list[Item]], seed: int) -> dict[str, list[Judgement]]:
    """Judge every set, print its figures, and return the judgements by set."""
    out = {}
    for set_name, items in sets.items():
        out[set_name], secs = _judge_all(verifier, items)
        report(name, set_name, items, out[set_name], seed)
        print(f"{set_name}_seconds.{_key(name)}: {secs:.1f}", flush=True)
    return out


def report(name: str, set_name: str, items: list[Item], judged: list[Judgement], seed: int) -> None:
    preds = _preds(judged)
    if set_name == "mr_gsm8k":
        report_mr(name, items, preds, seed)
    else:
        report_f1(set_name, name, items, preds, seed)
    print(
        f"{set_name}_abstained.{_key(name)}: {sum(p == -2 for p in preds)} of {len(preds)} (all steps unsure)"
    )


def _metric(set_name: str, items: list[Item], judged: list[Judgement]) -> float:
    """The set's headline figure: MR-GSM8K's first-error accuracy, else (PRM800K, ProcessBench) F1."""
    preds = _preds(judged)
    return accuracy(items, preds, errors=True)[0] if set_name == "mr_gsm8k" else f1(items, preds)


def combined(
    name: str,
    sets: dict[str, list[Item]],
    first: dict[str, list[Judgement]],
    then: dict[str, list[Judgement]],
    seed: int,
) -> None:
    """The claim checker's decided verdicts, then ``name``'s on the steps it left unsure, from the
    same judgements (no rerun); and whether that beats both alone on the set's headline figure."""
    for set_name, items in sets.items():
        both = [combine(a, b) for a, b in zip(first[set_name], then[set_name], strict=True)]
        report(f"claims+{name}, sample", set_name, items, both, seed)
        c, a, b = (100 * _metric(set_name, items, j) for j in (both, first[set_name], then[set_name]))
        verdict = (
            "beats both"
            if c > max(a, b)
            else "ties the better alone"
            if c == max(a, b)
            else "below the better alone"
        )
        print(
            f"{set_name}_combined_beats_both.{_key(name)}: {verdict} "
            f"(claims+{name} {c:.1f}, claims {a:.1f}, {name} {b:.1f}, n={len(items)})"
        )


def _published() -> None:
    for who, v in PUBLISHED_MR_GSM8K_FIRST_ERROR.items():
        print(f"published_mr_gsm8k_first_error_acc.{_key(who)}.theirs: {v}")
    for who, v in PUBLISHED_PROCESSBENCH_F1.items():
        print(f"published_processbench_f1.{_key(who)}.theirs_ProcessBench_average: {v}")


def _prm(args: argparse.Namespace):
    model = args.prm
    if model == "default":
        from o3viz.model import resolve_model

        model = resolve_model(None)[0]
    prm = make_verifier(
        "prm", model=model, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
        trust_remote_code=args.trust_remote_code,
    )  # fmt: skip
    if args.prm == "default":
        prm.name = "prm:embedded (not a PRM: a floor)"
    return prm


@contextlib.contextmanager
def _judge(args: argparse.Namespace):
    greedy = {
        "do_sample": False,
        "max_new_tokens": args.judge_max_tokens,
        "eos_token_id": 2,
        "pad_token_id": 2,
    }
    gen = {"generation_config": json.dumps(greedy)}
    if args.base_url:
        yield JudgeVerifier.over_endpoint(args.base_url, args.model or "", max_tokens=args.judge_max_tokens)
        return
    from o3viz.model import resolve_model
    from o3viz.testing.serve import transformers_serve

    path = resolve_model(None)[0]
    with transformers_serve(path, Path("/tmp/o3viz_verifiers_serve.log")) as url:
        yield JudgeVerifier.over_endpoint(
            url,
            path,
            max_tokens=args.judge_max_tokens,
            extra_body=gen,
            label=f"transformers serve (embedded) {url}",
            name="judge:embedded",
        )


def run(args: argparse.Namespace) -> int:
    root = args.data / "process_labels"
    paths = (
        root / "mr_gsm8k_claude_eval_results.json",
        root / "prm800k_phase1_test_stepwise_critic.jsonl.gz",
    )
    if not all(p.exists() for p in paths):
        raise UsageError(f"process labels not found in {root}; pass --data")
    full = {"mr_gsm8k": mr_gsm8k(paths[0]), "prm800k": prm800k(paths[1])}
    for split in ("gsm8k", "math"):  # ProcessBench's splits, where the data folder has them
        if (root / f"processbench_{split}.json").exists():
            full[f"processbench_{split}"] = processbench(root / f"processbench_{split}.json")
    _published()
    claims = ClaimVerifier()
    measure("claims", claims, full, args.seed)
    if args.prm:
        part = {k: sample(v, args.limit, args.seed) for k, v in full.items()}
        prm = _prm(args)
        tag = f"{prm.name}, sample"
        first = measure(f"claims, sample {args.limit}", claims, part, args.seed)
        then = measure(tag, prm, part, args.seed)
        combined(prm.name, part, first, then, args.seed)
    if args.base_url or args.serve_embedded:
        part = {k: sample(v, args.judge_limit, args.seed) for k, v in full.items()}
        with _judge(args) as judge:
            first = measure(f"claims, sample {args.judge_limit}", claims, part, args.seed)
            judged = measure(f"{judge.name}, sample", judge, part, args.seed)
            combined(judge.name, part, first, judged, args.seed)
            replies = [j for js in judged.values() for j in js]
            parsed = sum(bool(j.info.get("parsed")) for j in replies)
            print(f"judge_replies_parsed.{_key(judge.name)}: {parsed}/{len(replies)} (the rest: unsure)")
    return 0
