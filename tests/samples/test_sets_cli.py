"""Sample sets in the store (save, list, read, grow; refusals), grouping imports by question,
``o3viz tree NAME [--json]`` and its JSON shape, the view data and figure, and bad input to
``o3viz sample`` as one line before any model loads."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.errors import UsageError
from o3viz.figures.sample_tree import SHARE_SCALE, sample_tree_figure
from o3viz.samples.group import import_texts_as_set, sets_from_dataset
from o3viz.samples.sets import grow_set, list_sets, read_set, save_set
from o3viz.samples.tree import build_tree
from o3viz.samples.view_data import tree_view_data
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set, text_sample

pytestmark = [pytest.mark.light]


@pytest.fixture
def store():
    return Store()  # under the test's private O3VIZ_HOME (tests/conftest.py)


def test_a_set_is_stored_listed_read_back_in_order_and_grown(store):
    save_set(store, "muffins", split_set(2, 2), {"temperature": 0.7, "requested": 4})
    assert [(s.name, s.n) for s in list_sets(store)] == [("muffins", 4)]
    s = read_set(store, "muffins")
    assert s.n == 4 and s.info["temperature"] == 0.7 and not s.stopped
    assert [t.final.answer for t in s.traces] == ["18", "18", "14", "14"]
    grown = grow_set(store, "muffins", split_set(1, 0))
    assert grown.n == 5 and grown.traces[-1].info["sample_set"]["member"] == 4


@pytest.mark.parametrize(
    ("traces", "says"),
    [
        (lambda: split_set(1, 0), "a set of one sample"),
        (lambda: [text_sample("So 18."), text_sample("So 3.", question="Another question?")], "one question"),
    ],
)
def test_a_set_of_one_sample_or_of_two_questions_is_refused(store, traces, says):
    with pytest.raises(UsageError, match=says):
        save_set(store, "bad", traces())


def test_a_taken_name_is_refused(store):
    save_set(store, "taken", split_set(1, 1))
    with pytest.raises(UsageError, match="already has a dataset"):
        save_set(store, "taken", split_set(1, 1))


def test_a_dataset_is_grouped_into_one_set_per_repeated_question(store):
    texts = ["So 12 * 4 = 48 and 18 are left.", "So 12 + 4 = 16 and 14 are left.", "Then 18."]
    for t in [*(text_sample(x) for x in texts), text_sample("So 3.", question="A lone question?")]:
        store.add(t, source="import", dataset="mixed")
    made = sets_from_dataset(store, "mixed")
    assert [(s.name, s.n) for s in made] == [("mixed:q1", 3)]
    assert store.count() == 7  # the dataset is left as it was; the set holds copies
    assert sets_from_dataset(store, "mixed", prefix="again")[0].n == 3


def test_thinking_texts_become_one_set(store, shared_data):
    paths = sorted((shared_data / "traces" / "thinking_texts").glob("*.txt"))[:5]
    s = import_texts_as_set(store, paths, "ropes", question="Two ropes burn 60 minutes; measure 20.")
    assert s.n == 5 and {t.provenance.model_id for t in s.traces} == {p.stem for p in paths}


def test_tree_json_has_the_issue_shape(store, capsys):
    save_set(store, "split", split_set(3, 3))
    assert main(["tree", "split", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["majority"]) >= {"answer", "share"}
    root = out["nodes"][0]
    assert root["parent"] is None and root["samples"] == 6 and root["answers"] == {"18": 3, "14": 3}
    for n in out["nodes"]:
        assert {"id", "parent", "samples", "answers", "reference_share", "fork"} <= set(n)
        assert isinstance(n["fork"], bool)
    assert [n["fork"] for n in out["nodes"]].count(True) == 1


def test_tree_prints_the_fork_with_both_sides_and_the_answers(store, capsys):
    save_set(store, "split", split_set(4, 3))  # (3 and 3 is a tie: test_tree_cli_output.py)
    assert main(["tree", "split"]) == 0
    out = capsys.readouterr().out
    assert "fork 1" in out and "12 * 4 = 48" in out and "12 + 4 = 16" in out
    assert "answers: 18 × 4, 14 × 3" in out and "majority: 18 (57%" in out


def test_an_unknown_set_is_one_line(capsys):
    assert main(["tree", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_view_data_lays_out_left_to_right_and_the_figure_keeps_a_fixed_scale():
    tree = build_tree(split_set(3, 3, tail=4))
    data = tree_view_data(tree)
    assert [n["x"] for n in data["nodes"]] == [0, 1, 2, 2]
    assert data["nodes"][2]["label"].startswith("7 steps:")
    assert [e["width"] for e in data["edges"]] == [6, 3, 3]
    assert {s["reference_share"] for s in data["forks"][0]["sides"]} == {0.0, 1.0}
    fig = sample_tree_figure(tree)
    marker = fig.data[-1].marker
    assert (marker.cmin, marker.cmax) == (0.0, 1.0) and marker.colorbar is not None
    assert [list(x) for x in marker.colorscale] == SHARE_SCALE
    assert "12 * 4 = 48" in " ".join(fig.data[-1].hovertext)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--n", "300"], "--n 300: give a whole number from 1 to 256"),
        (["--n", "1"], "a set of one sample"),
        (["--temperature", "nan"], "--temperature nan"),
        (["--temperature", "-1"], "--temperature -1.0"),
        (["--temperature", "0"], "every sample is the same"),
        (["--max-new-tokens", "0"], "--max-new-tokens 0"),
        (["--set", "bad name!"], "set name"),
        (["--reference", "  "], "--reference: give the answer"),
    ],
)
def test_bad_input_is_one_line_before_any_model_loads(monkeypatch, capsys, args, says):
    import o3viz.model

    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(["sample", "--prompt", "What is 7 + 5?", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_reference_goes_with_a_free_prompt_not_a_task(monkeypatch, capsys):
    import o3viz.model

    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(["sample", "--task", "gsm8k:3", "--reference", "5"]) == 2
    assert "a task (--task) carries its own reference" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--firm-up", "2"], "--firm-up needs --set NAME"),
        (["--firm-up", "0", "--set", "split"], "--firm-up 0: give 1 to 32"),
        (["--firm-up", "2", "--set", "split", "--splits", "0"], "--splits 0: give 1 to 16"),
        (["--firm-up", "2", "--set", "nope"], "nope"),
    ],
)
def test_firm_up_refusals_are_one_line_before_any_model_loads(store, monkeypatch, capsys, args, says):
    import o3viz.model

    save_set(store, "split", split_set(3, 3))
    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(["sample", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_a_set_whose_splits_are_all_decided_has_nothing_to_firm_up(store, monkeypatch, capsys):
    import o3viz.model

    save_set(store, "split", split_set(3, 3))  # its one split is a fork
    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: pytest.fail("a model was loaded"))
    assert main(["sample", "--firm-up", "2", "--set", "split"]) == 0
    assert "no undecided split" in capsys.readouterr().out
    assert read_set(store, "split").n == 6
