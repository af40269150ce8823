"""A process reward model (PRM) as a verifier, loaded with transformers, in either common shape:

- ``tag`` (Math-Shepherd): a causal LM reads ``question step₁ ки\\nstep₂ ки\\n…``; at each step tag
  the next-token probabilities of the good and bad judgement tokens (``+``, ``-``) give the step's
  score, P(good) / (P(good) + P(bad)).
- ``head`` (Qwen2.5-Math-PRM): a model with a (token-)classification head reads the chat-formatted
  question and the steps each ended by a separator (``<extra_0>``); the head's two logits at each
  separator give the score, softmax[1].

Each solution is encoded piece by piece, so the reading position of every step is known exactly
whatever the tokenizer does with the tag; solutions are batched (right-padded) and run on the
model's device. Steps past the model's length are not judged. A step scoring below ``threshold``
is ``wrong``, else ``ok``; a step whose score is not a finite number (NaN from a float16
overflow) is ``unsure``, never ``ok`` (``score_verdicts``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Literal

from o3viz.errors import ModelLoadError, UsageError
from o3viz.verify.verifiers.base import Judgement, Solution

PrmShape = Literal["tag", "head"]
QWEN_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
_HEADS = ("ForTokenClassification", "ProcessRewardModel", "ForSequenceClassification")


@dataclass
class PrmSettings:
    shape: str = "auto"  # tag | head | auto (from the config's architecture)
    step_tag: str = " ки"  # tag shape: written after each step
    good: str = "+"  # tag shape: the judgement tokens
    bad: str = "-"
    separator: str = "<extra_0>"  # head shape: written after each step
    threshold: float = 0.5
    batch_size: int = 8
    max_length: int = 4096

    def validate(self) -> None:
        """Refuse, in one line, a threshold no score can be compared with (NaN: every comparison
        is False, so every step would be ``ok``)."""
        if not 0.0 <= self.threshold <= 1.0:
            raise UsageError(f"threshold must be a number from 0 to 1, not {self.threshold}")


def _load_error(name: str, exc: BaseException) -> ModelLoadError:
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    hint = "it is not in the local cache and HF_HUB_OFFLINE=1" if offline else str(exc).splitlines()[0]
    return ModelLoadError(
        f"cannot load PRM {name!r}: {hint}; fix: pass a local folder as -V model=PATH, or download it "
        f"first with `huggingface-cli download {name}`"
    )


def load_prm(
    name: str, *, device: str | None = None, dtype: str | None = None, trust_remote_code: bool = False
):
    """``(model, tokenizer, shape)`` of a PRM folder or hub id, on ``device`` (cuda if any)."""
    import torch
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForTokenClassification,
        AutoTokenizer,
    )

    if name.startswith((".", "/", "~")) and not os.path.isdir(os.path.expanduser(name)):
        raise ModelLoadError(f"cannot load PRM {name!r}: no such model folder")
    try:
        cfg = AutoConfig.from_pretrained(name, trust_remote_code=trust_remote_code)
        tok = AutoTokenizer.from_pretrained(name, trust_remote_code=trust_remote_code)
        archs = " ".join(getattr(cfg, "architectures", None) or [])
        shape: PrmShape = "head" if any(h in archs for h in _HEADS) else "tag"
        kw: dict[str, Any] = {"dtype": getattr(torch, dtype) if dtype else torch.float32}
        remote = shape == "head" and bool(getattr(cfg, "auto_map", None))
        if remote and not trust_remote_code:  # its head is not a transformers class: never guess one
            raise ModelLoadError(
                f"PRM {name!r} has its head in the checkpoint's own code ({archs}); "
                "pass -V trust_remote_code=true to run that code"
            )
        if remote:
            model = AutoModel.from_pretrained(name, trust_remote_code=True, **kw)
        elif shape == "head":
            model = AutoModelForTokenClassification.from_pretrained(name, **kw)
        else:
            model = AutoModelForCausalLM.from_pretrained(name, **kw)
    except (OSError, ValueError) as exc:
        raise _load_error(name, exc) from None
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return model.to(dev).eval(), tok, shape


@dataclass
class PrmVerifier:
    """A loaded PRM (``load_prm``) as a verifier."""

    model: Any
    tokenizer: Any
    shape: str  # tag | head
    settings: PrmSettings = field(default_factory=PrmSettings)
    model_id: str = ""
    name: str = ""
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        s.validate()
        self.name = self.name or f"prm:{os.path.basename(self.model_id.rstrip('/')) or 'model'}"
        self.provenance = self.provenance or {
            "kind": "prm",
            "shape": self.shape,
            "model": self.model_id,
            "revision": getattr(self.model.config, "_commit_hash", None),
            "device": str(self.model.device),
            "dtype": str(self.model.dtype).replace("torch.", ""),
            "threshold": s.threshold,
            "marker": s.step_tag if self.shape == "tag" else s.separator,
        }
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def verify(self, sol: Solution) -> Judgement:
        return self.verify_many([sol])[0]

    def verify_many(self, sols: list[Solution]) -> list[Judgement]:
        out: list[Judgement] = []
        bs = max(1, self.settings.batch_size)
        for i in range(0, len(sols), bs):
            out.extend(self._batch(sols[i : i + bs]))
        return out

    def _encode(self, sol: Solution) -> tuple[list[int], list[int]]:
        """(token ids, the position read for each step) of one solution."""
        tok, s = self.tokenizer, self.settings
        enc = lambda text: tok(text, add_special_tokens=False)["input_ids"]  # noqa: E731
        if self.shape == "head":
            ids = self._head_prefix(sol.question)
            marker, gap = enc(s.separator), []
        else:
            ids = tok(sol.question + " ")["input_ids"]
            marker, gap = enc(s.step_tag), enc("\n")
        where = []
        for step in sol.steps:
            ids += enc(step) + marker
            where.append(len(ids) - 1)
            ids += gap
        return ids, where

    def _head_prefix(self, question: str) -> list[int]:
        tok = self.tokenizer
        if getattr(tok, "chat_template", None):
            msgs = [{"role": "system", "content": QWEN_SYSTEM}, {"role": "user", "content": question}]
            text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
            return tok(text, add_special_tokens=False)["input_ids"]
        return tok(question + "\n")["input_ids"]

    def _batch(self, sols: list[Solution]) -> list[Judgement]:
        import torch

        enc = [self._encode(sol) for sol in sols]
        limit = min(self.settings.max_length, getattr(self.model.config, "max_position_embeddings", 10**9))
        rows = [ids[:limit] for ids, _ in enc]
        width = max(1, max(len(r) for r in rows))
        pad = self.tokenizer.pad_token_id
        ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=self.model.device)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], device=self.model.device)
        reads = [[p for p in where if p < len(r)] for (_, where), r in zip(enc, rows, strict=True)]
        with torch.inference_mode():
            probs = (
                self._head_probs(ids, mask, reads)
                if self.shape == "head"
                else self._tag_probs(ids, mask, reads)
            )
        dtype = str(self.model.dtype).replace("torch.", "")
        return [
            score_verdicts([probs[b].get(p) for p in where], self.settings.threshold, dtype)
            for b, (_, where) in enumerate(enc)
        ]

    def _head_probs(self, ids, mask, reads: list[list[int]]) -> list[dict[int, float]]:
        """Per solution, position -> softmax[1] of the head's two logits there."""
        out = self.model(input_ids=ids, attention_mask=mask)
        logits = out.logits if hasattr(out, "logits") else out[0]  # (B, T, 2)
        probs = logits.float().softmax(-1)[..., 1]  # (B, T)
        return [{p: float(probs[b, p]) for p in where} for b, where in enumerate(reads)]

    def _tag_probs(self, ids, mask, reads: list[list[int]]) -> list[dict[int, float]]:
        """Per solution, position -> P(good) / (P(good) + P(bad)) of the next token. Only the tag
        positions go through the LM head: (B, T, V) logits of a long batch would not fit."""
        hidden = self.model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, T, H)
        head, tok = self.model.get_output_embeddings(), self.tokenizer
        pair = [
            tok(t, add_special_tokens=False)["input_ids"][-1] for t in (self.settings.good, self.settings.bad)
        ]
        out = []
        for b, where in enumerate(reads):
            p = head(hidden[b, where]).float()[:, pair].softmax(-1)[:, 0] if where else []  # (P,)
            out.append({pos: float(p[k]) for k, pos in enumerate(where)})
        return out


def score_verdicts(scores: list[float | None], threshold: float, dtype: str = "") -> Judgement:
    """Verdicts of a solution's step scores (``None``: past the model's length, not judged): below
    ``threshold`` is ``wrong``, else ``ok``. A score that is not a finite number (a float16
    overflow gives NaN, which compares False with anything) is never ``ok``: the step is
    ``unsure``, its score dropped, and ``info["note"]`` says why.

    >>> j = score_verdicts([0.9, float("nan"), 0.1, None], 0.5, "float16")
    >>> j.verdicts, j.scores
    (['ok', 'unsure', 'wrong', None], [0.9, None, 0.1, None])
    >>> j.info["note"]
    'score is NaN at step 1 (try -V dtype=float32)'
    """
    verdicts: list[str | None] = []
    kept: list[float | None] = []
    bad: list[tuple[int, float]] = []
    for i, x in enumerate(scores):
        if x is not None and not math.isfinite(x):
            bad.append((i, x))
            x = None
            verdicts.append("unsure")
        else:
            verdicts.append(None if x is None else ("wrong" if x < threshold else "ok"))
        kept.append(x)
    info = {}
    if bad:
        what = "NaN" if math.isnan(bad[0][1]) else "infinite"
        steps = ", ".join(str(i) for i, _ in bad[:5]) + (", ..." if len(bad) > 5 else "")
        hint = " (try -V dtype=float32)" if dtype != "float32" else ""
        info["note"] = f"score is {what} at step{'s' * (len(bad) > 1)} {steps}{hint}"
    return Judgement(verdicts, kept, info)


def prm_verifier(
    *,
    model: str,
    device: str | None = None,
    dtype: Literal["float32", "bfloat16", "float16"] | None = None,
    batch_size: int = 8,
    shape: Literal["auto", "tag", "head"] = "auto",
    threshold: float = 0.5,
    trust_remote_code: bool = False,
) -> PrmVerifier:
    """The ``prm`` verifier's factory: its keyword arguments are its options (``-V key=value``).

    model: a local folder or hub id
    device: cpu, cuda, ... (None: cuda when there is one)
    dtype: the weights' dtype (None: float32)
    batch_size: solutions per forward pass
    shape: tag (Math-Shepherd), head (Qwen2.5-Math-PRM) or auto (from the config)
    threshold: a step scoring below it is wrong (0 to 1)
    trust_remote_code: run the checkpoint's own head code (Qwen2.5-Math-PRM)
    """
    if batch_size < 1:
        raise UsageError(f"batch_size must be at least 1, not {batch_size}")
    settings = PrmSettings(shape=shape, threshold=threshold, batch_size=batch_size)
    return make_prm(model, settings, device=device, dtype=dtype, trust_remote_code=trust_remote_code)


def make_prm(model: str, settings: PrmSettings | None = None, **load: Any) -> PrmVerifier:
    """Load ``model`` and wrap it; ``settings.shape`` other than ``auto`` overrides the detection."""
    settings = settings or PrmSettings()
    settings.validate()  # before the model is loaded
    m, tok, shape = load_prm(model, **load)
    return PrmVerifier(m, tok, shape if settings.shape == "auto" else settings.shape, settings, model)
