"""The memory bound without a long run: the largest tensor allocated while a 2,048-token prompt
is prefilled and decoded with attention recorded in small blocks is O(T × block), not O(T²)."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from o3viz.hooks.instrument import instrument
from o3viz.hooks.recorder import Recorder, RecorderSpec
from o3viz.testing.builders import make_tiny_llama
from o3viz.testing.largest_tensor import LargestTensor

pytestmark = [pytest.mark.model]

T, BLOCK = 2048, 32


def _capture(model, ids: list[int], rec: Recorder, new_tokens: int) -> None:
    """Prefill, then greedy decode, as the capture loop does (one logits row per forward)."""
    cache = DynamicCache(config=model.config)
    x = torch.tensor([ids])
    for _ in range(new_tokens + 1):
        logits = model(input_ids=x, past_key_values=cache, use_cache=True, logits_to_keep=1).logits
        rec.end_step()
        x = logits[:, -1:].argmax(-1)


@pytest.mark.parametrize("biased", [False, True], ids=["plain", "daa-bias"])
def test_largest_tensor_of_a_2k_capture_grows_with_t_times_block_not_t_squared(biased):
    model, tok = make_tiny_llama(num_layers=2, max_positions=T + 64)
    c = model.config
    ids = [int(i) for i in torch.randint(10, 5000, (T,), generator=torch.Generator().manual_seed(0))]
    spec = RecorderSpec(
        c.num_hidden_layers, c.num_attention_heads, T, [0, 1], top_k=8, prefill_top_k=8, block_rows=BLOCK
    )
    rec = Recorder(spec)
    if biased:  # DAA allocate: a per-key bias on every head, prefill included
        rec.set_bias(
            torch.linspace(-1, 1, T + 8), torch.ones(c.num_hidden_layers, c.num_attention_heads), False
        )
    mode = LargestTensor()
    with torch.inference_mode(), instrument(model, rec), mode:
        _capture(model, ids, rec, new_tokens=4)
    h = c.num_attention_heads
    assert len(rec.steps_mean) == 4 and rec.prefill_top[1][0].shape == (T, 8)
    # one block of probabilities (H, block, T) is the largest thing alive; T² is 16x more
    assert mode.numel <= h * BLOCK * (T + 8), (mode.numel, mode.op)
    assert mode.numel * 16 <= T * T
