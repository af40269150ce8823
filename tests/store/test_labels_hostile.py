"""Issue 38, findings 4, 5, 8 and 9: hostile label files. A long torn line in ``labels.jsonl`` and
a big golden-set file are read line by line, in memory measured from outside (a child process,
``o3viz.testing.peak_rss``); a line with a field of the wrong type, or a label on a step that does
not exist, never reaches a reader."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import UsageError
from o3viz.store.golden import export_labels, import_label_file, labels_of, labels_on
from o3viz.store.labels import LABEL_FILE, Label, add_labels, all_labels
from o3viz.store.repair import reindex
from o3viz.store.store import Store
from o3viz.testing.peak_rss import measure_peak
from o3viz.testing.synthetic import make_trace

MiB = 1 << 20


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


@pytest.fixture
def key(store) -> str:
    return store.add(make_trace(6, seed=1), source="upload", dataset="d")


def _append(store: Store, data: bytes) -> None:
    path = store.root / LABEL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(data)


def _line(key: str, /, **kw) -> bytes:
    lab = Label(key, 0, 1, "ann", "wrong").to_dict() | kw
    return json.dumps(lab).encode() + b"\n"


@pytest.mark.subprocess
def test_reindex_reads_a_long_torn_line_in_pieces(store, key):
    add_labels(store, [Label(key, 0, 1, "ann", "wrong")])
    _append(store, b'{"note": "' + b"x" * (96 * MiB) + b"\n")  # a torn 96 MiB line
    _append(store, _line(key, step=2, uid="b" * 32))
    code = f"from o3viz.store.repair import reindex\nrep = reindex(Store({str(store.root)!r}))\nprint(rep.labels, rep.errors)"
    run = measure_peak(code, setup="from o3viz.store.store import Store")
    # before: the whole line was read, then checked against the 8 KiB line limit: +96 MiB and more
    assert run.returncode == 0, run.stderr[-500:]
    assert run.growth < 16 * MiB, run.growth >> 20
    assert run.stdout.startswith("1 ") and "line 2: not a label (line too long)" in run.stdout


@pytest.mark.parametrize(
    "bad", [{"time": None}, {"time": "yesterday"}, {"time": float("nan")}, {"key": 7}, {"uid": ["x"]}]
)
def test_a_label_line_with_a_field_of_the_wrong_type_is_refused_on_read(store, key, bad, tmp_path):
    _append(store, _line(key, **bad).replace(b"NaN", b"NaN"))
    rep = reindex(store)
    assert rep.labels == 0 and any("not a label" in e for e in rep.errors), rep.errors
    add_labels(store, [Label(key, 0, 2, "bob", "correct")])
    assert export_labels(store, None, tmp_path / "g.jsonl", "jsonl") == (1, 1)  # before: TypeError


def test_a_label_on_a_step_that_does_not_exist_is_left_out_by_the_readers(store, key, tmp_path):
    _append(store, _line(key, step=999))
    _append(store, _line(key, step=2, uid="c" * 32))
    assert reindex(store).labels == 2
    assert len(all_labels(store)) == 2  # the table keeps what the file says
    assert [lab.step for lab in labels_on(store, key)] == [2]
    assert [lab.step for lab in labels_of(store, "d")] == [2]
    assert export_labels(store, "d", tmp_path / "g.jsonl", "jsonl") == (1, 1)  # before: IndexError


def _golden_file(path, key: str, labels: int) -> None:
    """One golden-set line per 500 labels, every label on step 0:1 by its own labeller."""
    with open(path, "w") as f:
        for start in range(0, labels, 500):
            labs = [{"labeller": f"p{i}", "verdict": "wrong"} for i in range(start, min(labels, start + 500))]
            f.write(json.dumps({"key": key, "steps": [{"step": "0:1", "labels": labs}]}) + "\n")


@pytest.mark.subprocess
def test_labels_import_streams_a_big_file_in_bounded_memory(store, key, tmp_path):
    src = tmp_path / "big.jsonl"
    _golden_file(src, key, 30_000)
    size = src.stat().st_size
    code = f"print(import_label_file(Store({str(store.root)!r}), {str(src)!r}, 'team'))"
    run = measure_peak(
        code, setup="from o3viz.store.golden import import_label_file\nfrom o3viz.store.store import Store"
    )
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.strip() == "30000"
    # before: about 26 bytes held per input byte (+33 MiB here); now one batch of 5,000 labels
    assert run.growth < 16 * MiB + 2 * size, (run.growth >> 20, size >> 20)


def test_labels_import_adds_a_repeated_line_once_and_a_reimport_adds_none(store, key, tmp_path):
    src = tmp_path / "g.jsonl"
    line = json.dumps(
        {"key": key, "steps": [{"step": "0:1", "labels": [{"labeller": "a", "verdict": "wrong"}]}]}
    )
    src.write_text(line + "\n" + line + "\n")
    assert import_label_file(store, src, "team") == 1  # before: 2
    assert import_label_file(store, src, "team") == 0  # before: 2 more


def test_labels_import_refuses_a_bad_line_before_adding_any(store, key, tmp_path):
    src = tmp_path / "g.jsonl"
    good = json.dumps(
        {"key": key, "steps": [{"step": "0:1", "labels": [{"labeller": "a", "verdict": "wrong"}]}]}
    )
    src.write_text(good + "\n" + '{"key": 1, "steps": 5}\n')
    with pytest.raises(UsageError, match="line 2: not a golden-set record"):
        import_label_file(store, src, "team")
    assert all_labels(store) == []


def test_a_bad_row_an_older_reindex_put_in_the_table_is_left_out_by_the_readers(store, key, tmp_path):
    add_labels(store, [Label(key, 0, 1, "ann", "wrong"), Label(key, 0, 2, "bob", "correct")])
    with store.transaction("planting a row an older reindex let through") as conn:
        conn.execute("UPDATE labels SET time = NULL WHERE labeller = 'ann'")
    assert [lab.labeller for lab in labels_on(store, key)] == ["bob"]  # before: TypeError
    assert export_labels(store, None, tmp_path / "g.jsonl", "jsonl") == (1, 1)
