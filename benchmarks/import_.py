"""import: time to import a 30k-token trace, step-type agreement with labels, answer agreement with
is_correct, and (``--enrich-tokens N``) enrichment time and peak memory above the model's RSS.

The long trace is built by concatenating real thinking texts from ``../shared/data/traces``
inside ``<think>…</think>``, followed by a real DeepSeek-R1 answer. Peak memory is the process's
high-water mark (``VmHWM``, reset through ``/proc/self/clear_refs``) minus its resident size once
the model is loaded.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from o3viz.paths import data_dir

ROPE_QUESTION = (
    "You have two ropes, each of which takes exactly 60 minutes to burn completely. However, the "
    "ropes burn unevenly. You have no other timing device. How can you measure exactly 20 minutes "
    "using these two ropes and matches to light them?"
)


def _data() -> Path:
    return data_dir() / "traces"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokens", type=int, default=30_000, help="size of the imported trace (default 30000)")
    p.add_argument("--repeat", type=int, default=3, help="imports to time; the median is printed")
    p.add_argument(
        "--enrich-tokens",
        type=int,
        default=0,
        help="also enrich a trace of this many tokens with the default model (e.g. 8192; slow)",
    )
    p.add_argument("--no-agreement", action="store_true", help="skip the label and is_correct agreement")


@functools.cache
def _tokenizer():
    """The default model's tokenizer, or None when it is not installed."""
    try:
        from transformers import AutoTokenizer

        from o3viz.model import resolve_model

        return AutoTokenizer.from_pretrained(resolve_model(None)[0])
    except Exception:  # noqa: BLE001 - any failure falls back to the estimate, and says so
        return None


def _count_tokens(text: str) -> tuple[int, str]:
    """Tokens by the default model's tokenizer, or chars/4 when it is not installed."""
    tok = _tokenizer()
    if tok is None:
        return len(text) // 4, "estimate (chars/4)"
    return len(tok(text, add_special_tokens=False)["input_ids"]), "default tokenizer"


def build_long_text(tokens: int) -> tuple[str, int, str]:
    """``<think>`` + real thinking texts (cycled, cut to size) + ``</think>`` + a real answer,
    ``tokens`` long by the default tokenizer (or about that, by chars/4, without it)."""
    texts = [p.read_text() for p in sorted((_data() / "thinking_texts").glob("*.txt"))]
    answer = json.loads((_data() / "topology_math500_deepseek_r1.jsonl").read_text().splitlines()[5])[
        "answer_text"
    ]
    body, i = "", 0
    while len(body) < tokens * 6:  # these texts run 4 to 5 characters per token
        body += texts[i % len(texts)] + "\n\n"
        i += 1
    tail = "\n</think>\n\n" + answer
    tok = _tokenizer()
    budget = tokens - _count_tokens("<think>\n" + tail)[0]
    if tok is None:
        body = body[: budget * 4]
    else:
        offsets = tok(body, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        body = body[: offsets[min(budget, len(offsets)) - 1][1]]
    text = "<think>\n" + body + tail
    n, how = _count_tokens(text)
    return text, n, how


def _bench_import(args: argparse.Namespace) -> None:
    from o3viz.importers import import_trace

    text, n, how = build_long_text(args.tokens)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "long_trace.txt"
        path.write_text(text)
        import_trace("<think>1+1=2.</think>2")  # warm-up: regex compilation, lazy imports
        times, trace = [], None
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            trace = import_trace(path, question="benchmark")
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        import_trace(path, question="benchmark", claims=False)
        no_claims = time.perf_counter() - t0
    print(f"import_tokens: {n} ({how}), {len(text)} chars, {len(trace.steps)} steps")
    print(f"import_seconds: {statistics.median(times):.3f} (median of {len(times)}; goal <= 1 s)")
    print(f"import_seconds_without_claims: {no_claims:.3f}")
    print(f"import_claims_share: {1 - no_claims / statistics.median(times):.2f}")


def _bench_agreement() -> None:
    from o3viz.importers.agreement import measure_type_agreement
    from o3viz.importers.survey import survey_answers

    a = measure_type_agreement(_data() / "thought_anchors_math_base_solutions.jsonl")
    print(f"step_type_accuracy: {a.accuracy:.3f} over {a.n} labelled chunks ({a.unaligned} not aligned)")
    print(f"step_type_majority_baseline: {a.baseline:.3f}")
    for t, d in a.per_class.items():
        print(
            f"step_type[{t}]: precision {d['precision']:.2f} recall {d['recall']:.2f} support {d['support']}"
        )
    s = survey_answers(_data())
    print(f"answer_agreement_with_is_correct: {s.agree}/{s.graded} = {s.agree / max(1, s.graded):.3f}")
    for row in s.disagreements:
        print(f"answer_disagreement: {row}")


def _rss_kb(field: str) -> int:
    return int(re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))


def _bench_enrich(tokens: int) -> None:
    import torch

    from o3viz.importers import import_trace
    from o3viz.importers.enrich import enrich_trace
    from o3viz.model import load_model

    model, tok = load_model()
    text, n, _ = build_long_text(tokens)
    ids = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    if len(ids["input_ids"]) > tokens:
        text = text[: ids["offset_mapping"][tokens - 1][1]]
    trace = import_trace(text, question=ROPE_QUESTION, claims=False)
    with torch.no_grad():  # a short forward pages in every weight (safetensors load lazily, by mmap)
        model(torch.tensor([ids["input_ids"][:16]]))
    gc.collect()
    base = _rss_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    t0 = time.perf_counter()
    enrich_trace(trace, model=model, tokenizer=tok, layers="none")
    took = time.perf_counter() - t0
    peak = _rss_kb("VmHWM")
    print(
        f"enrich_tokens: {len(trace.tokens)} text + {trace.attention.prompt_len} prompt, "
        f"{len(trace.attention.info['windows'])} windows"
    )
    print(f"enrich_seconds: {took:.1f}")
    print(f"enrich_model_rss_mb: {base / 1024:.0f}")
    print(f"enrich_peak_above_model_mb: {(peak - base) / 1024:.0f} (goal <= 2048)")


def run(args: argparse.Namespace) -> int:
    if not _data().is_dir():
        print("import_seconds: skipped (../shared/data/traces is absent)")
        return 0
    _bench_import(args)
    if not args.no_agreement:
        _bench_agreement()
    if args.enrich_tokens:
        _bench_enrich(args.enrich_tokens)
    return 0
