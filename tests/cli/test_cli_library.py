"""``o3viz import --all`` and ``o3viz library list|search|show|rm|export|reindex`` against a
store in a temporary O3VIZ_HOME."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from o3viz.cli.main import main
from o3viz.store.store import Store
from o3viz.testing.datasets import hostile_lines, write_reasoning_jsonl


def _import(tmp_path, capsys, n: int = 8) -> list[dict]:
    path = write_reasoning_jsonl(tmp_path / "toy.jsonl", n)
    assert main(["import", str(path), "--all", "--dataset", "toy", "--workers", "0"]) == 0
    assert f"{n} traces from {n} records into dataset 'toy'" in capsys.readouterr().out
    assert main(["library", "list", "--json", "--limit", "100"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_import_all_fills_the_store_and_list_shows_newest_first(tmp_path, capsys):
    rows = _import(tmp_path, capsys)
    assert len(rows) == 8 and {r["dataset"] for r in rows} == {"toy"}
    assert [r["record"] for r in rows] == list(range(8, 0, -1))
    assert main(["library", "list", "--correct", "wrong", "--dataset", "toy"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].endswith(
        f"of {sum(r['correct'] == 0 for r in rows)} traces in {Store().root}"
    )


def test_search_show_rm_and_reindex(tmp_path, capsys):
    rows = _import(tmp_path, capsys)
    assert main(["library", "search", "reconsider", "--json"]) == 0
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert found and all(r["backtracks"] > 0 for r in found)  # "Wait, let me reconsider" is a backtrack
    key = rows[0]["key"]
    assert main(["library", "show", key[:6], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["key"] == key
    assert main(["library", "rm", key]) == 0 and "removed 1" in capsys.readouterr().out
    Store().db_path.unlink()  # a lost index: the files are the truth
    assert main(["library", "reindex"]) == 0
    assert "7 rows added" in capsys.readouterr().out


def test_export_writes_a_step_level_parquet_table(tmp_path, capsys):
    _import(tmp_path, capsys, n=5)
    out = tmp_path / "steps.parquet"
    assert main(["library", "export", "--parquet", str(out), "--dataset", "toy"]) == 0
    table = pq.read_table(out).to_pandas()
    assert table["key"].nunique() == 5 and {"step", "type", "kind", "text", "correct"} <= set(table.columns)
    assert table.groupby("key")["step"].min().eq(0).all()


def test_bad_records_are_named_by_line_and_the_import_still_succeeds(tmp_path, capsys):
    good = write_reasoning_jsonl(tmp_path / "g.jsonl", 3).read_bytes().splitlines()
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"\n".join([good[0], hostile_lines()["binary"], good[1], b"{oops", good[2]]) + b"\n")
    assert main(["import", str(path), "--all", "--dataset", "m", "--workers", "0"]) == 0
    out, err = capsys.readouterr()
    assert "3 traces from 5 records" in out and "2 bad records skipped" in out
    assert err.splitlines() == [
        "mixed.jsonl: line 2: binary data, not JSON",
        "mixed.jsonl: line 4: record: not valid JSON, perhaps truncated "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
    ]


def test_library_errors_are_one_line(tmp_path, capsys):
    assert main(["library", "show", "ab"]) == 2
    assert main(["library", "rm", "--dataset", "toy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("o3viz: error: ") for line in err)


def test_list_shows_an_unknown_token_count_as_a_dash_not_zero(tmp_path, capsys):
    """An import that gave no token count is stored as 0 in the index; ``library list`` shows "—"
    (issue 35, finding 10: "0 generated tokens" on imports)."""
    _import(tmp_path, capsys, n=2)
    assert main(["library", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    col = lines[0].index("tokens")
    assert all(line[col] == "—" for line in lines[1:-1]), lines


def test_an_unknown_dataset_or_model_is_one_line_naming_what_there_is(tmp_path, capsys):
    rows = _import(tmp_path, capsys, n=3)
    model = rows[0]["model"]
    assert main(["library", "list", "--dataset", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("no dataset 'nope' in the store (datasets: toy)") and "\n" not in err
    assert main(["library", "list", "--dataset", "toy", "--model", model + "x"]) == 2
    err = capsys.readouterr().err.strip()
    models = ", ".join(sorted({r["model"] for r in rows}))
    assert err.endswith(f"no model '{model}x' in dataset toy (models: {models})")
    assert main(["library", "list", "--dataset", "toy", "--model", model]) == 0


def test_import_all_of_a_missing_file_or_a_folder_is_one_line(tmp_path, capsys):
    for name in (tmp_path / "missing.jsonl", tmp_path):
        assert main(["import", str(name), "--all", "--dataset", "d", "--workers", "0"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"{name}: no such file (or not a regular file)") and "\n" not in err
