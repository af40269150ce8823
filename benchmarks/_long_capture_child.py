"""What one fresh process of the long-capture benchmark measures (``python -m benchmarks
long_capture --child N``, started by ``benchmarks/long_capture.py``): one capture of an N-token
prompt (its peak memory above the model, its time against plain ``generate``, its trace's size),
or the receiver-head forward against the enrichment of the same N tokens. Each prints one JSON
line for the parent to read.
"""

from __future__ import annotations

import argparse
import gc
import json
import threading
import time

RECEIVER_STEP = 48  # tokens per step of the receiver-head run


def long_prompt(tok, n: int) -> str:
    """A prompt of about ``n`` tokens (the chat template adds a few): numbered, varied facts and
    a question about them, so the text does not repeat itself."""
    lines, chars = [], 0
    while chars < 6 * n:  # well over n tokens: a token of this text is about 3 characters
        i = len(lines)
        lines.append(
            f"Fact {i}: crate {i % 97} holds {(i * 37) % 101} apples and {(i * 11) % 53} pears; "
            f"it was packed on day {(i * 7) % 31 + 1} by worker {(i * 13) % 17}."
        )
        chars += len(lines[-1]) + 1
    ids = tok("\n".join(lines), add_special_tokens=False)["input_ids"][: max(8, n - 40)]
    return tok.decode(ids) + "\nHow many apples are in crate 3 in total? Think step by step."


def peak_during(fn) -> tuple[object, int]:
    """(fn(), peak RSS in bytes while it ran), sampled every 20 ms."""
    import psutil

    proc = psutil.Process()
    peak, done = [proc.memory_info().rss], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.02)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    try:
        out = fn()
    finally:
        done.set()
        th.join()
    return out, max(peak[0], proc.memory_info().rss)


def capture_child(n: int, args: argparse.Namespace) -> int:
    """One capture of an ``n``-token prompt (or ``--gen-tokens``), then the timed pairs."""
    import psutil
    import torch

    from o3viz.model import load_model
    from o3viz.run.capture import RunRequest, capture
    from o3viz.run.prompt import layout_prompt
    from o3viz.run.sizing import storage_note
    from o3viz.trace import trace_bytes

    model, tok = load_model()
    g = args.gen_tokens or args.new_tokens
    capture(model, tok, RunRequest(prompt="What is 2+3?", max_new_tokens=4))  # warm-up
    prompt = long_prompt(tok, n)
    req = RunRequest(prompt=prompt, max_new_tokens=g, min_new_tokens=g)
    gc.collect()
    base = psutil.Process().memory_info().rss
    t0 = time.perf_counter()
    trace, peak = peak_during(lambda: capture(model, tok, req))
    seconds = time.perf_counter() - t0
    data = trace_bytes(trace, gzipped=True)
    rnd = trace.final
    out = {
        "length": f"gen_{g}" if args.gen_tokens else n,
        "prompt_tokens": len(rnd.prompt_tokens),
        "generated": len(rnd.tokens),
        "peak_above_model_mb": (peak - base) / 2**20,
        "capture_s": seconds,
        "trace_bytes": len(data),
        "bytes_per_token": len(data) / (len(rnd.prompt_tokens) + len(rnd.tokens)),
        "kept": storage_note(rnd.attention.info) if rnd.attention else "",
        "ratios": [],
    }
    del trace, data
    if n <= args.time_max and not args.gen_tokens:
        ids = torch.tensor([layout_prompt(tok, prompt).ids])
        kw = {"max_new_tokens": g, "min_new_tokens": g, "do_sample": False, "pad_token_id": tok.pad_token_id}
        for _ in range(args.pairs):
            t_plain = timed(lambda: _generate(model, ids, kw))
            t_cap = timed(lambda: capture(model, tok, req))
            out["ratios"].append(t_cap / t_plain)
    print(json.dumps(out))
    return 0


def receiver_child(n: int, args: argparse.Namespace) -> int:
    """Interleaved (enrichment forward, receiver forward) pairs on one n-token sequence."""
    import psutil

    from o3viz.analysis.importance.receiver import step_attention
    from o3viz.model import load_model
    from o3viz.run.prompt import layout_prompt

    model, tok = load_model()
    ids = layout_prompt(tok, long_prompt(tok, n)).ids
    p = 64  # the "question"; the rest is the text read in steps
    seq = argparse.Namespace(
        ids=ids, steps=[(a, min(a + RECEIVER_STEP, len(ids))) for a in range(p, len(ids), RECEIVER_STEP)]
    )

    def enrich():
        enrich_ids(model, ids[:p], ids[p:], [(a - p, b - p) for a, b in seq.steps])

    warm = argparse.Namespace(ids=ids[:256], steps=seq.steps[:2])
    step_attention(model, warm)  # warm-up
    gc.collect()
    base = psutil.Process().memory_info().rss
    out = {"length": f"receiver_{n}", "tokens": len(ids), "steps": len(seq.steps), "ratios": []}
    for i in range(args.pairs):
        t0 = time.perf_counter()
        _, peak_e = peak_during(enrich)
        t_e = time.perf_counter() - t0
        gc.collect()
        t0 = time.perf_counter()
        _, peak_r = peak_during(lambda: step_attention(model, seq))
        t_r = time.perf_counter() - t0
        gc.collect()
        out["ratios"].append(t_r / t_e)
        if i == 0:
            out.update(enrich_s=t_e, receiver_s=t_r, enrich_peak_mb=(peak_e - base) / 2**20,
                       receiver_peak_mb=(peak_r - base) / 2**20)  # fmt: skip
    print(json.dumps(out))
    return 0


def enrich_ids(model, prompt_ids: list[int], ids: list[int], steps: list[tuple[int, int]]) -> None:
    """The enrichment of ``ids`` after ``prompt_ids`` as ``enrich_trace`` runs it (its storage plan,
    one window, chunks of ``chunk_rows`` query rows with a KV cache, each reduced to the mean rows
    or their top-k pairs, the prompt shares, the streamed step allocation and the token
    statistics), on these exact ids: no tokenizing, no trace to fill."""
    from o3viz.importers.enrich import _run_windows, plan_windows
    from o3viz.importers.enrich_rows import EnrichRows, StepAllocation, chunk_rows
    from o3viz.run.sizing import plan_storage
    from o3viz.trace.parts import Segment, Step

    cfg = model.config
    n_layers, n_heads = cfg.num_hidden_layers, cfg.num_attention_heads
    p, g = len(prompt_ids), len(ids)
    plan = plan_storage(p, g, num_layers=n_layers, num_heads=n_heads, layers=[], top_k=None, prefill=False, can_average=False)  # fmt: skip
    alloc = StepAllocation(
        p, [Segment(0, 0, 0, 0, p)], [Step(i, "", 0, 0, a, b) for i, (a, b) in enumerate(steps)]
    )
    rows_k = plan.rows_top_k if plan.rows == "top_k" else None
    out = EnrichRows(p, g, n_layers, n_heads, [], None, rows_k, alloc)
    _run_windows(model, prompt_ids, ids, plan_windows(g, g, 0), out, chunk_rows(p + g), top_k=5)


def _generate(model, ids, kw) -> None:
    import torch

    with torch.inference_mode():
        model.generate(ids, attention_mask=torch.ones_like(ids), **kw)


def timed(fn) -> float:
    """Seconds ``fn()`` takes, garbage collected after."""
    t0 = time.perf_counter()
    fn()
    gc.collect()
    return time.perf_counter() - t0
