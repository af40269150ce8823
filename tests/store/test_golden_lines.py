"""Issue 41, finding 13: ``o3viz labels import`` of an 8 MB golden-set file holds at most the
documented ``16 MiB + 2 × size`` (docs/limits.md, "Memory, as the tests measure it"), whatever
the file's lines hold. Before, each line was parsed whole by ``json.loads`` and all its labels
batched at once: a file that is one line of 186,000 small labels cost 31 bytes per byte.
Memory is measured from outside, in a child process (``o3viz.testing.peak_rss``)."""

from __future__ import annotations

import json

import pytest

from o3viz.errors import UsageError
from o3viz.store.golden import import_label_file
from o3viz.store.golden_lines import MAX_PARSED_LINE, golden_labels
from o3viz.store.labels import all_labels
from o3viz.store.store import Store
from o3viz.testing.peak_rss import measure_peak
from o3viz.testing.synthetic import make_trace

MiB = 1 << 20
SIZE = 8 * MiB


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "home")


@pytest.fixture
def key(store) -> str:
    return store.add(make_trace(6, seed=1), source="upload", dataset="d")


def _line(key: str, labels: list[dict], step: str = "0:1") -> str:
    return json.dumps({"key": key, "steps": [{"step": step, "labels": labels}]}) + "\n"


def _minimal_file(path, key: str, per_line: int | None) -> int:
    """About ``SIZE`` bytes of minimal labels (each by its own labeller, on step 0:1): one line of
    them all (``per_line`` None), or lines of ``per_line``; returns how many labels."""
    one = len(json.dumps({"labeller": "p100000", "verdict": "wrong"})) + 2
    count = (SIZE - 100) // one
    with open(path, "w") as f:
        step = per_line or count
        for start in range(0, count, step):
            labs = [{"labeller": f"p{i}", "verdict": "wrong"} for i in range(start, min(count, start + step))]
            f.write(_line(key, labs))
    return count


@pytest.mark.subprocess
@pytest.mark.parametrize("per_line", [None, 500], ids=["one-line", "500-a-line"])
def test_labels_import_of_8_mb_holds_the_documented_bound(store, key, tmp_path, per_line):
    src = tmp_path / "big.jsonl"
    count = _minimal_file(src, key, per_line)
    size = src.stat().st_size
    code = f"print(import_label_file(Store({str(store.root)!r}), {str(src)!r}, 'team'))"
    run = measure_peak(
        code,
        setup="from o3viz.store.golden import import_label_file\nfrom o3viz.store.store import Store",
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.strip() == str(count)
    # before, one line of every label: +248 MiB (31 bytes per input byte); now +28 MiB
    assert run.growth < 16 * MiB + 2 * size, (run.growth >> 20, size >> 20)


def _long(line: bytes) -> bytes:
    """The line with a first member that makes it longer than ``MAX_PARSED_LINE``: walked."""
    return line.replace(b"{", b'{"pad": "' + b"x" * (MAX_PARSED_LINE + 1) + b'", ', 1)


@pytest.mark.parametrize("walked", [False, True], ids=["parsed", "walked"])
def test_a_line_is_read_whatever_the_order_of_its_members(store, key, tmp_path, walked):
    src = tmp_path / "g.jsonl"
    rec = {
        "steps": [
            {"labels": [{"verdict": "wrong", "labeller": "a"}], "text": {"x": [1]}, "step": "0:1"},
            {"step": "0:2", "labels": [{"labeller": "b", "verdict": "correct", "note": "ok"}]},
        ],
        "question": [[{"labeller": "not a label"}]],
        "key": key,
    }
    line = json.dumps(rec).encode()
    src.write_bytes((_long(line) if walked else line) + b"\n")
    assert import_label_file(store, src, "team") == 2
    got = sorted((lab.step_id, lab.verdict, lab.note) for lab in all_labels(store, [key]))
    assert got == [("0:1", "wrong", ""), ("0:2", "correct", "ok")]


@pytest.mark.parametrize(
    "line, why",
    [
        (b'{"key": "k", "key": "j", "steps": []}', "'key' given twice"),
        (b'{"key": "k", "steps": [{"step": "0:1", "labels": []}]} {}', "extra data"),
        (b'{"key": "k", "steps": [{"step": "0:1"}]}', "'labels'"),
        (
            b'{"key": "k", "steps": [{"step": "0:1", "labels": [{"labeller": ["a"], "verdict": "wrong"}]}]}',
            "a list",
        ),
        (b'{"key": "k", "q": ' + b"[" * 100 + b"]" * 100 + b', "steps": []}', "nested deeper than 64"),
        (b'{"key": "k", "steps": [{"step": "x", "labels": []}]}', "not a golden-set record"),
    ],
)
def test_a_long_malformed_line_is_one_line_naming_it(line, why):
    with pytest.raises(UsageError, match="g.jsonl line 3: not a golden-set record") as err:
        list(golden_labels(_long(line), 3, "g.jsonl"))
    assert why in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 60_000 + b"]" * 60_000,
        b'{"key": "k", "steps": [{"step": "0:1", "labels": [{"labeller": {"a": 1}, "verdict": "wrong"}]}]}',
        b'{"key": "k", "steps": [{"step": "0:1", "labels": ["a"]}]}',
        b'{"key": "k", "steps": {"step": "0:1"}}',
    ],
)
def test_a_short_malformed_line_is_one_line_naming_it(line):
    with pytest.raises(UsageError, match="g.jsonl line 3: not a golden-set record"):
        list(golden_labels(line, 3, "g.jsonl"))


def test_a_million_one_character_lines_are_refused_in_one_line(store, key, tmp_path):
    src = tmp_path / "g.jsonl"
    src.write_bytes(b"x\n" * 1_000_000)
    with pytest.raises(UsageError, match="line 1: not a golden-set record"):
        import_label_file(store, src, "team")


def test_an_unknown_step_is_refused_before_any_label_is_added(store, key, tmp_path):
    src = tmp_path / "g.jsonl"
    good = [{"labeller": "a", "verdict": "wrong"}]
    src.write_text(_line(key, good) + _line(key, good, step="0:99"))
    with pytest.raises(UsageError, match=f"trace {key} has no step 0:99"):
        import_label_file(store, src, "team")
    assert all_labels(store) == []
