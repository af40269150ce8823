"""Context compression: scaling, speed at equal answers, and retention at an equal token budget.

- **Scaling**: ``compress_context`` (regex tokenizer, i.e. ``tokenizer=None``; the model
  tokenizer's own time on 100k tokens is printed separately) on the first 10k / 100k / 1M tokens of
  real repetitive text from ../shared/data, interleaving reasoning traces (MATH-500 R1/distill
  answers, Thought Anchors solutions, the rope-puzzle thinking texts), GSM8K reference solutions
  and log-like lines (a log prefix on each GSM8K solution line). Best of ``--repeat`` runs.
- **Needle inputs**: GSM8K solutions, a few repeated many times (``--redundancy`` of the tokens)
  and the rest used once, with three needle facts ("The access code for locker NAME is NNNNN.")
  on their own lines at random places in the non-repeated part; the question asks for the first.
- **Speed** (needs the default model; ``--no-model`` skips it): time to answer (chat template,
  plain greedy ``model.generate``, ``--new-tokens`` tokens) on the full input and on the
  pointer-compressed input (compression time included; best of ``--timing-repeats``, interleaved);
  whether the answers match and contain
  the code.
- **Retention at ``--budget`` of the original tokens**: pointer compression (then, if still over
  budget, dropping the highest-scored segments that no pointer refers to), truncating the front, and a sliding window that
  keeps 4 sink tokens plus the most recent tokens (StreamingLLM). A fact counts as retained when
  its text is exactly recoverable from the squeezed context (for pointers: by expanding what is
  left); ``reconstructable_*`` is the share of the original segment characters recoverable.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path

from o3viz.compress.context import CompressionConfig, compress_context
from o3viz.compress.repeats import tokenize_regex
from o3viz.errors import UsageError
from o3viz.paths import data_dir

DATA = data_dir()
_ANNOT = re.compile(r"<<[^<>]*>>")
_NAMES = ["Avila", "Brenner", "Castel", "Dorsey", "Ebbing", "Farrow", "Gilmore", "Hadley", "Ingram", "Jessup"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, default=DATA, help="shared data folder")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="token counts for the scaling runs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scaling size (best is reported)")
    parser.add_argument(
        "--inputs", type=int, default=3, help="needle inputs (each is run twice with the model)"
    )
    parser.add_argument("--tokens", type=int, default=6000, help="target length of a needle input in tokens")
    parser.add_argument(
        "--redundancy", type=float, default=0.8, help="share of repeated tokens in needle inputs"
    )
    parser.add_argument(
        "--budget", type=float, default=0.25, help="retention budget, share of the original tokens"
    )
    parser.add_argument("--new-tokens", type=int, default=12, help="tokens generated per answer")
    parser.add_argument(
        "--no-model", action="store_true", help="skip the timed model runs (regex token counts)"
    )
    parser.add_argument(
        "--timing-repeats", type=int, default=2, help="timed runs per input and method (best)"
    )
    parser.add_argument("--seed", type=int, default=0)


# ---------------------------------------------------------------- data


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_sources(data: Path) -> dict[str, list[str]]:
    """Real documents by kind: reasoning traces, GSM8K solutions, log-like text."""
    traces_dir, gsm = data / "traces", data / "gsm8k" / "gsm8k_test.jsonl"
    if not traces_dir.is_dir() or not gsm.is_file():
        raise UsageError(f"shared data not found under {data}; pass --data")
    traces = [r["full_response"] for p in sorted(traces_dir.glob("topology*.jsonl")) for r in _jsonl(p)]
    traces += [
        r["base_solution"]["solution"]
        for r in _jsonl(traces_dir / "thought_anchors_math_base_solutions.jsonl")
    ]
    traces += [p.read_text(encoding="utf-8") for p in sorted((traces_dir / "thinking_texts").glob("*.txt"))]
    solutions = [_ANNOT.sub("", r["answer"]) for r in _jsonl(gsm)]
    logs = []
    for i, sol in enumerate(solutions):
        lines = [
            f"2024-05-01 12:{(i // 60) % 60:02d}:{i % 60:02d} INFO worker-{i % 4} task={i} step={k}: {line}"
            for k, line in enumerate(sol.splitlines())
        ]
        logs.append("\n".join(lines))
    return {"traces": traces, "gsm8k": solutions, "logs": logs}


def scaling_corpus(sources: dict[str, list[str]], tokens: int) -> str:
    """Documents of the three kinds interleaved (cycled if needed) until ``tokens`` regex tokens."""
    kinds = list(sources.values())
    parts, count, i = [], 0, 0
    while count < tokens:
        doc = kinds[i % 3][(i // 3) % len(kinds[i % 3])]
        parts.append(doc)
        count += len(tokenize_regex(doc))
        i += 1
    text = "\n\n".join(parts)
    return text[: int(tokenize_regex(text).ends[tokens - 1])]


@dataclass
class NeedleInput:
    text: str  # the context (without the question)
    question: str
    answer: str
    facts: list[str]  # fact lines; facts[0] answers the question


def build_needle_input(
    solutions: list[str], rng: random.Random, tokens: int, redundancy: float, count
) -> NeedleInput:
    """Repeated + unique GSM8K paragraphs and three needle facts in the unique part."""
    names = rng.sample(_NAMES, 3)
    facts = [f"The access code for locker {n} is {rng.randint(10000, 99999)}." for n in names]
    repeated = rng.sample(solutions, 3)
    blocks: list[tuple[str, bool]] = []
    rep_tokens = uniq_tokens = 0
    while rep_tokens < redundancy * tokens:
        p = repeated[len(blocks) % 3]
        blocks.append((p, True))
        rep_tokens += count(p)
    while uniq_tokens < (1 - redundancy) * tokens or sum(not rep for _, rep in blocks) < len(facts):
        p = rng.choice(solutions)
        blocks.append((p, False))
        uniq_tokens += count(p)
    rng.shuffle(blocks)
    unique_at = [i for i, (_, rep) in enumerate(blocks) if not rep]
    for fact, at in zip(facts, sorted(rng.sample(unique_at, len(facts))), strict=True):
        blocks[at] = (blocks[at][0] + "\n" + fact, False)
    question = f"What is the access code for locker {names[0]}? Answer with the number only."
    return NeedleInput("\n\n".join(b for b, _ in blocks), question, facts[0].split()[-1].rstrip("."), facts)


# ---------------------------------------------------------------- retention at a budget


def _token_starts(text: str, tokenizer) -> list[int]:
    if tokenizer is None:
        return tokenize_regex(text).starts.tolist()
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    return [s for s, _ in enc["offset_mapping"]]


def retention_pointer(inp: NeedleInput, ctx, budget: int, count) -> tuple[float, float]:
    """Facts retained and share reconstructable after pointer compression; if the compressed text
    is still over ``budget`` tokens, segments are dropped by score (highest first, then oldest),
    sparing those that pointers refer to, until it fits."""
    segs = ctx.segments
    cost, seen = [0] * len(segs), set()
    for s in segs:  # a range pointer's tokens are charged to the first segment it covers
        if (s.cstart, s.cend) not in seen:
            seen.add((s.cstart, s.cend))
            cost[s.index] = count(ctx.text[s.cstart : s.cend])
    sources = {s.source for s in segs if s.state == "compressed"}
    over = count(ctx.text) - budget
    dropped = set()
    for s in sorted(segs, key=lambda s: (-s.score, s.index)):
        if over <= 0:
            break
        if s.index not in sources and cost[s.index] > 0:
            dropped.add(s.index)
            over -= cost[s.index]
    recoverable = [False] * len(segs)
    for s in segs:
        recoverable[s.index] = s.index not in dropped and (s.state != "compressed" or recoverable[s.source])
    text = ctx.expand()
    facts = sum(
        any(recoverable[s.index] and inp.facts[k] in text[s.start : s.end] for s in segs)
        for k in range(len(inp.facts))
    )
    total = sum(s.end - s.start for s in segs) or 1
    return facts / len(inp.facts), sum(s.end - s.start for s in segs if recoverable[s.index]) / total


def retention_window(inp: NeedleInput, budget: int, starts: list[int], sink: int) -> tuple[float, float]:
    """Keep the first ``sink`` tokens and the last ``budget - sink`` (sink=0: truncate the front)."""
    text, n = inp.text, len(starts)
    head_end = starts[sink] if 0 < sink < n else 0
    tail_start = starts[max(n - (budget - sink), 0)] if budget - sink > 0 else len(text)
    tail_start = max(tail_start, head_end)

    def kept(a: int, b: int) -> bool:
        return b <= head_end or a >= tail_start

    facts = sum(kept(text.index(f), text.index(f) + len(f)) for f in inp.facts)
    return facts / len(inp.facts), (head_end + len(text) - tail_start) / max(len(text), 1)


# ---------------------------------------------------------------- speed with the model


def _answer(model, tok, context: str, question: str, new_tokens: int) -> tuple[str, float, int, int]:
    """(answer, seconds, prompt tokens, generated tokens) of plain greedy ``model.generate``."""
    import torch

    msgs = [{"role": "user", "content": f"{context}\n\n{question}"}]
    enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    enc = {k: v.to(model.device) for k, v in enc.items()}
    t0 = time.perf_counter()
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=new_tokens, do_sample=False)
    dt = time.perf_counter() - t0
    n = enc["input_ids"].shape[1]
    return tok.decode(out[0, n:], skip_special_tokens=True).strip(), dt, n, out.shape[1] - n


def _norm(ans: str) -> str:
    return " ".join(ans.split()).lower()


def _full_and_compressed(model, tok, inp: NeedleInput, new_tokens: int, full_first: bool):
    """(full answer, seconds, prompt tokens, generated), (compressed answer, seconds incl. compressing, ...)."""

    def full():
        return _answer(model, tok, inp.text, inp.question, new_tokens)

    def compressed():
        t0 = time.perf_counter()
        ctx = compress_context(inp.text, tokenizer=tok, question=inp.question)
        t_comp = time.perf_counter() - t0
        a, t_gen, n, g = _answer(model, tok, ctx.text, inp.question, new_tokens)
        return a, t_comp + t_gen, n, g

    if full_first:
        f = full()
        return f, compressed()
    c = compressed()
    return full(), c


def run_speed(model, tok, inputs: list[NeedleInput], args) -> list[str]:
    full_t, comp_t, same, right_f, right_c, ptoks, examples, gen = [], [], 0, 0, 0, [], [], [0, 0]
    # Warm-up, untimed, at the measured size: the first call pays lazy imports, kernel choice and
    # allocator growth, which would land on the full-input run and favour compression.
    _full_and_compressed(model, tok, inputs[0], args.new_tokens, True)
    for inp in inputs:
        best_full = best_comp = float("inf")
        for i in range(args.timing_repeats):  # interleaved, order alternating, best of N
            gc.collect()
            (a_full, t_full, n_full, g_full), (a_comp, t_c, n_comp, g_comp) = _full_and_compressed(
                model, tok, inp, args.new_tokens, i % 2 == 0
            )
            best_full, best_comp = min(best_full, t_full), min(best_comp, t_c)
        full_t.append(best_full)
        comp_t.append(best_comp)
        ptoks.append((n_full, n_comp))
        gen[0], gen[1] = gen[0] + g_full, gen[1] + g_comp
        same += _norm(a_full) == _norm(a_comp)
        right_f += inp.answer in a_full
        right_c += inp.answer in a_comp
        examples.append((inp.answer, a_full, a_comp))
    k = len(inputs)
    tf, tc = sum(full_t) / k, sum(comp_t) / k
    return [
        f"speed_inputs: {k}",
        f"speed_prompt_tokens_full_mean: {sum(a for a, _ in ptoks) / k:.0f}",
        f"speed_prompt_tokens_compressed_mean: {sum(b for _, b in ptoks) / k:.0f}",
        f"generated_tokens_full_mean: {gen[0] / k:.1f}",
        f"generated_tokens_compressed_mean: {gen[1] / k:.1f}",
        f"time_full_s_mean: {tf:.2f}",
        f"time_compressed_s_mean: {tc:.2f}",
        f"time_ratio_compressed_over_full: {tc / tf:.3f}",
        f"faster_by_percent: {100 * (1 - tc / tf):.1f}",
        f"same_answer_rate: {same / k:.2f}",
        f"correct_full_rate: {right_f / k:.2f}",
        f"correct_compressed_rate: {right_c / k:.2f}",
        f"answer_example: expected {examples[0][0]!r}, full {examples[0][1]!r}, compressed {examples[0][2]!r}",
    ]


# ---------------------------------------------------------------- run


def run_scaling(sources, sizes: list[int], repeat: int, tok) -> list[str]:
    lines, times = [], {}
    for n in sizes:
        text = scaling_corpus(sources, n)
        best, ctx = float("inf"), None
        for _ in range(repeat):
            t0 = time.perf_counter()
            ctx = compress_context(text)
            best = min(best, time.perf_counter() - t0)
        times[n] = best
        label = f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}m"
        lines += [
            f"scaling_{label}_s: {best:.3f}",
            f"scaling_{label}_ratio: {ctx.ratio:.3f}",
            f"scaling_{label}_lossless: {ctx.expand() == text}",
        ]
        if tok is not None and n == 100_000:
            t0 = time.perf_counter()
            tok(text, add_special_tokens=False, return_offsets_mapping=True)
            lines.append(f"model_tokenizer_100k_s: {time.perf_counter() - t0:.3f}")
    ordered = sorted(times)
    for a, b in zip(ordered, ordered[1:], strict=False):
        lines.append(
            f"time_ratio_{b // 1000}k_over_{a // 1000}k: {times[b] / times[a]:.2f} (size x{b / a:.0f})"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    sources = load_sources(args.data)
    model = tok = None
    if not args.no_model:
        from o3viz.model import load_model

        model, tok = load_model()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    for line in run_scaling(sources, sizes, args.repeat, tok):
        print(line)
    rng = random.Random(args.seed)
    count = (lambda t: len(tokenize_regex(t))) if tok is None else (lambda t: len(tok(t)["input_ids"]))
    inputs = [
        build_needle_input(sources["gsm8k"], rng, args.tokens, args.redundancy, count)
        for _ in range(args.inputs)
    ]
    _print_retention(inputs, tok, count, args.budget)
    if model is not None and inputs:
        for line in run_speed(model, tok, inputs, args):
            print(line)
    return 0


def _print_retention(inputs: list[NeedleInput], tok, count, budget_share: float) -> None:
    if not inputs:
        return
    sums = {"pointer": [0.0, 0.0], "truncate_front": [0.0, 0.0], "sliding_window": [0.0, 0.0]}
    red = 0.0
    for inp in inputs:
        starts = _token_starts(inp.text, tok)
        budget = int(budget_share * len(starts))
        ctx = compress_context(inp.text, tokenizer=tok, config=CompressionConfig())
        red += 1 - ctx.ratio
        for name, (f, r) in {
            "pointer": retention_pointer(inp, ctx, budget, count),
            "truncate_front": retention_window(inp, budget, starts, 0),
            "sliding_window": retention_window(inp, budget, starts, 4),
        }.items():
            sums[name][0] += f
            sums[name][1] += r
    k = len(inputs)
    print(f"needle_inputs: {k}")
    print(f"needle_tokens_saved_by_pointers_mean: {red / k:.3f}")
    print(f"retention_budget_share: {budget_share}")
    for name, (f, r) in sums.items():
        print(f"retention_facts_{name}: {f / k:.3f}")
        print(f"reconstructable_{name}: {r / k:.3f}")
    print(
        f"retention_gain_pointer_vs_truncate_front_points: {100 * (sums['pointer'][0] - sums['truncate_front'][0]) / k:.1f}"
    )
