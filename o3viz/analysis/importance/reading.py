"""What a reader model sees of a round: the prompt, then the round's text, as token ids, with each
step's token range; plus the reader's provenance (and whether it is a proxy for the writer).

The prompt is the question rendered with the reader's chat template (``layout_prompt``, as
enrichment does) or, when the reader is the model that wrote the trace, the round's own prompt
tokens. A trace that carries token ids (a capture, or an enriched import) must tokenize the same
way under the reader, or the caller asks for ``retokenize=True``; otherwise a different tokenizer
would silently move every step boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from o3viz.errors import UsageError
from o3viz.trace import Round, Trace

MIN_STEPS = 3  # fewer steps than this give no step × step structure to score


@dataclass
class ReadSequence:
    """``ids`` (T,) = prompt (P tokens) + text; ``steps[i]`` = [start, end) absolute positions."""

    ids: list[int]
    prompt_len: int
    steps: list[tuple[int, int]]
    reader: dict  # model_id, revision, proxy, writer
    truncated_steps: int = 0  # steps left out by ``max_tokens``

    @property
    def num_steps(self) -> int:
        return len(self.steps)


def reader_info(model: Any, trace: Trace) -> dict:
    """The reader's id and revision, the writer's, and ``proxy``: they differ."""
    info = getattr(model, "o3viz_info", None)
    model_id = getattr(info, "model_id", None) or getattr(getattr(model, "config", None), "_name_or_path", "")
    revision = getattr(info, "revision", None)
    writer = trace.provenance.source.get("source_model") or trace.provenance.model_id or ""
    same = bool(model_id) and model_id == trace.provenance.model_id
    if same and trace.provenance.revision and revision:
        same = trace.provenance.revision == revision
    return {"model_id": model_id, "revision": revision, "writer": writer, "proxy": not same}


def check_steps(rnd: Round, what: str = "this analysis") -> None:
    """One-line error for a round with too few steps to score."""
    n = sum(1 for s in rnd.steps if s.end > s.start)
    if n < MIN_STEPS:
        raise UsageError(
            f"the trace is too short to chunk: {n} step(s) in its text, {what} needs at least {MIN_STEPS}"
        )


def _text_ids(rnd: Round, tokenizer, retokenize: bool, reader: dict) -> tuple[list[int], list]:
    """The text's ids and char offsets: the trace's own tokens (what the writer saw) unless
    ``retokenize``; those must mean the same pieces under the reader's tokenizer."""
    from o3viz.run.prompt import tokenize_with_offsets

    if rnd.tokens and not retokenize:
        ids = [t.id for t in rnd.tokens]
        _check_same_tokenizer(rnd, tokenizer, reader)
        return ids, [(t.start, t.end) for t in rnd.tokens]
    return tokenize_with_offsets(tokenizer, rnd.text, add_special=False)


def _check_same_tokenizer(rnd: Round, tokenizer, reader: dict, sample: int = 200) -> None:
    """The reader must decode the trace's token ids to the trace's own pieces (a sample of them;
    byte-level pieces of a split character may differ, so 90 % must match)."""
    toks = rnd.tokens[:sample]
    vocab = len(tokenizer)
    bad = next((t.id for t in toks if not 0 <= t.id < vocab), None)
    same = 0 if bad is not None else sum(tokenizer.decode([t.id]) == t.text for t in toks)
    if bad is not None or same < 0.9 * len(toks):
        raise UsageError(
            f"the reader {reader['model_id'] or 'model'} has a different tokenizer from the model that "
            f"wrote this trace ({reader['writer'] or 'unknown'}): its token ids decode to other text; "
            "pass --retokenize to read the text with the reader's own tokens"
        )


def read_sequence(
    trace: Trace,
    model: Any,
    tokenizer: Any,
    *,
    round_index: int = -1,
    retokenize: bool = False,
    max_tokens: int | None = None,
) -> ReadSequence:
    """The reader's view of ``trace.rounds[round_index]``. ``max_tokens`` caps the sequence
    (prompt + text) and keeps only the steps that end inside it; by default the reader's context."""
    from o3viz.run.prompt import layout_prompt
    from o3viz.text.spans import token_ranges

    rnd = trace.rounds[round_index] if trace.rounds else trace.final
    check_steps(rnd)
    reader = reader_info(model, trace)
    ids, offsets = _text_ids(rnd, tokenizer, retokenize, reader)
    same_prompt = not reader["proxy"] and rnd.prompt_tokens and not retokenize
    prompt = (
        [t.id for t in rnd.prompt_tokens]
        if same_prompt
        else layout_prompt(tokenizer, trace.task.question or "").ids
    )
    limit = max_tokens or int(getattr(model.config, "max_position_embeddings", 8192))
    p = len(prompt)
    ranges = token_ranges([(s.start, s.end) for s in rnd.steps], offsets)
    steps = [(p + a, p + b) for a, b in ranges]
    kept = [s for s in steps if s[1] <= limit]
    if len(kept) < MIN_STEPS:
        raise UsageError(
            f"only {len(kept)} step(s) fit in {limit} tokens (the prompt takes {p}); "
            "raise --max-tokens or use a reader with a longer context"
        )
    end = kept[-1][1]
    return ReadSequence(list(prompt) + ids[: end - p], p, kept, reader, len(steps) - len(kept))
