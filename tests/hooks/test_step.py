"""The one hook protocol of the generation loop: hooks see every step in order, and a forward run
inside ``LoopState.paused()`` (what a KV-cache restore does) changes nothing any recorder keeps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from o3viz.hooks.instrument import Recorder, RecorderSpec, instrument
from o3viz.hooks.lens import record_lens
from o3viz.hooks.routing import record_routing
from o3viz.hooks.step import LoopState, StepHook
from o3viz.run.layer_recorders import InternalsRun
from o3viz.run.loop import run_loop
from o3viz.run.request import RunRequest
from o3viz.testing.moe import tiny_moe

pytestmark = [pytest.mark.model]

PROMPT = [3, 17, 42, 9, 88, 5, 61]


class _Log(StepHook):
    def __init__(self):
        self.calls: list[tuple] = []

    def on_prefill(self, state):
        self.calls.append(("prefill", state.prompt_len))

    def before_forward(self, state, g, token_id):
        self.calls.append(("before", g))

    def after_forward(self, state, g, token_id):
        self.calls.append(("after", g))

    def on_token(self, state, g, token_id):
        self.calls.append(("token", g))

    def on_end(self, state):
        self.calls.append(("end",))


class _SideForward(StepHook):
    """After every step, one more forward over other tokens, on its own cache, inside
    ``paused()``: the shape of a restored segment's recomputation."""

    def after_forward(self, state: LoopState, g: int, token_id: int) -> None:
        with state.paused():
            state.model(input_ids=torch.tensor([[5, 6, 7]]), use_cache=False)


def test_hooks_are_called_in_order_at_every_step():
    model = tiny_moe("olmoe")
    log = _Log()
    gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=3), stop_ids=set(), hooks=[log])
    steps = [c for g in range(3) for c in (("before", g), ("after", g), ("token", g))]
    assert len(gen.ids) == 3 and log.calls == [("prefill", len(PROMPT)), *steps, ("end",)]


def _recorded(model, side: bool):
    c = model.config
    rec = Recorder(RecorderSpec(c.num_hidden_layers, c.num_attention_heads, len(PROMPT), [0], top_k=None))
    with instrument(model, rec), record_routing(model) as routing, record_lens(model, [0, 1]) as lens:
        inner = InternalsRun(routing, lens, c.num_hidden_layers)
        hooks = [rec, inner] + ([_SideForward()] if side else [])
        gen = run_loop(model, PROMPT, RunRequest(max_new_tokens=5), stop_ids=set(), hooks=hooks)
    n = len(gen.ids)
    rows = [r.tolist() for r in rec.steps_mean]
    return gen.ids, rows, routing.to_record(n), lens.to_record(n, c.num_hidden_layers, str)


def test_a_paused_forward_changes_no_recorder():
    model = tiny_moe("olmoe")
    ids, mean, routing, lens = _recorded(model, side=False)
    ids2, mean2, routing2, lens2 = _recorded(model, side=True)
    assert ids == ids2 and mean == mean2 and len(mean) == 5
    np.testing.assert_array_equal(routing.experts, routing2.experts)
    np.testing.assert_array_equal(lens.token_ids, lens2.token_ids)
    np.testing.assert_array_equal(lens.rank, lens2.rank)  # the pending row survives the side forward
    assert lens.token_ids.shape[0] == lens.rank.shape[0] == 5
