"""Built-in task lists for a pip user: the samples that ship in the package, a file the user names
(``--tasks-file``), and ``$O3VIZ_DATA``; each miss is one line naming the fix."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.errors import UsageError
from o3viz.tasks import sources
from o3viz.tasks.spec import gsm8k_rows, load_task


@pytest.fixture
def no_shared_data(tmp_path, monkeypatch):
    """A machine without ../shared/data: what a pip user has."""
    monkeypatch.setenv("O3VIZ_DATA", str(tmp_path / "nothing-here"))
    sources.forget_tasks_files()
    yield
    sources.forget_tasks_files()


def test_a_pip_user_runs_the_bundled_gsm8k_sample(no_shared_data):
    where = sources.tasks_file("gsm8k")
    assert where.sample and where.path.is_relative_to(sources.BUNDLED)
    spec = load_task("gsm8k:0")
    assert spec.task.reference == "18" and "Janet" in spec.prompt
    assert len(gsm8k_rows()) == 50


def test_a_task_past_the_sample_names_both_fixes(no_shared_data):
    with pytest.raises(UsageError) as err:
        load_task("gsm8k:600")
    line = str(err.value)
    assert "\n" not in line and "0..49" in line and "--tasks-file" in line and "O3VIZ_DATA" in line


def test_the_bundled_mbppplus_sample_is_readable_and_licensed(no_shared_data):
    rows = sources.read_task_lines("mbppplus", sources.tasks_file("mbppplus").path)
    assert len(rows) == 20 and rows[0]["task_id"] == "Mbpp/2"
    notes = (sources.BUNDLED / "README.md").read_text(encoding="utf-8")
    assert "MIT" in notes and "Apache-2.0" in notes


def test_o3viz_data_points_at_the_full_list(tmp_path, monkeypatch):
    (tmp_path / "gsm8k").mkdir()
    rows = [
        {"question": f"What is {i} + 1?", "answer": f"{i} + 1 = {i + 1}\n#### {i + 1}"} for i in range(120)
    ]
    (tmp_path / "gsm8k" / "gsm8k_test.jsonl").write_text("\n".join(map(json.dumps, rows)), encoding="utf-8")
    monkeypatch.setenv("O3VIZ_DATA", str(tmp_path))
    sources.forget_tasks_files()
    assert not sources.tasks_file("gsm8k").sample
    assert load_task("gsm8k:100").task.reference == "101"


def test_a_named_tasks_file_wins_and_a_bad_one_is_one_line(tmp_path, no_shared_data):
    good = tmp_path / "mine.jsonl"
    good.write_text(json.dumps({"question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"}) + "\n", "utf-8")
    sources.use_tasks_file("gsm8k", good)
    assert load_task("gsm8k:0").task.reference == "4"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n{not json\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"line 1 is not a GSM8K task \(it needs question, answer\)"):
        sources.use_tasks_file("gsm8k", bad)
    with pytest.raises(UsageError, match="only for gsm8k, mbppplus"):
        sources.use_tasks_file("humaneval", good)


def test_the_cli_refuses_a_bad_tasks_file_before_any_model_loads(tmp_path, no_shared_data, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1, 2]\n", encoding="utf-8")
    rc = main(
        ["run", "--task", "gsm8k:0", "--tasks-file", str(bad), "--out", str(tmp_path / "t.o3trace.json")]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "line 1 is not a GSM8K task" in err and len(err.splitlines()) == 1
    rc = main(["run", "--prompt", "hi", "--tasks-file", str(bad), "--out", str(tmp_path / "t.o3trace.json")])
    assert rc == 2 and "--tasks-file goes with --task" in capsys.readouterr().err
