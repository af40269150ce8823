"""``python -m o3viz import``: writes a loadable trace, refuses to clobber, and turns bad input
into one stderr line with exit code 2."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.trace import load_trace

R1 = {
    "model": "deepseek-reasoner",
    "choices": [
        {
            "message": {
                "reasoning_content": "We need 6 * 7. 6 * 7 = 42. So it is 42.",
                "content": "The answer is \\boxed{42}.",
            }
        }
    ],
}


def test_import_writes_a_trace_with_provenance(tmp_path, capsys):
    src, out = tmp_path / "r1.json", tmp_path / "r1.o3trace.json"
    src.write_text(json.dumps(R1))
    assert (
        main(["import", str(src), "--reference", "42", "--question", "What is 6*7?", "--out", str(out)]) == 0
    )
    trace = load_trace(out)
    assert (
        trace.provenance.source["format"] == "deepseek_chat" and trace.provenance.source["file"] == "r1.json"
    )
    assert trace.task.question == "What is 6*7?" and trace.final.checks[-1].verdict == "correct"
    assert "deepseek_chat" in capsys.readouterr().out
    assert main(["import", str(src), "--out", str(out)]) == 2  # exists, no --overwrite
    assert main(["import", str(src), "--out", str(out), "--overwrite", "--no-claims"]) == 0
    assert not [c for c in load_trace(out).final.checks if c.kind == "claim"]


def test_dataset_options_reach_the_importer(tmp_path):
    src, out = tmp_path / "d.jsonl", tmp_path / "d.o3trace.json.gz"
    src.write_text("\n".join(json.dumps({"q": f"Q{i}", "gen": f"So {i}.", "gold": str(i)}) for i in range(2)))
    argv = [
        "import",
        str(src),
        "--record",
        "2",
        "--text-field",
        "gen",
        "--question-field",
        "q",
        "--reference-field",
        "gold",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    t = load_trace(out)
    assert (t.task.question, t.task.reference, t.final.answer) == ("Q1", "1", "1")


@pytest.mark.parametrize(
    "content, extra",
    [
        ('{"choices": [', []),
        ('{"unrelated": true}', []),
        ("some text", ["--format", "anthropic_messages"]),
        ("x", ["--layers", "a,b"]),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, extra):
    src = tmp_path / "bad.json"
    src.write_text(content)
    assert main(["import", str(src), *extra, "--out", str(tmp_path / "o.o3trace.json")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("o3viz: error:")
    assert not (tmp_path / "o.o3trace.json").exists()


def test_unknown_format_choice_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["import", str(tmp_path / "x.txt"), "--format", "yaml", "--out", str(tmp_path / "o.json")])
    assert exc.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_missing_file_exits_2(tmp_path):
    assert main(["import", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "o.o3trace.json")]) == 2


def test_a_5000_digit_integer_in_a_dataset_record_is_one_line(tmp_path, capsys):
    src = tmp_path / "d.jsonl"
    src.write_text(
        json.dumps({"question": "Q", "answer": "1"})
        + "\n"
        + '{"question": "Q2", "answer": "2", "id": '
        + "9" * 5000
        + "}\n"
    )
    out = tmp_path / "o.o3trace.json"
    assert main(["import", str(src), "--record", "2", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "5000 digits" in lines[0] and not out.exists()


def test_record_counts_from_1_as_the_preview_and_the_library_do(tmp_path, capsys):
    src = tmp_path / "d.jsonl"
    src.write_text("\n".join(json.dumps({"q": f"Q{i}", "gen": f"So {i}.", "gold": str(i)}) for i in range(3)))
    assert main(["import", str(src), "--preview", "--text-field", "gen", "--question-field", "q"]) == 0
    assert "record 2: " in capsys.readouterr().out
    out = tmp_path / "r2.o3trace.json"
    fields = ["--text-field", "gen", "--question-field", "q", "--reference-field", "gold"]
    assert main(["import", str(src), "--record", "2", *fields, "--no-store", "--out", str(out)]) == 0
    assert "record 2: " in capsys.readouterr().out
    trace = load_trace(out)
    assert trace.task.question == "Q1" and trace.provenance.source["record"] == 2
    assert (
        main(
            [
                "import",
                str(src),
                "--record",
                "0",
                *fields,
                "--no-store",
                "--out",
                str(tmp_path / "x.o3trace.json"),
            ]
        )
        == 2
    )
    assert "records count from 1" in capsys.readouterr().err
