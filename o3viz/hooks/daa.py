"""Dynamic Attention Allocation (DAA): the task-relevance score of every context token and the
attention-logit bias built from it. Pure tensor code; ``o3viz.hooks.instrument`` applies the bias.

Relevance (the seed article's function, α = 0.6)::

    r_j = α · cos(e_j, e_task) + (1 − α) · 1 / (1 + |j − f|)

- ``e_j`` is the model's input embedding of the token at position j.
- ``e_task`` is the mean input embedding of the task's *descriptor tokens*, taken from the
  user's question only (never the chat template):
  - math: tokens holding a digit, an operator or relation (``+ - * / × ÷ ^ % = < > ( )``) or a
    single-letter variable;
  - code: identifier and keyword tokens (a letter or ``_`` start, alphanumerics after) other than
    English stop words, plus brackets/operators ``( ) [ ] : = < > + - * /``;
  - general: the question's content words (alphabetic, three letters or more, not a stop word).
  When the rule finds nothing, every question token is a descriptor.
- ``f``, the task focus position, is the position of the last descriptor token of the question
  (where the question's last relevant element sits; for "... 3 apples cost 2 each, how many"
  that is near the asked-for quantity).

The task type (code, math, general) comes from ``o3viz.tasks.kind.detect_task_type``.

Bias: ``bias(r) = (r − μ) / σ`` where μ and σ are the mean and standard deviation of r over the
prompt positions (computed once, kept for generated tokens). Softmax ignores a constant shift,
so only the spread matters: with strength λ, a key one standard deviation more relevant gets
``λ`` more nats of attention logit. λ may be global, per layer (L,) or per layer and head (L, H).
Relevance is computed once per context token; ``RelevanceState.extend`` adds generated tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from o3viz.errors import UsageError

if TYPE_CHECKING:  # imported where a tensor is made: the CLI reads ALPHA without torch
    import torch

ALPHA = 0.6
_MATH_CHARS = frozenset("+-*/×÷^%=<>()·")  # math descriptors: operators and relations
_STOP = frozenset(
    "the a an and or but if then else of to in on at by for with from into onto as is are was were be been "
    "being it its this that these those there their they them he she his her we our you your i me my what "
    "which who whom whose how why when where does do did done can could would should will shall may might "
    "must has have had not no yes so than too very just also each any all some many much more most such "
    "only own same other about above below after before again further once here out over under up down "
    "off per let lets please answer question give find show tell explain".split()
)
_CODE_PUNCT = set("()[]:=<>+-*/")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_descriptor(piece: str, task_type: str) -> bool:
    """Whether a token's text piece is a descriptor for this task type."""
    t = piece.strip()
    if not t:
        return False
    if task_type == "math":
        return (
            any(c.isdigit() for c in t)
            or t in _MATH_CHARS
            or (len(t) == 1 and t.isalpha() and t not in "aAI")
        )
    low = t.lower()
    if task_type == "code":
        return t in _CODE_PUNCT or (_IDENT_RE.match(t) is not None and low not in _STOP)
    return t.isalpha() and len(t) >= 3 and low not in _STOP


def descriptor_positions(pieces: Sequence[str], start: int, end: int, task_type: str) -> list[int]:
    """Positions in ``[start, end)`` (the question's tokens) whose pieces are descriptors."""
    found = [j for j in range(start, end) if is_descriptor(pieces[j], task_type)]
    return found or list(range(start, end))


def relevance(
    emb: torch.Tensor, e_task: torch.Tensor, positions: torch.Tensor, focus: int, alpha: float = ALPHA
) -> torch.Tensor:
    """(N,) ``α·cos(e_j, e_task) + (1−α)/(1+|j−f|)`` for embeddings ``emb`` (N, D) at ``positions`` (N,)."""
    import torch

    cos = torch.nn.functional.cosine_similarity(emb.float(), e_task.float()[None, :], dim=-1)
    near = 1.0 / (1.0 + (positions.float() - focus).abs())
    return alpha * cos + (1 - alpha) * near


@dataclass
class RelevanceState:
    """Relevance of every context position so far, and the bias derived from it."""

    e_task: torch.Tensor  # (D,)
    focus: int
    alpha: float
    descriptors: list[int]
    values: torch.Tensor  # (C,) float32, grows as tokens are generated
    mu: float = 0.0
    sigma: float = 1.0
    info: dict = field(default_factory=dict)

    def score(self, emb: torch.Tensor, start: int) -> torch.Tensor:
        """(n,) relevance of tokens with embeddings ``emb`` (n, D) at positions ``start..start+n``."""
        import torch

        pos = torch.arange(start, start + emb.shape[0], device=emb.device)
        return relevance(emb, self.e_task.to(emb.device), pos, self.focus, self.alpha).cpu()

    def extend(self, emb: torch.Tensor) -> torch.Tensor:
        """Append the relevance of new tokens with embeddings ``emb`` (n, D); returns their bias (n,)."""
        import torch

        r = self.score(emb, self.values.shape[0])
        self.values = torch.cat([self.values, r])
        return self.bias(r)

    def bias(self, r: torch.Tensor) -> torch.Tensor:
        return (r - self.mu) / self.sigma


def build_relevance(
    emb: torch.Tensor, pieces: Sequence[str], question: tuple[int, int], task_type: str, alpha: float = ALPHA
) -> RelevanceState:
    """Relevance of the prompt tokens (embeddings ``emb`` (P, D), text ``pieces``) for a question
    occupying token positions ``question = [start, end)``."""
    import torch

    desc = descriptor_positions(pieces, question[0], question[1], task_type)
    if not desc:  # empty question: fall back to the whole prompt
        desc = list(range(emb.shape[0]))
    e_task = emb[desc].float().mean(0)
    focus = desc[-1]
    pos = torch.arange(emb.shape[0], device=emb.device)
    r = relevance(emb, e_task, pos, focus, alpha).cpu()
    sigma = float(r.std()) if r.numel() > 1 else 1.0
    return RelevanceState(e_task, focus, alpha, desc, r, float(r.mean()), sigma if sigma > 1e-6 else 1.0)


def resolve_strength(strength: float | Sequence, num_layers: int, num_heads: int) -> torch.Tensor:
    """λ as an (L, H) tensor from a number, a per-layer list (L,) or a per-layer-and-head list (L, H)."""
    import torch

    t = torch.as_tensor(strength, dtype=torch.float32)
    if t.ndim == 0:
        return t.expand(num_layers, num_heads).clone()
    if t.ndim == 1 and t.shape[0] == num_layers:
        return t[:, None].expand(num_layers, num_heads).clone()
    if t.shape == (num_layers, num_heads):
        return t.clone()
    raise UsageError(
        f"DAA strength must be a number, {num_layers} per-layer values or "
        f"{num_layers}x{num_heads} values; got shape {tuple(t.shape)}"
    )
