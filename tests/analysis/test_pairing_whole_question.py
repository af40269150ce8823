"""``pairing.py`` promises that different questions never share a key: two questions that share
their first 300 characters (the part the store's index shows) pair apart, through the whole
question's key (``question_hash``, the index's ``question_key`` column)."""

from __future__ import annotations

import pandas as pd

from o3viz.analysis.pairing import pair_frames, question_hash, question_key, record_mismatches

PRE = "Read the problem, reason step by step, and give the final answer in a box. " * 5
QUESTIONS = [PRE + "What is 7 + 3?", PRE + "What is 7 - 3?"]


def _side(tag: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "key": [f"{tag}0", f"{tag}1"],
            "name": [f"{tag}0", f"{tag}1"],
            "question": [" ".join(q.split())[:300] for q in QUESTIONS],  # as the index shows it
            "question_key": [question_hash(q) for q in QUESTIONS],
            "record": [1, 2],
            "line_hash": ["h1", "h2"],
        }
    )


def test_two_questions_sharing_300_characters_never_share_a_key():
    assert len(PRE) > 300 and QUESTIONS[0][:300] == QUESTIONS[1][:300]
    assert question_key(QUESTIONS[0]) != question_key(QUESTIONS[1])
    assert question_hash(QUESTIONS[0]) != question_hash(QUESTIONS[1])
    p = pair_frames(_side("a"), _side("b"), "question")
    assert len(p.rows) == 2 and (p.repeats_a, p.repeats_b) == (0, 0)
    assert list(zip(p.rows["key_a"], p.rows["key_b"], strict=True)) == [("a0", "b0"), ("a1", "b1")]
    assert p.rows["pair_key"].tolist() == [question_key(QUESTIONS[0][:300])] * 2, (
        "shown as the index shows it"
    )


def test_records_of_other_questions_behind_one_preamble_are_not_the_same_records():
    b = _side("b")
    b["question_key"] = b["question_key"][::-1].tolist()  # record 1 of B asks A's second question
    assert record_mismatches(_side("a"), b) == 2


def test_a_row_without_the_key_column_is_keyed_on_its_text():
    a, b = _side("a").drop(columns="question_key"), _side("b")
    b.loc[0, "question_key"] = None  # a row indexed before the column
    p = pair_frames(a, b, "question")
    assert len(p.rows) == 1 and p.repeats_a == 1, "clipped text: the old reading, no worse"
