"""What a capture keeps at its length: the trace's size is estimated from the settings before the
work starts, long prompts keep top-k prefill rows (said in a sentence recorded in the trace), and a
run whose trace cannot fit is refused in one line before any token is generated."""

from __future__ import annotations

import json

import numpy as np
import pytest

from o3viz.errors import UsageError
from o3viz.run import sizing
from o3viz.run.capture import capture
from o3viz.run.config import CaptureConfig
from o3viz.run.request import RunRequest
from o3viz.run.sizing import (
    PREFILL_DENSE_MAX,
    ROWS_DENSE_MAX,
    ROWS_TOP_K,
    TraceSize,
    estimate_trace_size,
    plan_storage,
    storage_note,
)
from o3viz.testing.builders import make_tiny_llama
from o3viz.trace import load_trace, trace_bytes
from o3viz.trace.codec import decode_array
from o3viz.trace.jsonfile import MAX_FILE_BYTES, MAX_JSON_BYTES

pytestmark = [pytest.mark.model]


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


def test_a_long_generation_keeps_top_k_rows_and_grows_linearly():
    # before: 8,192 new tokens were refused (dense (G, C) rows grow with G²); now the rows are pairs
    plan = plan_storage(200, 8192, num_layers=30, num_heads=9)
    assert (plan.rows, plan.rows_top_k, plan.top_k) == ("top_k", ROWS_TOP_K, ROWS_TOP_K)
    assert plan.note.startswith(
        "generated-token attention kept as top-64 keys per row above 2k new tokens (this run: up to 8,192)"
    )
    assert plan.layers == [0, 15, 29] and plan.size.fits()
    sizes = [
        plan_storage(200, g, num_layers=30, num_heads=9, layers=[]).size.json_bytes
        for g in (4096, 8192, 16384)
    ]
    assert 1.8 < sizes[1] / sizes[0] < 2.2 and 1.8 < sizes[2] / sizes[1] < 2.2
    assert plan_storage(200, ROWS_DENSE_MAX // 2, num_layers=30, num_heads=9, layers=[]).rows == "dense"


def test_a_generation_too_long_even_for_top_k_rows_is_refused_in_one_line():
    with pytest.raises(UsageError, match=r"^a 200-token prompt with up to 400,000 new tokens .*MiB") as e:
        plan_storage(200, 400_000, num_layers=30, num_heads=9)
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


def test_a_long_generation_keeps_its_rows_as_top_k_pairs_in_memory_and_in_the_file(
    tiny, tmp_path, monkeypatch
):
    # the same plan as above 2k new tokens, at a tiny length: rows past 16 new tokens keep 8 keys
    monkeypatch.setattr(sizing, "ROWS_DENSE_MAX", 16)
    monkeypatch.setattr(sizing, "ROWS_TOP_K", 8)
    model, tok = tiny
    req = RunRequest(prompt=_prompt(tok, 40), max_new_tokens=48, min_new_tokens=48)
    trace = capture(model, tok, req)
    att = trace.final.attention
    g, c = att.num_generated, att.mean.shape[1]
    assert g == 48 and att.rows_top_k == 8 and att.per_head is None
    assert storage_note(att.info).startswith(
        "generated-token attention kept as top-8 keys per row above 16 new"
    )
    assert att.info["storage"]["rows"] == "top_k"
    assert int((att.mean != 0).sum(1).max()) <= 8  # the mean rows hold their top 8 keys
    values, index = att.per_head_top
    assert values.shape == index.shape == (g, 2, model.config.num_attention_heads, 8)
    # per-head windows are rebuilt from the pairs: each row's kept keys, zeros elsewhere
    block = att.head_block(1, 40, 48)
    assert block.shape[0] == 8 and block.shape[2] == c and int((block != 0).sum(-1).max()) <= 8
    assert att.step_alloc is not None  # computed from the full rows before they were cut
    # the file holds pairs, not rows as long as the context: its JSON grows with G, not G²
    d = att.to_dict()
    assert "data" not in d["mean"] and d["mean"]["top_k"] == 8 and "per_head" not in d
    got, size = _measured(trace), att.info["storage"]["size"]
    assert (
        size["json_bytes_estimate"] >= got.json_bytes * 0.9
        and size["file_bytes_estimate"] >= got.file_bytes * 0.9
    )
    back = load_trace(trace.save(tmp_path / "t.o3trace.json.gz")).final.attention
    assert back == att and back.rows_top_k == 8
    import jsonschema

    from o3viz.paths import REPO_ROOT

    jsonschema.validate(trace.to_dict(), json.loads((REPO_ROOT / "docs" / "trace.schema.json").read_text()))
    np.testing.assert_array_equal(back.mean, att.mean)
    np.testing.assert_array_equal(back.token_matrix(1, 0), att.token_matrix(1, 0))


def test_a_bad_key_position_in_the_pairs_is_one_clear_error(tiny, monkeypatch):
    from o3viz.errors import TraceError

    monkeypatch.setattr(sizing, "ROWS_DENSE_MAX", 4)
    model, tok = tiny
    trace = capture(model, tok, RunRequest(prompt="Add 2 and 3.", max_new_tokens=8, min_new_tokens=8))
    d = json.loads(trace_bytes(trace))
    width = d["rounds"][0]["attention"]["mean"]["width"]
    d["rounds"][0]["attention"]["mean"]["width"] = 2
    with pytest.raises(TraceError, match=r"mean\.index.*0\.\.1"):
        load_trace(json.dumps(d).encode())
    assert width > 2
