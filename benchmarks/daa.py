"""DAA accuracy on GSM8K: the first N test problems, greedy, with DAA off and in allocate mode at
each strength; exact numeric match of the last number in the answer against the reference.

The prompt asks the model to end with "The answer is N."; the answer is the last number of the
generated text (``o3viz.run.assemble.extract_answer``). Attention is not recorded (only the
bias is applied), so the runs measure the allocation's effect, not capture overhead.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from o3viz.errors import UsageError
from o3viz.paths import data_dir

DATA = data_dir() / "gsm8k" / "gsm8k_test.jsonl"
INSTRUCTION = 'Solve the problem step by step. End with the line "The answer is N." where N is a number.'


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gsm8k", type=int, default=100, help="first N test problems (default 100)")
    p.add_argument(
        "--strengths", default="0.5,1,2", help="allocate strengths λ, comma-separated (default 0.5,1,2)"
    )
    p.add_argument("--max-new-tokens", type=int, default=256, help="tokens per answer (default 256)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (default 0: torch's default)")
    p.add_argument("--data", type=Path, default=DATA, help="gsm8k_test.jsonl (default ../shared/data/gsm8k)")


def load_problems(path: Path, n: int) -> list[tuple[str, str]]:
    """(question, reference number) of the first n problems."""
    if not path.is_file():
        raise UsageError(f"{path}: GSM8K data not found (expected ../shared/data/gsm8k/gsm8k_test.jsonl)")
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(out) >= n:
                break
            row = json.loads(line)
            out.append((row["question"], row["answer"].rsplit("####", 1)[-1].strip().replace(",", "")))
    return out


def same_number(a: str | None, b: str) -> bool:
    if a is None:
        return False
    try:
        return abs(float(a) - float(b)) < 1e-6
    except ValueError:
        return a.strip() == b.strip()


def _parse_strengths(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--strengths: expected comma-separated numbers, not {text!r}") from None


def _accuracy(model, tok, problems, daa, max_new_tokens: int) -> tuple[float, float]:
    """(accuracy, seconds per generated token) of one setting over all problems."""
    from o3viz.run.capture import CaptureConfig, RunRequest, capture

    t0, right, tokens = time.perf_counter(), 0, 0
    for question, ref in problems:
        req = RunRequest(
            prompt=f"{question}\n{INSTRUCTION}",
            max_new_tokens=max_new_tokens,
            capture=CaptureConfig(enabled=False),
            daa=daa,
        )
        tr = capture(model, tok, req, task="math")
        right += same_number(tr.final.answer, ref)
        tokens += len(tr.final.tokens)
    return right / len(problems), (time.perf_counter() - t0) / max(tokens, 1)


def run(args: argparse.Namespace) -> int:
    import torch

    from o3viz.model import load_model
    from o3viz.run.capture import DAAConfig

    if args.threads:
        torch.set_num_threads(args.threads)

    if args.gsm8k < 1:
        raise UsageError("--gsm8k must be at least 1")
    strengths = _parse_strengths(args.strengths)
    problems = load_problems(args.data, args.gsm8k)
    model, tok = load_model()
    settings = [("off", DAAConfig(mode="off"))]
    settings += [(f"allocate_{s:g}", DAAConfig(mode="allocate", strength=s)) for s in strengths]
    rows = []
    for name, daa in settings:
        acc, secs = _accuracy(model, tok, problems, daa, args.max_new_tokens)
        rows.append((name, acc, secs))
        print(f"gsm8k_accuracy_{name}: {acc:.3f}", flush=True)
    base_secs = rows[0][2]
    for name, _, secs in rows[1:]:
        print(f"time_per_token_{name}_vs_off: {secs / base_secs:.3f}")
    print(f"\n| DAA setting | GSM8K accuracy (first {len(problems)}) | time per token vs off |")
    print("| --- | --- | --- |")
    for name, acc, secs in rows:
        print(f"| {name} | {acc:.1%} | {secs / base_secs:.2f}x |")
    return 0
