"""How a branch's text is continued: the local model through the one run (``execute``, with
capture, DAA and checks) or a generation client (``o3viz.clients``: the local batch, or an
OpenAI-compatible endpoint) whose text becomes a round through the importers' one text → trace
path. A continuation by another model than the trace's writer is a proxy, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from o3viz.branch.fork import Fork
from o3viz.clients import Backend, LocalBackend
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.run.prompt import rollout_prompt
from o3viz.trace import Round, Trace


@dataclass
class Continuer:
    """Where continuations come from: ``backend`` (text), and/or the local ``model`` + ``tokenizer``
    (a full capture for an edit; the reader of first sentences for resampling)."""

    backend: Backend | None = None
    model: Any = None
    tokenizer: Any = None

    @property
    def local(self) -> bool:
        """An edit runs as a full local capture (no endpoint given)."""
        return self.backend is None and self.model is not None

    @property
    def name(self) -> str:
        if self.backend is not None:
            return self.backend.name
        return LocalBackend(self.model, self.tokenizer).name

    def reader(self) -> tuple[Any, Any] | None:
        return (self.model, self.tokenizer) if self.model is not None else None


def is_proxy(trace: Trace, continuer: Continuer) -> bool:
    """The continuation is not by the model that wrote the trace: an import continued locally.
    (An endpoint is taken to serve the writer, as ``--model`` names it.)"""
    return trace.task.source == "import" and continuer.backend is None


def base_prompt(fork: Fork, tokenizer: Any = None) -> str:
    """What a text backend is sent before the reply: the round's rendered prompt without its own
    reply prefix (that is part of ``fork.before``), else the question in the chat template."""
    rendered = rollout_prompt(fork.trace, tokenizer, fork.round)
    own = fork.own_prefix
    return rendered[: len(rendered) - len(own)] if own and rendered.endswith(own) else rendered


def text_round(trace: Trace, text: str, rendered: str, prefix: str, index: int = 0) -> Round:
    """The round of a continuation ``text`` of ``rendered`` + ``prefix``: steps, answer, claim
    checks and the answer check against ``trace``'s reference; the prefix ends its rendered
    prompt, so a branch of it forks the same way."""
    task = trace.task
    built = build_trace(Imported("branch", text, question=task.question or ""), reference=task.reference)
    rnd = built.final
    rnd.index, rnd.prompt, rnd.rendered_prompt = index, task.question or "", rendered + prefix
    rnd.info = {**rnd.info, "reply_prefix_chars": len(prefix), "continued_as": "text"}
    return rnd
