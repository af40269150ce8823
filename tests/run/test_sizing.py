"""What a capture keeps at its length: the trace's size is estimated from the settings before the
work starts, long prompts keep top-k prefill rows (said in a sentence recorded in the trace), and a
run whose trace cannot fit is refused in one line before any token is generated."""

from __future__ import annotations

import json

import numpy as np
import pytest

from o3viz.errors import UsageError
from o3viz.run.capture import capture
from o3viz.run.config import CaptureConfig
from o3viz.run.request import RunRequest
from o3viz.run.sizing import PREFILL_DENSE_MAX, TraceSize, estimate_trace_size, plan_storage, storage_note
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import load_trace, trace_bytes
from o3viz.trace.codec import decode_array
from o3viz.trace.jsonfile import MAX_FILE_BYTES, MAX_JSON_BYTES


def test_a_16k_prompt_keeps_top_k_prefill_rows_and_fits_the_limits():
    # the run the issue lost: 16k prompt, 8 new tokens, default settings, the embedded model's shape
    plan = plan_storage(16_000, 8, num_layers=30, num_heads=9)
    assert plan.prefill == "top_k" and plan.prefill_top_k == 64 and plan.layers == [0, 15, 29]
    assert plan.note == "prefill attention kept as top-64 rows above 2k tokens (this prompt: 16,000)"
    assert plan.size.json_bytes < MAX_JSON_BYTES and plan.size.file_bytes < MAX_FILE_BYTES


def test_a_short_run_keeps_what_was_asked_and_says_nothing():
    plan = plan_storage(359, 512, num_layers=30, num_heads=9)
    assert (plan.prefill, plan.head_average, plan.note) == ("dense", False, "")


def test_the_trace_grows_linearly_with_the_prompt_above_the_dense_limit():
    sizes = [plan_storage(p, 8, num_layers=30, num_heads=9).size.json_bytes for p in (4096, 8192, 16384)]
    assert 1.8 < sizes[1] / sizes[0] < 2.2 and 1.8 < sizes[2] / sizes[1] < 2.2


def test_a_long_generation_steps_down_one_knob_at_a_time_then_refuses_in_one_line():
    plan = plan_storage(200, 4096, num_layers=30, num_heads=9)
    assert plan.layers == [] and plan.prefill == "none"
    assert plan.note.startswith("per-head rows kept as the head mean")
    with pytest.raises(UsageError, match=r"^a 200-token prompt with up to 8,192 new tokens .*MiB") as e:
        plan_storage(200, 8192, num_layers=30, num_heads=9)
    assert "\n" not in str(e.value)


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_llama(num_layers=2, max_positions=4096)


def _prompt(tok, n: int) -> str:
    words = "Count the sheep and the goats, then explain each step of the sum. " * (n // 10)
    return tok.decode(tok(words, add_special_tokens=False)["input_ids"][:n])


def _measured(trace) -> TraceSize:
    return TraceSize(len(trace_bytes(trace)), len(trace_bytes(trace, gzipped=True)))


def test_the_estimate_bounds_the_saved_trace(tiny):
    model, tok = tiny
    req = RunRequest(prompt=_prompt(tok, 300), max_new_tokens=24, capture=CaptureConfig(layers="all"))
    trace = capture(model, tok, req)
    info = trace.final.attention.info["storage"]
    got = _measured(trace)
    assert info["size"]["json_bytes_estimate"] >= got.json_bytes * 0.9, (info["size"], got)
    assert info["size"]["file_bytes_estimate"] >= got.file_bytes * 0.9, (info["size"], got)
    assert info["size"]["json_bytes_estimate"] < 3 * got.json_bytes


def test_a_prompt_past_the_dense_limit_keeps_top_k_prefill_rows_in_the_trace(tiny, tmp_path):
    model, tok = tiny
    req = RunRequest(prompt=_prompt(tok, PREFILL_DENSE_MAX + 100), max_new_tokens=4)
    trace = capture(model, tok, req)
    att = trace.final.attention
    p = att.prompt_len
    assert p > PREFILL_DENSE_MAX and att.prefill is None
    assert storage_note(att.info).startswith("prefill attention kept as top-64 rows above 2k tokens")
    back = load_trace(trace.save(tmp_path / "t.o3trace.json.gz"))
    top = back.final.attention.info["prefill_top_k"]
    values = decode_array(top["values"], "values", ndim=3)
    index = decode_array(top["index"], "index", ndim=3)
    assert values.shape == index.shape == (2, p, 64) and top["layers"] == [0, 1]
    assert np.all(index[:, 10, :] <= 10) or np.all(values[:, 10, 11:] == 0)  # causal: row 10 sees keys 0..10
    # rows with at most 64 keys in view keep all of them: their kept mass is the whole row
    np.testing.assert_allclose(values.astype(np.float32).sum(-1)[:, :64], 1.0, atol=0.01, rtol=0)
    assert json.dumps(back.final.attention.info["storage"])  # plain JSON, shown on the page


def test_estimate_counts_a_dense_prefill_map_quadratically():
    small = plan_storage(1000, 8, num_layers=30, num_heads=9)
    big = plan_storage(2000, 8, num_layers=30, num_heads=9)
    assert big.size.parts["prefill"] == 4 * small.size.parts["prefill"]
    assert estimate_trace_size(big, 30, 9).json_bytes == big.size.json_bytes
