"""What a capture keeps at its length, chosen before any work starts.

A trace must load back: its JSON at most ``MAX_JSON_BYTES`` (128 MiB) and its file at most
``MAX_FILE_BYTES`` (64 MiB). Both are known before a run, and so is, from the settings and the
length, about how large the trace will be (``estimate_trace_size``). ``plan_storage`` starts from
what was asked and steps down, one knob at a time, until the estimate fits with a margin:

1. prefill attention above ``PREFILL_DENSE_MAX`` prompt tokens: each row's top ``PREFILL_TOP_K``
   keys instead of the dense (P, P) map (which grows with P²);
   generated-token rows above ``ROWS_DENSE_MAX`` new tokens (or whenever the dense rows alone
   would not fit): each generated token's mean row and per-head rows keep their top
   ``ROWS_TOP_K`` keys as (value, key) pairs instead of a row as long as the context (which
   grows with G²), so a long generation grows linearly too;
2. the dense prefill map whenever it alone would not fit;
3. per-head rows as the head mean;
4. no per-head rows (and so no prefill) at all;
5. otherwise it refuses in one line (``UsageError``): even the mean rows (G × (P + G)) would not fit.

Each step taken is said in a sentence (``StoragePlan.note``, e.g. "prefill attention kept as top-64
rows above 2k tokens"), stored in the trace's ``attention.info["storage"]`` and read back with
``storage_note``. Without a model: ``plan_storage`` needs only the depth and head count.

>>> plan = plan_storage(16384, 8, num_layers=30, num_heads=9)
>>> plan.prefill, plan.prefill_top_k
('top_k', 64)
>>> plan.note
'prefill attention kept as top-64 rows above 2k tokens (this prompt: 16,384)'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from o3viz.errors import UsageError
from o3viz.run.daa.modes import DAA_MODE_TABLE
from o3viz.trace.jsonfile import MAX_FILE_BYTES, MAX_JSON_BYTES

PREFILL_DENSE_MAX = 2048  # prompt tokens up to which the dense (P, P) prefill map is kept
PREFILL_TOP_K = 64  # keys kept per prefill row above that
ROWS_DENSE_MAX = 2048  # new tokens up to which generated-token rows are kept as long as the context
ROWS_TOP_K = 64  # keys kept per generated-token row (mean and per-head) above that
MARGIN = 0.8  # a plan must fit in this share of each limit (the estimate is an approximation)
# Bytes per element in the JSON: base64 makes 4 characters of every 3 bytes.
B64 = 4 / 3
# Measured on captures (tests/run/test_sizing.py): JSON characters per token, and gzip cost.
JSON_PER_TOKEN = 420  # a generated token: text, offsets, logprob, entropy, top-5 alternatives
JSON_PER_PROMPT_TOKEN = 60
JSON_FIXED = 64 * 1024  # provenance, settings, checks, steps
GZ_PER_VALUE = 2.0  # file bytes per nonzero fp16 value of dense rows (random rows: 1.96)
GZ_PER_SPARSE = 5.0  # per nonzero of top-k rows stored with zeros (the positions cost)
GZ_PER_PAIR = 4.5  # per (fp16 value, int32 index) pair of top-k prefill rows
GZ_PER_ZERO = 0.02
GZ_PER_TEXT = 0.35  # gzip ratio of the token JSON

PrefillKeep = Literal["dense", "top_k", "none"]
RowsKeep = Literal["dense", "top_k"]


@dataclass
class TraceSize:
    """Estimated bytes of a capture's trace: its JSON and its gzip file."""

    json_bytes: int
    file_bytes: int
    parts: dict[str, int] = field(default_factory=dict)  # JSON bytes of the large parts, by name

    def fits(self, margin: float = MARGIN) -> bool:
        return self.json_bytes <= margin * MAX_JSON_BYTES and self.file_bytes <= margin * MAX_FILE_BYTES


@dataclass
class StoragePlan:
    """What a capture of ``prompt_len`` + up to ``max_new_tokens`` tokens keeps, and why."""

    prompt_len: int  # P
    max_new_tokens: int  # G at most
    layers: list[int]  # layers whose per-head rows (and prefill) are kept
    head_average: bool
    top_k: int | None  # keys kept per per-head row
    prefill: PrefillKeep
    prefill_top_k: int | None  # keys kept per prefill row when prefill == "top_k"
    dtype_bytes: int  # 2 (float16) or 4 (float32)
    rows: RowsKeep = "dense"  # generated-token rows: as long as the context, or top-k (value, key) pairs
    rows_top_k: int | None = None  # keys kept per generated-token row when rows == "top_k"
    size: TraceSize = field(default_factory=lambda: TraceSize(0, 0))
    changes: list[str] = field(default_factory=list)  # one sentence per step down from the request

    @property
    def note(self) -> str:
        """What was kept differently from the request, for the page; "" when nothing was."""
        return "; ".join(self.changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["size"] = {"json_bytes_estimate": self.size.json_bytes, "file_bytes_estimate": self.size.file_bytes}
        d["note"] = self.note
        return d


def estimate_trace_size(
    plan: StoragePlan, num_layers: int, num_heads: int, *, extra_rows: int = 0
) -> TraceSize:
    """The trace's JSON and file bytes for ``plan`` (G = ``max_new_tokens``); ``extra_rows`` more
    (G, C) rows (DAA's unbiased rows). Arrays are dense in the JSON (zeros included)."""
    p, g, b = plan.prompt_len, plan.max_new_tokens, plan.dtype_bytes
    c = p + g
    nl, hk = len(plan.layers), 1 if plan.head_average else num_heads
    mean = (1 + extra_rows) * g * c  # (G, C), nonzero up to each row's position
    nonzero_mean = (1 + extra_rows) * g * (p + g / 2)
    per_head = g * nl * hk * c
    per_head_nz = g * nl * hk * min(plan.top_k or c, c)
    mean_pairs = head_pairs = 0
    if plan.rows == "top_k":  # (value, int32 key) pairs; only the DAA/steer rows stay dense
        mean_pairs = g * min(plan.rows_top_k or c, c)
        head_pairs = g * nl * hk * min(plan.top_k or plan.rows_top_k or c, c)
        mean = extra_rows * g * c
        nonzero_mean = extra_rows * g * (p + g / 2)
        per_head = per_head_nz = 0
    layer_head = g * num_layers * num_heads
    dense_prefill = nl * p * p if plan.prefill == "dense" else 0
    pairs = nl * p * (plan.prefill_top_k or 0) if plan.prefill == "top_k" else 0
    text = p * JSON_PER_PROMPT_TOKEN + g * JSON_PER_TOKEN
    parts = {
        "mean": B64 * b * mean,
        "per_head": B64 * (b * per_head + (b + 4) * head_pairs),
        "prefill": B64 * (b * dense_prefill + (b + 4) * pairs),
        "mean_pairs": B64 * (b + 4) * mean_pairs,
    }
    json_bytes = sum(parts.values()) + B64 * b * layer_head + text + JSON_FIXED
    zeros = (mean - nonzero_mean) + (per_head - per_head_nz) + dense_prefill / 2
    sparse = plan.top_k is not None and plan.top_k < c
    file_bytes = (
        b
        / 2
        * GZ_PER_VALUE
        * (nonzero_mean + layer_head + dense_prefill / 2 + (0 if sparse else per_head_nz))
        + b / 2 * (GZ_PER_SPARSE * per_head_nz if sparse else 0)
        + GZ_PER_PAIR * (pairs + mean_pairs + head_pairs)
        + GZ_PER_ZERO * zeros
        + GZ_PER_TEXT * text
    )
    return TraceSize(int(json_bytes), int(file_bytes), {k: int(v) for k, v in parts.items()})


def plan_storage(
    prompt_len: int,
    max_new_tokens: int,
    *,
    num_layers: int,
    num_heads: int,
    layers: list[int] | None = None,
    head_average: bool = False,
    top_k: int | None = 64,
    prefill: bool = True,
    dtype_bytes: int = 2,
    extra_rows: int = 0,
    can_average: bool = True,
    can_sparsify: bool = True,
) -> StoragePlan:
    """What to keep so the trace fits (module docstring); ``UsageError`` when nothing does.
    ``layers`` default: first, middle and last (``CaptureConfig(layers="auto")``); without
    ``can_average`` (enrichment) per-head rows are never replaced by the head mean; without
    ``can_sparsify`` generated-token rows are never cut to top-k."""
    if layers is None:
        layers = sorted({0, num_layers // 2, num_layers - 1})
    plan = StoragePlan(
        prompt_len, max_new_tokens, list(layers), head_average, top_k,
        "dense" if prefill and layers else "none", None, dtype_bytes,
    )  # fmt: skip
    if plan.prefill == "dense" and prompt_len > PREFILL_DENSE_MAX:
        plan.prefill, plan.prefill_top_k = "top_k", PREFILL_TOP_K
        plan.changes.append(
            f"prefill attention kept as top-{PREFILL_TOP_K} rows above {_k(PREFILL_DENSE_MAX)} tokens "
            f"(this prompt: {prompt_len:,})"
        )
    if max_new_tokens > ROWS_DENSE_MAX and can_sparsify:
        _rows_top_k(plan, f"above {_k(ROWS_DENSE_MAX)} new tokens (this run: up to {max_new_tokens:,})")
    steps = (_prefill_top_k, _head_mean, _no_per_head) if can_average else (_prefill_top_k, _no_per_head)
    if can_sparsify:
        steps = (_prefill_top_k, _rows_when_large, *steps[1:])
    for step in steps:
        plan.size = estimate_trace_size(plan, num_layers, num_heads, extra_rows=extra_rows)
        if plan.size.fits():
            return plan
        step(plan, plan.size)
    plan.size = estimate_trace_size(plan, num_layers, num_heads, extra_rows=extra_rows)
    if not plan.size.fits():
        raise UsageError(
            f"a {prompt_len:,}-token prompt with up to {max_new_tokens:,} new tokens makes a trace of "
            f"about {_mb(plan.size.json_bytes)} of JSON even with only the mean attention rows, over "
            f"the {_mb(MAX_JSON_BYTES)} a trace may hold; ask for fewer new tokens or turn attention capture off"
        )
    return plan


def _large(size: TraceSize, part: str) -> bool:
    """``part`` alone takes a quarter of a limit: stepping it down is worth saying."""
    return size.parts.get(part, 0) > MARGIN * MAX_JSON_BYTES / 4


def _prefill_top_k(plan: StoragePlan, size: TraceSize) -> None:
    if plan.prefill == "dense" and _large(size, "prefill"):
        plan.prefill, plan.prefill_top_k = "top_k", PREFILL_TOP_K
        plan.changes.append(
            f"prefill attention kept as top-{PREFILL_TOP_K} rows: the dense map alone would be "
            f"{_mb(size.parts['prefill'])} of the trace"
        )


def _rows_top_k(plan: StoragePlan, why: str) -> None:
    plan.rows, plan.rows_top_k = "top_k", ROWS_TOP_K
    if plan.top_k is None or plan.top_k > ROWS_TOP_K:
        plan.top_k = ROWS_TOP_K
    plan.changes.append(f"generated-token attention kept as top-{ROWS_TOP_K} keys per row {why}")


def _rows_when_large(plan: StoragePlan, size: TraceSize) -> None:
    if plan.rows == "dense" and size.parts["mean"] + size.parts["per_head"] > MARGIN * MAX_JSON_BYTES / 4:
        _rows_top_k(
            plan, f"(dense rows would be {_mb(size.parts['mean'] + size.parts['per_head'])} of the trace)"
        )


def _head_mean(plan: StoragePlan, size: TraceSize) -> None:
    if plan.layers and not plan.head_average and _large(size, "per_head"):
        plan.head_average = True
        plan.changes.append(
            f"per-head rows kept as the head mean: all heads would be {_mb(size.parts['per_head'])} of the trace"
        )


def _no_per_head(plan: StoragePlan, size: TraceSize) -> None:
    if plan.layers:
        kept = size.parts["per_head"] + size.parts["prefill"]
        plan.layers, plan.prefill, plan.prefill_top_k = [], "none", None
        plan.changes.append(
            f"no per-layer rows or prefill attention kept: they would be {_mb(kept)} of the trace"
        )


def storage_note(attention_info: dict) -> str:
    """The sentence saying what a capture kept differently at its length ("" for none), from an
    attention record's ``info``."""
    storage = attention_info.get("storage")
    return str(storage.get("note") or "") if isinstance(storage, dict) else ""


def _k(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else f"{n:,}"


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def plan_request(req: Any, prompt_len: int, num_layers: int, num_heads: int) -> StoragePlan | None:
    """``plan_storage`` for a ``RunRequest`` (None when it captures no attention). Needs only the
    model's depth and head count, so a caller can refuse a run before loading the model."""
    from o3viz.run.config import resolve_layers

    cfg = req.capture
    if not cfg.enabled:
        return None
    return plan_storage(
        prompt_len,
        req.max_new_tokens,
        num_layers=num_layers,
        num_heads=num_heads,
        layers=resolve_layers(cfg.layers, num_layers),
        head_average=cfg.head_average,
        top_k=cfg.top_k,
        prefill=cfg.prefill,
        dtype_bytes=4 if cfg.dtype == "float32" else 2,
        extra_rows=1 if DAA_MODE_TABLE[req.daa.mode].biases else 0,  # the unbiased rows as well
    )


def preflight(req: Any) -> StoragePlan | None:
    """``plan_request`` before the model loads: reads only the model's config and tokenizer, so a
    run whose trace could not fit is refused in one line (``UsageError``) before any slow work."""
    from transformers import AutoConfig, AutoTokenizer

    from o3viz.model import resolve_model
    from o3viz.run.prompt import layout_prompt

    if not req.capture.enabled:
        return None
    target, _, _ = resolve_model(req.model)
    config = AutoConfig.from_pretrained(target)
    config = getattr(config, "text_config", None) or config
    prompt = req.prompt
    if prompt is None and req.task_id:
        from o3viz.tasks.spec import load_task

        prompt = load_task(req.task_id).prompt
    p = len(layout_prompt(AutoTokenizer.from_pretrained(target), prompt or "", req.prefix).ids)
    return plan_request(req, p, config.num_hidden_layers, config.num_attention_heads)
