"""DAA's ``observe`` and ``allocate`` modes during a capture: relevance of the prompt from the
model's input embeddings, the bias kept on the recorder and extended token by token (``DAATrack``
and ``BranchBias`` are hooks of the generation loop), and the ``DAARecord`` written into the trace."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from o3viz.hooks.daa import RelevanceState, build_relevance, resolve_strength
from o3viz.hooks.recorder import Recorder
from o3viz.hooks.step import LoopState, StepHook
from o3viz.run.config import DAAConfig
from o3viz.run.daa.modes import DAA_MODE_TABLE
from o3viz.run.prompt import PromptLayout
from o3viz.trace.attention import DAARecord


class DAATrack(StepHook):
    """Keeps relevance (and, in allocate mode, the recorder's bias) in step with the context."""

    def __init__(
        self, model, layout: PromptLayout, cfg: DAAConfig, task_type: str, recorder: Recorder | None
    ):
        self.cfg, self.task_type, self.recorder = cfg, task_type, recorder
        self.embed = model.get_input_embeddings()
        self.device = model.device
        with torch.inference_mode():
            emb = self.embed(torch.tensor(layout.ids, device=self.device))  # (P, D)
            self.state: RelevanceState = build_relevance(
                emb, layout.pieces, layout.question_tokens, task_type, cfg.alpha
            )
        self.allocate = DAA_MODE_TABLE[cfg.mode].biases
        if self.allocate and recorder is not None:
            cfgm = model.config
            lam = resolve_strength(cfg.strength, cfgm.num_hidden_layers, cfgm.num_attention_heads)
            bias = self.state.bias(self.state.values).to(self.device)
            recorder.set_bias(bias, lam.to(self.device), record_before=recorder.record)

    def before_forward(self, state: LoopState, g: int, token_id: int) -> None:
        """Relevance (and bias) of a newly chosen token, before it is fed to the model."""
        with torch.inference_mode():
            b = self.state.extend(self.embed(torch.tensor([token_id], device=self.device)))
        if self.allocate and self.recorder is not None:
            self.recorder.bias = torch.cat([self.recorder.bias, b.to(self.device)])

    def branch_hook(self, context_len: int) -> BranchBias:
        return BranchBias(self, context_len)

    def record(self, before: np.ndarray | None) -> DAARecord:
        strength = self.cfg.strength
        scalar = isinstance(strength, (int, float))
        info = {
            "bias": "(r - mu) / sigma over prompt positions",
            "mu": self.state.mu,
            "sigma": self.state.sigma,
        }
        if not scalar:
            info["strength"] = torch.as_tensor(strength, dtype=torch.float32).tolist()
        return DAARecord(
            self.cfg.mode,
            float(self.cfg.alpha),
            float(strength) if scalar else float(np.mean(info["strength"])),
            self.task_type,
            int(self.state.focus),
            self.state.values.numpy().astype(np.float16),
            list(self.state.descriptors),
            before if self.allocate else None,
            info,
        )


@dataclass
class BranchBias(StepHook):
    """Bias for a branch continuation: the main run's bias up to the branch point, then its own."""

    track: DAATrack
    context_len: int
    saved: torch.Tensor | None = field(default=None, init=False)

    def __enter__(self) -> BranchBias:
        rec = self.track.recorder
        if self.track.allocate and rec is not None:
            self.saved = rec.bias
            rec.bias = rec.bias[: self.context_len]
        return self

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            self.track.recorder.bias = self.saved

    def before_forward(self, state: LoopState, g: int, token_id: int) -> None:
        rec = self.track.recorder
        if not (self.track.allocate and rec is not None):
            return
        with torch.inference_mode():
            emb = self.track.embed(torch.tensor([token_id], device=self.track.device))
        r = self.track.state.score(emb, rec.bias.shape[0])
        rec.bias = torch.cat([rec.bias, self.track.state.bias(r).to(self.track.device)])
