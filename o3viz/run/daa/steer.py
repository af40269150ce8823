"""DAA's ``steer`` mode during a capture (PASTA): the marked spans found in the prompt
(``o3viz.run.daa.steer_spans``: text with an occurrence, or a named segment), the heads to steer
(``choose_heads``; ``auto`` profiles in ``o3viz.run.daa.steer_profile``), the bias set on the recorder
(``SteerTrack``) and the ``SteerRecord`` written into the trace.

The bias covers the prompt, every generated token and every explored branch token at once (0
beyond the prompt), so no per-token hook is needed and branches and KV-cache release see it too.
"""

from __future__ import annotations

import numpy as np
import torch

from o3viz.hooks.recorder import Recorder
from o3viz.hooks.steer import head_mask, steer_bias
from o3viz.run.config import DAAConfig
from o3viz.run.daa.steer_profile import choose_heads
from o3viz.run.daa.steer_spans import resolve_spans
from o3viz.run.prompt import PromptLayout
from o3viz.trace.attention import SteerRecord


class SteerTrack:
    """Sets the steering bias on a run's recorder and writes its ``SteerRecord``."""

    def __init__(
        self, model, tokenizer, layout: PromptLayout, cfg: DAAConfig, recorder: Recorder, length: int
    ):
        self.cfg, self.recorder = cfg, recorder
        self.spans = resolve_spans(layout, cfg.spans)
        c = model.config
        self.heads, self.choice, self.info = choose_heads(model, tokenizer, cfg)
        mask = head_mask(self.heads, c.num_hidden_layers, c.num_attention_heads)
        if cfg.steer_alpha == 1:  # no steering at all: the exact unsteered path
            mask.zero_()
        self.ranges = [(s.token_start, s.token_end) for s in self.spans]
        bias = steer_bias(len(layout.ids), self.ranges, cfg.steer_alpha, length)
        recorder.set_bias(bias.to(model.device), mask.to(model.device), record_before=recorder.record)
        self.pairs = [
            tuple(int(x) for x in p) for p in torch.nonzero(head_mask(self.heads, *mask.shape)).tolist()
        ]

    def record(self, before: np.ndarray | None) -> SteerRecord:
        info = dict(self.info)
        info["scope"] = (
            "prompt keys outside the spans scaled by alpha, renormalised; generated tokens unscaled"
        )
        return SteerRecord(
            float(self.cfg.steer_alpha), list(self.spans), self.pairs, self.choice, before, info
        )
