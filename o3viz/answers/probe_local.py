"""Forced answers from the local model, off one prefill (``LocalProbe``).

The round's prompt and text are prefilled ONCE, in chunks, keeping only the KV cache. Each step
boundary (its end: the trace's own tokens for a run of this model, else the text retokenized and
cut at the last token that ends inside the step) forks that cache at its length
(``o3viz.clients.local.fork_cache``: every layer's keys and values sliced, nothing recomputed).
One forward over suffix + reference tokens then gives both the probability of the reference after
the suffix and the first forced token; the cache is cropped back to prefix + suffix and the answer
is decoded greedily until the box closes, the line ends, EOS or ``max_new_tokens``.

Cost per boundary: 1 + (forced tokens − 1) single-token forwards over a cache of the prefix length,
against a from-scratch probe's full prefill of the prefix.
"""

from __future__ import annotations

import bisect
import hashlib
from pathlib import Path
from typing import Any

import torch

from o3viz.analysis.importance.reading import reader_info
from o3viz.answers.probe_types import (
    MAX_REFERENCE_TOKENS,
    ProbeResult,
    check_boundaries,
    check_max_new_tokens,
)
from o3viz.answers.suffixes import Suffix, answer_ended, forced_answer, suffix_for_tokenizer
from o3viz.clients.local import fork_cache
from o3viz.run.loop import eos_ids
from o3viz.run.prompt import layout_prompt, tokenize_with_offsets
from o3viz.text.reference import reference_answer
from o3viz.trace import Round, Trace

__all__ = ["LocalProbe", "prefill_cache", "probe_sequence"]

CHUNK = 512  # prefill rows per forward


def prefill_cache(model, ids: list[int]):
    """A ``DynamicCache`` of ``ids`` (the decoder only, in chunks of ``CHUNK``: no logits)."""
    from transformers import DynamicCache

    device = next(model.parameters()).device
    x = torch.tensor([ids], device=device)
    cache = DynamicCache(config=model.config)
    with torch.inference_mode():
        for s in range(0, x.shape[1], CHUNK):
            model.get_decoder()(input_ids=x[:, s : s + CHUNK], past_key_values=cache, use_cache=True)
    return cache


def probe_sequence(
    trace: Trace, rnd: Round, tokenizer: Any, same_model: bool
) -> tuple[list[int], int, list[tuple[int, int]]]:
    """(prompt + text ids, prompt length, the text's char offsets per token): the trace's own
    tokens for a run of this model, else the prompt in the model's template and the text
    retokenized."""
    if same_model and rnd.tokens and rnd.prompt_tokens:
        ids = [t.id for t in rnd.prompt_tokens] + [t.id for t in rnd.tokens]
        return ids, len(rnd.prompt_tokens), [(t.start, t.end) for t in rnd.tokens]
    prompt = layout_prompt(tokenizer, rnd.prompt or trace.task.question or "").ids
    text_ids, offsets = tokenize_with_offsets(tokenizer, rnd.text, add_special=False)
    return list(prompt) + list(text_ids), len(prompt), offsets


class LocalProbe:
    """Forced answers from a loaded model (see the module docstring)."""

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 16, suffix: str | None = None):
        self.model, self.tokenizer = model, tokenizer
        self.max_new_tokens = check_max_new_tokens(max_new_tokens)
        self.suffix = suffix_for_tokenizer(tokenizer, suffix)  # an unknown template fails here, in one line
        self.eos = eos_ids(model, tokenizer)
        self.model_id, self.revision = _model_identity(model)
        self.name = (
            f"forced:local:{_bounded(self.model_id)}"  # the full path: ckpt-a/final is not ckpt-b/final
        )
        self.info = {
            "model": self.model_id,
            "suffix": self.suffix.text,
            "suffix_style": self.suffix.style,
            "logprobs": True,
            "max_new_tokens": self.max_new_tokens,
            "trace_model": None,
            "other_model": False,
        }

    def settings(self, trace: Trace, round_index: int) -> dict:
        """What makes this probe's answers (``o3viz.answers.probe_types.Probe``): the same for every
        round, the model named by its full path (or hub id) and revision."""
        check_boundaries(trace, round_index, [])
        return {
            "probe": "local",
            "model": self.model_id,
            "revision": self.revision,
            "endpoint": None,
            "suffix": self.suffix.text,
            "max_new_tokens": self.max_new_tokens,
        }

    def probe(
        self, trace: Trace, round_index: int, boundaries: list[int], reference: str | None
    ) -> list[ProbeResult]:
        boundaries = check_boundaries(trace, round_index, boundaries)
        rnd = trace.rounds[round_index]
        reader = reader_info(self.model, trace)
        self.info.update(trace_model=reader["writer"] or None, other_model=bool(reader["proxy"]))
        ids, p, offsets = probe_sequence(trace, rnd, self.tokenizer, not reader["proxy"])
        ends = [e for _, e in offsets]
        cuts = {b: p + bisect.bisect_right(ends, rnd.steps[b].end) for b in boundaries}
        ref_text = reference_answer(reference)
        limit = int(getattr(self.model.config, "max_position_embeddings", 8192))
        room = limit - self.max_new_tokens - len(self._ids(self.suffix.text)) - MAX_REFERENCE_TOKENS
        fits = [c for c in cuts.values() if c <= room]
        base = prefill_cache(self.model, ids[: max(fits)]) if fits else None
        out = []
        for b in boundaries:
            if cuts[b] > room:
                out.append(ProbeResult(b, None, None, f"past the model's context of {limit} tokens"))
                continue
            suffix = self.suffix.after(rnd.text[: rnd.steps[b].end])
            out.append(self._probe_at(base, cuts[b], b, suffix, ref_text))
        return out

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _reference_ids(self, suffix: Suffix, ref_text: str | None) -> list[int]:
        """The reference's tokens as they follow the suffix (tokenized together where the suffix's
        own tokens stay the same, so ``: `` + ``42`` reads as the model would write it)."""
        if not ref_text:
            return []
        s_ids = self._ids(suffix.text)
        both = self._ids(suffix.text + ref_text)
        ids = both[len(s_ids) :] if both[: len(s_ids)] == s_ids else self._ids(ref_text)
        return ids if len(ids) <= MAX_REFERENCE_TOKENS else []

    def _probe_at(self, base, length: int, step: int, suffix: Suffix, ref_text: str | None) -> ProbeResult:
        """The forced answer and P(reference) at the prefix of ``length`` tokens of ``base``."""
        s_ids, r_ids = self._ids(suffix.text), self._reference_ids(suffix, ref_text)
        device = next(self.model.parameters()).device
        cache = fork_cache(self.model, base, length)
        with torch.inference_mode():
            x = torch.tensor([s_ids + r_ids], device=device)
            logits = self.model(input_ids=x, past_key_values=cache, use_cache=True).logits[0]  # (S+R, V)
            p_ref = None
            if r_ids:
                rows = torch.log_softmax(logits[len(s_ids) - 1 : len(s_ids) - 1 + len(r_ids)].float(), -1)
                p_ref = float(rows.gather(1, torch.tensor(r_ids, device=device)[:, None]).sum().exp())
            if r_ids:  # back to prefix + suffix: the reference was scored, not said
                cache.crop(-len(r_ids))
            decoded = self._decode(cache, int(logits[len(s_ids) - 1].argmax()), suffix)
        forced = forced_answer(suffix, decoded)
        note = None if forced else "the forced continuation states no answer"
        if ref_text and not r_ids:
            note = f"the reference has more than {MAX_REFERENCE_TOKENS} tokens; not scored"
        return ProbeResult(step, forced, p_ref, note)

    def _decode(self, cache, first: int, suffix: Suffix) -> str:
        """Greedy tokens from ``first`` on, until the answer ends (``answer_ended``), EOS or the cap."""
        device = next(self.model.parameters()).device
        out: list[int] = []
        token = first
        while token not in self.eos:
            out.append(token)
            text = self.tokenizer.decode(out, skip_special_tokens=True)
            if len(out) >= self.max_new_tokens or answer_ended(suffix, text):
                return text
            x = torch.tensor([[token]], device=device)
            token = int(self.model(input_ids=x, past_key_values=cache, use_cache=True).logits[0, -1].argmax())
        return self.tokenizer.decode(out, skip_special_tokens=True)


def _model_identity(model: Any) -> tuple[str, str | None]:
    """(the model's full id, its revision): a folder or file as its absolute path, so two
    checkpoints named ``final`` in different folders stay two models; a hub id as it is."""
    info = getattr(model, "o3viz_info", None)
    name = (
        getattr(info, "model_id", None)
        or getattr(getattr(model, "config", None), "_name_or_path", "")
        or "model"
    )
    path = Path(name).expanduser()
    if path.exists():
        name = str(path.resolve())
    return name, getattr(info, "revision", None)


def _bounded(model_id: str, keep: int = 120) -> str:
    """``model_id`` when short, else its tail and a hash of the whole: a record's name is cut at
    200 characters when read (``o3viz.trace.verdicts.clip_name``), and a cut name could collide."""
    if len(model_id) <= keep:
        return model_id
    return f"…{model_id[-(keep - 10) :]}#{hashlib.sha256(model_id.encode()).hexdigest()[:8]}"
