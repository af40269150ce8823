"""Pointer compression: repeats found, pointers written, lossless expansion, scores, hysteresis,
the trace record, the CLI and the benchmark's smoke run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from o3viz.cli.main import main
from o3viz.compress.context import CompressionConfig, compress_context, score_segments
from o3viz.compress.record import build_compression_record
from o3viz.compress.repeats import covered_tokens, minhash_signatures, near_duplicate_sources, tokenize_regex
from o3viz.errors import TraceError, UsageError
from o3viz.paths import data_dir
from o3viz.trace.compression import CompressionRecord

DATA = data_dir()
LINE = "Natalia sold clips to 48 of her friends in April, and then half as many in May."
OTHER = "Weng earns 12 dollars an hour for babysitting and worked 50 minutes yesterday."


def test_exact_repeat_becomes_pointer_to_first_occurrence_and_expands_exactly():
    text = f"{LINE}\n{OTHER}\n{LINE}\n"
    ctx = compress_context(text)
    assert ctx.text == f"{LINE}\n{OTHER}\n⟦=§0⟧\n"
    assert ctx.segments[2].state == "compressed" and ctx.segments[2].source == 0
    assert ctx.expand() == text
    assert ctx.compressed_tokens < ctx.original_tokens
    assert [(e.step, e.segment, e.kind) for e in ctx.events] == [(-1, 2, "compress")]


def test_consecutive_repeated_lines_share_one_range_pointer():
    text = f"{LINE}\n{OTHER}\nsomething else entirely different here\n{LINE}\n{OTHER}\n"
    ctx = compress_context(text)
    assert "⟦=§0-1⟧" in ctx.text
    assert ctx.pointers[0].count == 2
    assert ctx.expand() == text


def test_near_duplicate_stores_its_edit_and_expands_exactly():
    near = LINE.replace("April", "March")
    text = f"{LINE}\n{OTHER}\n{near}\n"
    ctx = compress_context(text)
    assert ctx.segments[2].kind == "near" and ctx.segments[2].state == "compressed"
    assert "⟦~§0⟧" in ctx.text
    edit_texts = [op[3] for op in ctx.pointers[0].edit]
    assert edit_texts == ["March"]
    assert ctx.expand() == text


def test_literal_pointer_syntax_in_the_input_is_escaped():
    text = f"⟦=§0⟧ and ⟦⟦ and ⟦~§3⟧ ⟧\n{LINE}\n{LINE}\n⟦=§0⟧ and ⟦⟦ and ⟦~§3⟧ ⟧\n"
    ctx = compress_context(text)
    assert ctx.expand() == text
    assert ctx.text.count("⟦=§1⟧") == 1  # the only real pointer


def test_score_formula_combines_redundancy_and_demand():
    cfg = CompressionConfig(redundancy_weight=0.5)
    got = score_segments(np.array([1.0, 1.0, 0.0, 0.4]), np.array([0.0, 1.0, 0.0, 0.2]), cfg)
    assert np.allclose(got, [1.0, 0.5, 0.5, 0.6])


def test_question_relevant_repeat_is_kept_and_irrelevant_one_compressed():
    cfg = CompressionConfig(redundancy_weight=0.2)
    text = f"{LINE}\n{OTHER}\n{LINE}\n{OTHER}\n"
    ctx = compress_context(text, config=cfg, question="How much does Weng earn for babysitting per hour?")
    states = {s.index: s.state for s in ctx.segments}
    assert states[2] == "compressed" and states[3] == "kept"
    assert ctx.expand() == text


def test_hysteresis_keeps_state_between_thresholds_and_expands_below():
    cfg = CompressionConfig(redundancy_weight=0.2)  # exact copy: score = 0.2 + 0.8 * (1 - demand)
    text = f"{LINE}\n{OTHER}\n{LINE}\n"
    first = compress_context(text, config=cfg)
    assert first.segments[2].state == "compressed"
    # demand 0.5 -> score 0.6: inside the band, the compressed segment stays compressed
    mid = compress_context(text, config=cfg, question="Natalia clips friends sold May Weng", previous=first)
    assert 0.3 < mid.segments[2].score < 0.7 and mid.segments[2].state == "compressed" and not mid.events
    # the same score without a previous compression leaves the segment kept
    assert (
        compress_context(text, config=cfg, question="Natalia clips friends sold May Weng").segments[2].state
        == "kept"
    )
    # full demand -> score 0.2 <= 0.3: expanded, with an event
    low = compress_context(text, config=cfg, question="Natalia sold clips friends April May", previous=first)
    assert low.segments[2].state == "expanded" and low.segments[2].score <= 0.3
    assert [(e.segment, e.kind) for e in low.events] == [(2, "expand")]
    assert low.expand() == text and "⟦" not in low.text


def test_thresholds_are_validated():
    with pytest.raises(UsageError):
        CompressionConfig(compress_threshold=0.3, expand_threshold=0.7)


def test_covered_tokens_matches_brute_force():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 4, size=300)
    m = 4
    want = np.zeros(len(ids), dtype=bool)
    windows = [tuple(ids[i : i + m]) for i in range(len(ids) - m + 1)]
    for i, w in enumerate(windows):
        if w in windows[:i]:
            want[i : i + m] = True
    assert np.array_equal(covered_tokens(ids, m), want)


def test_minhash_estimates_shingle_jaccard():
    toks = tokenize_regex(f"{LINE} {LINE.replace('April', 'June')} {OTHER}")
    n = len(tokenize_regex(LINE))
    seg_tok = np.array([[0, n], [n, 2 * n], [2 * n, len(toks)]])
    sig, valid = minhash_signatures(toks.ids, seg_tok, 3, 256)
    source, agree = near_duplicate_sources(sig, valid, 32)
    sh = [{tuple(toks.ids[i : i + 3]) for i in range(a, b - 2)} for a, b in seg_tok]
    true_j = len(sh[0] & sh[1]) / len(sh[0] | sh[1])
    assert source[1] == 0 and abs(agree[1] - true_j) < 0.12
    assert source[2] == -1


def test_record_round_trips_and_carries_pointer_table():
    ctx = compress_context(f"{LINE}\n{OTHER}\n{LINE}\n")
    rec = build_compression_record(ctx, memory_tokens=[5, 4], step_scores=[[0.5, 0.5, 1.0], [0.5, 0.4, 1.0]])
    back = CompressionRecord.from_dict(json.loads(json.dumps(rec.to_dict())), "compression")
    assert back == rec
    assert rec.info["pointers"][0]["source"] == 0 and rec.segments[2]["pointer_to"] == 0
    assert rec.ratio == ctx.ratio


def test_record_rejects_ragged_step_scores():
    rec = CompressionRecord(step_scores=[[0.1, 0.2], [0.3]]).to_dict()
    with pytest.raises(TraceError, match="step_scores"):
        CompressionRecord.from_dict(rec, "compression")


def test_token_ids_need_a_tokenizer():
    with pytest.raises(UsageError):
        compress_context([1, 2, 3])


def test_cli_compress_json_reports_lossless(tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(f"{LINE}\n{OTHER}\n{LINE}\n", encoding="utf-8")
    assert main(["compress", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["lossless"] and out["ratio"] < 1 and out["segments"][2]["state"] == "compressed"
    assert main(["compress", str(path), "--question", "Weng?"]) == 0
    assert "ratio:" in capsys.readouterr().out
    assert main(["compress", str(tmp_path / "missing.txt")]) == 2


@pytest.mark.subprocess
def test_bench_compress_without_model_prints_figures(capsys):
    if not (DATA / "traces").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    from benchmarks.__main__ import build_parser

    argv = [
        "compress",
        "--no-model",
        "--sizes",
        "2000,4000",
        "--repeat",
        "1",
        "--inputs",
        "1",
        "--tokens",
        "1500",
    ]
    assert main(argv, build_parser()) == 0
    lines = dict(line.split(": ", 1) for line in capsys.readouterr().out.strip().splitlines())
    assert lines["scaling_2k_lossless"] == "True" and "time_ratio_4k_over_2k" in lines
    assert 0 <= float(lines["retention_facts_pointer"]) <= 1


def test_a_sample_build_leaves_wall_clock_timings_out_of_the_record(monkeypatch):
    text = "alpha beta gamma delta. " * 40
    ctx = compress_context(text)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert "timing" in build_compression_record(ctx).info
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796083200")  # make samples: the same bytes every run
    assert "timing" not in build_compression_record(ctx).info
