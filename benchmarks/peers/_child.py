"""The child side of ``python -m benchmarks peers``: what every runner script shares.

A runner runs in its tool's own virtual environment, so this module imports only the standard
library, torch and transformers (never o3viz). The driver passes one job as JSON in argv and the
child prints one ``RESULT {json}`` line.

- ``time``: for each length, the tool's workload, then plain sdpa ``generate`` on a second copy of
  the model in the same process (both warmed up first), so every ratio compares runs made seconds
  apart in the same environment.
- ``memory``: the workload once, while a thread samples the process's RSS; the figure is the peak
  above the RSS of the loaded and warmed-up model.
- ``size``: the workload once, saved with the tool's own means, measured and loaded back.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Mode = Literal["time", "memory", "size"]
WARMUP_TOKENS = 4


@dataclass
class Job:
    """One child run, as the driver sends it."""

    tool: str  # "hf", "o3viz", "inseq", "transformer_lens"
    variant: str  # the runner's workload name, e.g. "plain", "output_attentions", "attention"
    mode: Mode
    model: str  # model directory (the embedded model's safetensors cache)
    ids: list[int]  # prompt token ids, chat template applied
    prompt: str  # the user prompt (o3viz lays it out itself; the same ids result)
    new_tokens: list[int]  # time: every length; memory and size: one
    threads: int = 0  # torch threads (0: torch's default)
    out_dir: str = ""  # where a size job saves its artifact
    forced: bool = False  # memory job: prefill prompt + N forced tokens instead of generating


@dataclass
class Result:
    """What the child prints on its RESULT line."""

    times: list[dict[str, float]] = field(default_factory=list)  # time: tokens, tool_s, plain_s
    seconds: float = 0.0
    peak_above_model_mb: float = 0.0
    model_rss_mb: float = 0.0
    prompt_tokens: int = 0
    new_tokens: int = 0
    size_bytes: int = 0
    saved_as: str = ""
    loads_back: bool | None = None
    load_error: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    note: str = ""


@dataclass
class Workload:
    """A runner's answer to one job: ``run(n)`` does the work for n new tokens and returns an
    artifact; ``save(artifact, dir) -> path`` and ``load(path)`` are set for tools that save."""

    run: Callable[[int], Any]
    count: Callable[[Any], tuple[int, int]]  # artifact -> (prompt tokens, new tokens)
    save: Callable[[Any, str], str] | None = None
    load: Callable[[str], Any] | None = None
    versions: dict[str, str] = field(default_factory=dict)
    note: str = ""


def rss_bytes() -> int:
    """Resident set size of this process, from /proc (no psutil in the peer venvs)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_during(fn: Callable[[], Any]) -> tuple[Any, float, int, int]:
    """(fn's value, seconds, RSS before, peak RSS during), sampling RSS every 20 ms."""
    base, peak, done = rss_bytes(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_bytes())
            time.sleep(0.02)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    try:
        value = fn()
    finally:
        seconds = time.perf_counter() - t0
        done.set()
        th.join()
    return value, seconds, base, max(peak[0], rss_bytes())


def forced_ids(prompt_ids: list[int], n: int) -> list[int]:
    """The prompt followed by n tokens that repeat it: a sequence of known length, no decoding."""
    return list(prompt_ids) + [prompt_ids[i % len(prompt_ids)] for i in range(n)]


def generate(model, tok, ids: list[int], n: int, **extra):
    """Greedy ``generate`` of exactly n new tokens (``min_new_tokens`` suppresses EOS)."""
    import torch

    x = torch.tensor([ids])
    with torch.inference_mode():
        return model.generate(
            x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=n,
            min_new_tokens=n,
            do_sample=False,
            pad_token_id=tok.pad_token_id,
            **extra,
        )


def load_hf(job: Job, attn: str = "sdpa"):
    """(model, tokenizer) in fp32 on CPU, read from the job's model directory."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(job.model)
    model = AutoModelForCausalLM.from_pretrained(job.model, dtype=torch.float32, attn_implementation=attn)
    model.eval()
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model, tok


def base_versions(*dists: str) -> dict[str, str]:
    """Installed versions of torch, transformers and the named distributions."""
    from importlib.metadata import version

    return {name: version(name) for name in ("torch", "transformers", *dists)}


def _size_check(work: Workload, artifact: Any, job: Job, res: Result) -> None:
    if work.save is None:
        res.note = (res.note + "; " if res.note else "") + "the tool has no way to save its result"
        return
    os.makedirs(job.out_dir, exist_ok=True)
    path = work.save(artifact, job.out_dir)
    res.saved_as = os.path.basename(path)
    res.size_bytes = (
        sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
        if os.path.isdir(path)
        else os.path.getsize(path)
    )
    try:
        work.load(path)
        res.loads_back = True
    except Exception as exc:  # reported, not raised: "does it load back" is the figure
        res.loads_back, res.load_error = False, f"{type(exc).__name__}: {exc}"[:300]


def _check_count(work: Workload, artifact: Any, n: int, forced: bool = False) -> tuple[int, int]:
    """(prompt tokens, new tokens); a generated run must have made exactly n (a forced sequence
    re-encoded from text may differ by a token or two, and reports what it had)."""
    prompt_n, new_n = work.count(artifact)
    if new_n != n and not forced:
        raise RuntimeError(f"the workload made {new_n} new tokens, not {n}")
    return prompt_n, new_n


def _time(job: Job, work: Workload) -> Result:
    """Tool, then plain sdpa generate, for every length; all in this process."""
    model, tok = load_hf(job, "sdpa")
    work.run(WARMUP_TOKENS)
    generate(model, tok, job.ids, WARMUP_TOKENS)
    res = Result()
    for n in job.new_tokens:
        gc.collect()
        t0 = time.perf_counter()
        artifact = work.run(n)
        tool_s = time.perf_counter() - t0
        res.prompt_tokens, _ = _check_count(work, artifact, n)
        del artifact
        gc.collect()
        t0 = time.perf_counter()
        generate(model, tok, job.ids, n)
        res.times.append({"tokens": n, "tool_s": tool_s, "plain_s": time.perf_counter() - t0})
    return res


def execute(job: Job, build: Callable[[Job], Workload]) -> Result:
    """Build the workload, warm it up, and run the job's mode."""
    import torch

    if job.threads:
        torch.set_num_threads(job.threads)
    work = build(job)
    if job.mode == "time":
        res = _time(job, work)
    else:
        (n,) = job.new_tokens
        work.run(WARMUP_TOKENS)  # lazy imports, allocator, kernels: outside the measurement
        gc.collect()
        artifact, seconds, base, peak = peak_during(lambda: work.run(n))
        res = Result(seconds=seconds, peak_above_model_mb=(peak - base) / 2**20, model_rss_mb=base / 2**20)
        res.prompt_tokens, res.new_tokens = _check_count(work, artifact, n, job.forced)
        if job.mode == "size":
            _size_check(work, artifact, job, res)
    res.versions = {**work.versions, "threads": str(torch.get_num_threads())}
    res.note = work.note
    return res


def main(build: Callable[[Job], Workload], argv: list[str] | None = None) -> int:
    """Entry point of a runner script: ``runner.py --job JSON``; prints ``RESULT {json}``."""
    p = argparse.ArgumentParser(description="one child run of `python -m benchmarks peers`")
    p.add_argument("--job", required=True, help="the job as JSON (the driver writes it)")
    job = Job(**json.loads(p.parse_args(argv).job))
    try:
        res = execute(job, build)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        print("ERROR " + json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}), flush=True)
        return 1
    print("RESULT " + json.dumps(asdict(res)), flush=True)
    return 0
