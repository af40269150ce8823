"""Questions are keyed on their whole text wherever a key is built: the index keeps the whole
question's key (``question_key``) beside its clipped text, and pairing two datasets and grouping a
dataset into sample sets compare that key. Before, both read the 300 characters the index keeps:
two problems behind one long preamble paired as one (Compare counted a pair too many, and a repeat)
and ``--group-dataset`` put them in one group and then refused the whole run."""

from __future__ import annotations

import sqlite3

from o3viz.analysis.paired import PairedCompareRequest, Side
from o3viz.analysis.pairing import question_hash
from o3viz.samples.group import sets_from_dataset
from o3viz.store.index import QUESTION_CHARS
from o3viz.store.paired import compare_datasets
from o3viz.store.store import STORE_SCHEMA, Store
from o3viz.testing.sample_sets import text_sample

PREAMBLE = "Solve the problem below. Put the final answer in \\boxed{}, and show each step of your work. " * 6
QUESTIONS = [PREAMBLE + "What is 7 + 3?", PREAMBLE + "What is 7 - 3?", "Short and whole: what is 2 + 2?"]


def _dataset(store: Store, name: str, questions: list[str], copies: int = 1) -> list[str]:
    return [
        store.add(
            text_sample(f"So the answer is {i}. ({name} {c})", question=q, reference=None),
            dataset=name,
            name=f"q{i}",
        )
        for i, q in enumerate(questions)
        for c in range(copies)
    ]


def test_two_questions_sharing_their_first_300_characters_have_two_keys(tmp_path):
    assert len(PREAMBLE) > QUESTION_CHARS + 100
    store = Store(tmp_path / "home")
    keys = _dataset(store, "a", QUESTIONS)
    rows = [store.row(k) for k in keys]
    assert rows[0]["question"] == rows[1]["question"], "the shown question is clipped"
    assert [r["question_key"] for r in rows] == [question_hash(q) for q in QUESTIONS]
    assert len({r["question_key"] for r in rows}) == 3


def test_compare_pairs_each_question_once(tmp_path):
    store = Store(tmp_path / "home")
    _dataset(store, "a", QUESTIONS)
    _dataset(store, "b", QUESTIONS)
    r = compare_datasets(store, PairedCompareRequest(Side("a"), Side("b"), key_by="question"))
    assert r.n == 3 and (r.pairing.repeats_a, r.pairing.repeats_b) == (0, 0)
    assert (r.pairing.n_unpaired_a, r.pairing.n_unpaired_b) == (0, 0)
    assert sorted(zip(r.rows["name_a"], r.rows["name_b"], strict=True)) == [
        ("q0", "q0"),
        ("q1", "q1"),
        ("q2", "q2"),
    ]


def test_grouping_a_dataset_makes_one_set_per_whole_question(tmp_path):
    store = Store(tmp_path / "home")
    _dataset(store, "g", QUESTIONS[:2], copies=2)
    made = sets_from_dataset(store, "g")
    assert [s.n for s in made] == [2, 2]
    assert [s.question for s in made] == QUESTIONS[:2]


def _as_schema_5(store: Store) -> None:
    """The index as an o3viz before the key columns wrote it."""
    store.close()
    db = sqlite3.connect(store.db_path)
    db.execute("DROP INDEX IF EXISTS traces_question_key")
    for name in ("question_key", "replaces"):
        db.execute(f"ALTER TABLE traces DROP COLUMN {name}")
    db.execute("UPDATE meta SET value = '5' WHERE name = 'schema'")
    db.commit()
    db.close()


def test_an_older_index_gains_the_keys_and_its_clipped_rows_are_keyed_from_the_files(tmp_path):
    store = Store(tmp_path / "home")
    a = _dataset(store, "a", QUESTIONS)
    _dataset(store, "b", QUESTIONS)
    _as_schema_5(store)
    again = Store(tmp_path / "home")
    version = again.conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()[0]
    assert int(version) == STORE_SCHEMA == 6
    assert [again.row(k)["question_key"] for k in a] == [None, None, question_hash(QUESTIONS[2])]
    r = compare_datasets(again, PairedCompareRequest(Side("a"), Side("b"), key_by="question"))
    assert r.n == 3 and r.pairing.repeats_a == 0
    assert [again.row(k)["question_key"] for k in a] == [question_hash(q) for q in QUESTIONS], "stored"
