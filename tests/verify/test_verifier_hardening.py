"""Verifiers against hostile numbers and replies (red-team findings 7 and 8): a PRM score that is
NaN (a float16 overflow) is never ``ok`` and the trace still saves, and the judge reads any reply
in one linear pass: an open ``\\boxed{`` with 20 KB of blanks once backtracked for days, and a
5,000-digit index raised from ``int()``."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from o3viz.errors import UsageError
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace
from o3viz.verify.verifiers import Judgement, JudgeVerifier, Solution, add_verdicts
from o3viz.verify.verifiers.judge import (
    MAX_BOX_CHARS,
    MAX_REPLY_CHARS,
    boxed_contents,
    parse_first_error,
    read_reply,
)
from o3viz.verify.verifiers.prm import PrmSettings, score_verdicts

NAN, INF = float("nan"), float("inf")
SOL = Solution("q", ["a", "b", "c"])


# Non-finite scores -------------------------------------------------------------------------------


def test_a_nan_score_is_never_ok_and_says_why():
    j = score_verdicts([0.9, NAN, 0.2, None], 0.5, "float16")
    assert j.verdicts == ["ok", "unsure", "wrong", None] and j.scores == [0.9, None, 0.2, None]
    assert j.info["note"] == "score is NaN at step 1 (try -V dtype=float32)"


def test_infinite_scores_are_unsure_and_float32_gets_no_dtype_hint():
    j = score_verdicts([INF, -INF], 0.5, "float32")
    assert j.verdicts == ["unsure", "unsure"] and j.info["note"] == "score is infinite at steps 0, 1"


@pytest.mark.parametrize("threshold", [NAN, INF, -0.1, 1.5])
def test_a_threshold_no_score_compares_with_is_refused_in_one_line(threshold):
    with pytest.raises(UsageError, match="threshold must be a number from 0 to 1"):
        PrmSettings(threshold=threshold).validate()


class _Scores:
    """A verifier of any scores (a plug-in the registry does not know): ``ok`` for each."""

    provenance = {"kind": "test"}

    def __init__(self, scores, name="scores"):
        self.scores, self.name = scores, name

    def verify(self, sol):
        return Judgement(["ok"] * len(sol.steps), list(self.scores))


@pytest.mark.parametrize("bad", [NAN, INF, 10**400, True], ids=["nan", "inf", "1e400", "bool"])
def test_any_verifiers_non_finite_score_makes_its_step_unsure_and_the_trace_saves(tmp_path, bad):
    t = small_trace()
    add_verdicts(t, _Scores([bad, 0.7]))
    rec = t.final.verdicts[0]
    assert rec.verdicts == ["unsure", "ok"] and rec.scores == [None, 0.7] and "note" in rec.info
    assert load_trace(t.save(tmp_path / "t.o3trace.json")) == t  # before: ValueError from json


def test_a_long_plug_in_name_is_stored_cut_and_still_found_again():
    t = small_trace()
    v = _Scores([0.1, 0.2], name="v" * 1000)
    assert add_verdicts(t, v) == 1 and len(t.final.verdicts[0].verifier) == 200
    assert add_verdicts(t, v) == 0  # the cut name is the one looked up: no second record


@pytest.fixture(scope="module")
def nan_prm(tmp_path_factory):
    """A tiny tag-shaped PRM whose LM head is NaN: every score it gives is NaN."""
    import torch
    from transformers import AutoModelForCausalLM

    from o3viz.testing.prm import save_tiny_prm

    folder = save_tiny_prm(tmp_path_factory.mktemp("prm") / "nan", "tag")
    model = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        model.get_output_embeddings().weight.fill_(math.nan)
    model.save_pretrained(folder)
    return str(folder)


@pytest.mark.model
def test_a_prm_that_scores_nan_leaves_steps_unsure_and_the_trace_saves(nan_prm, tmp_path):
    from o3viz.verify.verifiers import make_verifier

    prm = make_verifier("prm", model=nan_prm, device="cpu")
    j = prm.verify(SOL)
    assert j.verdicts == ["unsure"] * 3 and j.scores == [None] * 3  # before: all "ok"
    assert j.info["note"] == "score is NaN at steps 0, 1, 2"  # float32 already: no dtype hint
    t = small_trace()
    add_verdicts(t, prm)
    back = load_trace(t.save(tmp_path / "t.o3trace.json"))
    assert back.final.verdicts[0].verdicts == ["unsure", "unsure"]


@pytest.mark.model
@pytest.mark.subprocess
def test_a_dataset_run_with_a_nan_prm_goes_on_to_every_trace(nan_prm):
    from o3viz.store.query import Query
    from o3viz.store.store import Store

    store = Store()
    for i in range(2):
        t = small_trace()
        t.task.question = f"What is 17*23, take {i}?"
        store.add(t, dataset="d", name=f"t{i}")
    cmd = [sys.executable, "-m", "o3viz", "verify", "--dataset", "d", "--verifier", "prm"]
    r = subprocess.run([*cmd, "--model", nan_prm, "-V", "device=cpu"], capture_output=True, text=True)
    assert r.returncode == 0 and "2 trace(s) of 'd' judged" in r.stdout, r.stderr[-800:]
    stored = [Store().trace(k) for (k,) in Store().select(Query(dataset=["d"]), ("key",))]
    assert [t.final.verdicts[0].verdicts for t in stored] == [["unsure", "unsure"]] * 2


# The judge's replies -----------------------------------------------------------------------------

KB20 = 20 * 1024


@pytest.mark.parametrize(
    "reply",
    [
        "\\boxed{" + " " * KB20,  # blanks and no closing brace: cubic backtracking before
        "\\boxed{ " + " \t\n" * (KB20 // 3) + "1",
        "\\boxed{" * (KB20 // 7),  # boxes opened, never closed
        "\\boxed{" + "{" * 10_000 + "}" * 10_000,  # 10,000 nested braces
        "\\boxed{" + "9" * 5000 + "}",  # int() raised ValueError before
        ("\\boxed{" + "{" * 60) * 300,
        "x" * (MAX_REPLY_CHARS + 10) + "\\boxed{",
    ],
    ids=[
        "open-blanks",
        "open-mixed-space",
        "open-boxes",
        "nested-braces",
        "5000-digits",
        "deep-boxes",
        "long",
    ],
)
def test_an_adversarial_reply_is_an_unparseable_verdict_not_an_exception(reply):
    first, why = read_reply(reply, 3)
    assert first is None and why.startswith("unparseable reply")
    j = JudgeVerifier(lambda p: reply).verify(SOL)
    assert j.verdicts == ["unsure"] * 3 and j.info["note"] == why and len(j.info["reply"]) <= 400


@pytest.mark.subprocess
def test_the_judge_parses_a_box_left_open_by_blanks_in_a_separate_process_quickly():
    """The one input that took days: run it where a hang cannot stop the suite."""
    code = (
        "from o3viz.verify.verifiers.judge import parse_first_error as p\n"
        "print(p('\\\\boxed{' + ' ' * 20480 + 'x', 3))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr[-500:]


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("\\boxed{-0}", None),  # neither -1 nor 0: never a guess
        ("\\boxed{ 1e3 }", None),
        ("\\boxed{1.0}", None),
        ("\\boxed{٢}", None),  # an Arabic-Indic two: int() reads it, an index is ASCII
        ("\\boxed{+1}", 1),
        ("\\boxed{\\boxed{2}}", 2),  # the inner box is read too
        ("\\boxed{1} and \\boxed{01}", 1),  # the same index twice
        ("\\boxed{1} " * 5000 + "\\boxed{2}", None),  # contradicts itself, read in full
        ("\\boxed{99999999999999999999}", None),  # too many digits for an index
        ("\\boxed{" + " " * (MAX_BOX_CHARS - 1) + "1}", 1),
        ("\\boxed{" + " " * MAX_BOX_CHARS + "1}", None),  # the box holds more than an index may
        ("x" * MAX_REPLY_CHARS + "\\boxed{2}", 2),  # the answer at the end of a long reply
    ],
    ids=[
        "minus-0",
        "1e3",
        "1.0",
        "arabic",
        "plus",
        "nested",
        "same-twice",
        "contradicts",
        "20-digits",
        "box-at-cap",
        "box-past-cap",
        "long-reply",
    ],  # fmt: skip
)
def test_edge_case_replies_are_read_strictly(reply, expected):
    assert parse_first_error(reply, 3) == expected


def test_each_box_is_read_once_and_at_most_a_bounded_length():
    assert boxed_contents("\\boxed{a}\\boxed{ b }\\boxed{") == ["a", "b", None]
    assert boxed_contents("\\boxed{" + "x" * (MAX_BOX_CHARS + 1) + "}") == [None]
    assert len(boxed_contents("\\boxed{1}" * 100_000)) == MAX_REPLY_CHARS // len("\\boxed{1}")


def test_a_reply_that_is_not_text_is_unsure():
    j = JudgeVerifier(lambda p: None).verify(SOL)  # type: ignore[arg-type, return-value]
    assert j.verdicts == ["unsure"] * 3 and j.info["parsed"] is False


def test_a_verifier_name_already_taken_is_refused_not_replaced():
    from o3viz.verify.verifiers import ClaimVerifier, make_verifier, register_verifier, unregister_verifier

    with pytest.raises(UsageError, match="verifier 'claims' is already registered"):
        register_verifier("claims", lambda: None, "a second claims")
    assert isinstance(make_verifier("claims"), ClaimVerifier)  # the first one still runs
    register_verifier("claims_copy", lambda: ClaimVerifier(), "a plug-in's own name")
    try:
        assert isinstance(make_verifier("claims_copy"), ClaimVerifier)
    finally:
        unregister_verifier("claims_copy")
