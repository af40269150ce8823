"""Pluggable verifiers (issue 42): verdicts side by side in the trace (schema 4, save → load → ==,
old files load), the claim checker and code tests on the one interface, PRMs of both shapes (tiny
random models the tests save), the judge's strict parsing, the combination, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from o3viz.errors import ModelLoadError, TraceError, UsageError
from o3viz.paths import REPO_ROOT
from o3viz.testing.builders import small_trace
from o3viz.trace import SCHEMA_VERSION, Check, load_trace
from o3viz.trace.verdicts import VerdictRecord
from o3viz.verify.verifiers import (
    ClaimVerifier,
    CodeVerifier,
    CombinedVerifier,
    Judgement,
    JudgeVerifier,
    Solution,
    add_verdicts,
    list_verifiers,
    make_verifier,
    verify_all,
)
from o3viz.verify.verifiers.judge import judge_prompt, parse_first_error, verdicts_of

pytestmark = [pytest.mark.model, pytest.mark.subprocess]

SCHEMA = json.loads((REPO_ROOT / "docs" / "trace.schema.json").read_text())
WRONG = Solution(
    "Tom has 3 bags of 4 apples.", ["3 bags of 4 is 3*4 = 13 apples.", "He eats one.", "12 - 1 = 11"]
)


@pytest.fixture(scope="module")
def prm_dirs(tmp_path_factory):
    from o3viz.testing.prm import save_tiny_prm

    root = tmp_path_factory.mktemp("prm")
    return {shape: str(save_tiny_prm(root / shape, shape)) for shape in ("tag", "head")}


# The trace record -------------------------------------------------------------------------------


def test_two_verifiers_sit_side_by_side_and_round_trip(tmp_path, prm_dirs):
    t = small_trace()
    assert add_verdicts(t, ClaimVerifier()) == 1
    prm = make_verifier("prm", model=prm_dirs["tag"], device="cpu")
    assert add_verdicts(t, prm) == 1
    names = [v.verifier for v in t.final.verdicts]
    assert names == ["claims", "prm:tag"]
    back = load_trace(t.save(tmp_path / "v.o3trace.json"))
    assert back == t and back.schema_version == SCHEMA_VERSION == 5
    assert back.final.verdicts[1].info["kind"] == "prm" and len(back.final.verdicts[1].scores) == len(
        t.final.steps
    )
    jsonschema.validate(t.to_dict(), SCHEMA)


def test_adding_again_skips_and_redo_replaces_only_its_own_record():
    t = small_trace()
    add_verdicts(t, ClaimVerifier())
    other = VerdictRecord("mine", ["wrong"] * len(t.final.steps), info={"kind": "hand"})
    t.final.verdicts.append(other)
    assert add_verdicts(t, ClaimVerifier()) == 0  # resumable: already judged
    assert add_verdicts(t, ClaimVerifier(), redo=True) == 1
    assert [v.verifier for v in t.final.verdicts] == ["mine", "claims"] and t.final.verdicts[0] == other


def test_a_version_3_file_loads_without_verdicts():
    d = small_trace().to_dict()
    d["schema_version"] = 3
    t = load_trace(json.dumps(d).encode())
    assert t.schema_version == SCHEMA_VERSION and t.final.verdicts == []


@pytest.mark.parametrize(
    "record, message",
    [
        ({"verifier": "x", "verdicts": ["maybe", None]}, "must be one of ok, wrong, unsure"),
        ({"verifier": "x", "verdicts": ["ok"]}, "the round has 2 steps"),
        ({"verifier": "x", "verdicts": ["ok", "ok"], "scores": [0.1]}, "scores: has 1 items"),
        ({"verifier": "x", "verdicts": ["ok", "wrong"], "first_wrong": 0}, "disagrees with the verdicts"),
    ],
)
def test_bad_verdict_records_are_refused_in_one_line(record, message):
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = [record]
    with pytest.raises(TraceError, match=message):
        load_trace(json.dumps(d).encode())


def test_a_verifier_named_twice_in_a_round_is_refused():
    d = small_trace().to_dict()
    d["rounds"][-1]["verdicts"] = [{"verifier": "x", "verdicts": ["ok", "ok"]}] * 2
    with pytest.raises(TraceError, match="names a verifier twice"):
        load_trace(json.dumps(d).encode())


# Built-in verifiers ------------------------------------------------------------------------------


def test_the_claim_checker_finds_the_wrong_step_and_is_unsure_without_claims():
    j = ClaimVerifier().verify(WRONG)
    assert j.verdicts == ["wrong", "unsure", "ok"] and j.first_wrong == 0


def test_code_tests_judge_the_step_they_name_or_the_last():
    t = small_trace()
    rnd = t.final
    rnd.checks = [Check("test", "t1", "pass"), Check("test", "t2", "fail", step=0)]
    add_verdicts(t, CodeVerifier())
    assert rnd.verdicts[0].verdicts == ["wrong", "ok"]


def test_the_registry_lists_and_refuses_in_one_line():
    assert {"claims", "code_tests", "prm", "judge", "claims+prm"} <= {s.name for s in list_verifiers()}
    with pytest.raises(UsageError, match="no verifier named 'nope'"):
        make_verifier("nope")
    with pytest.raises(UsageError, match=r"needs -V model="):
        make_verifier("prm")
    with pytest.raises(UsageError, match=r"needs -V base_url="):
        make_verifier("judge")


# PRMs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["tag", "head"])
def test_a_prm_of_each_shape_scores_every_step_the_same_batched_or_alone(prm_dirs, shape):
    v = make_verifier("prm", model=prm_dirs[shape], device="cpu", batch_size=4)
    assert v.shape == shape and v.provenance["shape"] == shape
    sols = [WRONG, Solution("2+2?", ["2+2 = 4"]), Solution("q", ["a", "b", "c", "d", "e"])]
    batched = verify_all(v, sols)
    for sol, j in zip(sols, batched, strict=True):
        alone = v.verify(sol)
        assert len(j.scores) == len(sol.steps) and all(0 <= s <= 1 for s in j.scores)
        assert alone.scores == pytest.approx(j.scores, abs=1e-4)
        assert j.verdicts == ["wrong" if s < 0.5 else "ok" for s in j.scores]


def test_steps_past_the_prm_length_are_not_judged(prm_dirs):
    v = make_verifier("prm", model=prm_dirs["tag"], device="cpu")
    v.settings.max_length = 30
    j = v.verify(Solution("q", ["step " * 5] * 6))
    assert j.verdicts[0] is not None and j.verdicts[-1] is None and j.scores[-1] is None


def test_a_missing_prm_is_one_line_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="not in the local cache and HF_HUB_OFFLINE=1") as e:
        make_verifier("prm", model="nobody/no-such-prm-xyz")
    assert "\n" not in str(e.value)
    with pytest.raises(ModelLoadError, match="no such model folder"):
        make_verifier("prm", model=str(tmp_path / "absent"))


def test_combined_keeps_the_checkers_decisions_and_asks_the_prm_for_the_rest(prm_dirs):
    prm = make_verifier("prm", model=prm_dirs["head"], device="cpu")
    both = CombinedVerifier(ClaimVerifier(), prm)
    j, p = both.verify(WRONG), prm.verify(WRONG)
    assert j.verdicts[0] == "wrong" and j.verdicts[2] == "ok" and j.verdicts[1] == p.verdicts[1]
    assert both.name == "claims+prm:head" and both.provenance["then"]["kind"] == "prm"


# The judge ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("Paragraph 1 miscounts. The earliest error is \\boxed{1}.", 1),
        ("No errors. \\boxed{-1}", -1),
        ("\\boxed{ 2 }", 2),
        ("First I thought \\boxed{1} ... no wait, \\boxed{2}", None),  # contradicts itself
        ("\\boxed{1} and again \\boxed{1}", 1),
        ("the error is in paragraph 1", None),  # no box
        ("\\boxed{}", None),
        ("\\boxed{one}", None),
        ("\\boxed{1.5}", None),
        ("\\boxed{7}", None),  # past the last paragraph
        ("\\boxed{-2}", None),
        ("", None),
    ],
)
def test_judge_replies_are_parsed_strictly(reply, expected):
    assert parse_first_error(reply, 3) == expected


def test_an_unparseable_reply_is_unsure_never_a_guess():
    assert verdicts_of(None, 3) == ["unsure"] * 3
    assert verdicts_of(-1, 3) == ["ok"] * 3
    assert verdicts_of(1, 3) == ["ok", "wrong", None]
    j = JudgeVerifier(lambda p: "I think paragraph 0.").verify(WRONG)
    assert j.verdicts == ["unsure"] * 3 and j.info["parsed"] is False


def test_the_judge_prompt_is_processbenchs():
    p = judge_prompt(WRONG)
    assert p.startswith("The following is a math problem and a solution (split into paragraphs")
    assert "<paragraph_0>\n3 bags of 4 is 3*4 = 13 apples.\n</paragraph_0>" in p and "<paragraph_2>" in p
    assert p.endswith("Please put your final answer (i.e., the index) in \\boxed{}.")


# The CLI -----------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "o3viz", "verify", *args], capture_output=True, text=True)


def test_cli_adds_verdicts_to_a_file_and_refuses_bad_use_in_one_line(tmp_path, prm_dirs):
    path = small_trace().save(tmp_path / "t.o3trace.json")
    r = _cli(str(path), "--verifier", "claims")
    assert r.returncode == 0, r.stderr
    r = _cli(str(path), "--verifier", "prm", "-V", f"model={prm_dirs['tag']}", "-V", "device=cpu")
    assert r.returncode == 0, r.stderr
    assert [v.verifier for v in load_trace(path).final.verdicts] == ["claims", "prm:tag"]
    r = _cli(str(path), "--verifier", "judge")
    assert r.returncode != 0 and r.stderr.strip().count("\n") == 0 and "base_url" in r.stderr


def test_a_judgement_of_the_wrong_length_is_refused():
    class Short:
        name, provenance = "short", {}

        def verify(self, sol):
            return Judgement(["ok"])

    with pytest.raises(ValueError, match="gave 1 verdicts for 2 steps"):
        add_verdicts(small_trace(), Short())


def test_cli_judges_a_dataset_in_place_and_resumes(tmp_path):
    from o3viz.store.store import Store

    store = Store()
    store.add(small_trace(), dataset="d", name="t0")
    store.add(_other_trace(), dataset="d", name="t1")
    r = _cli("--dataset", "d", "--verifier", "claims")
    assert r.returncode == 0, r.stderr
    assert "2 trace(s) of 'd' judged, 0 already judged" in r.stdout
    r = _cli("--dataset", "d", "--verifier", "claims")
    assert "0 trace(s) of 'd' judged, 2 already judged" in r.stdout
    from o3viz.store.query import Query

    stored = [Store().trace(k) for (k,) in Store().select(Query(dataset=["d"]), ("key",))]
    assert len(stored) == 2 and all(t.final.verdicts[0].verifier == "claims" for t in stored)


def _other_trace():
    t = small_trace()
    t.task.question = "What is 17*24?"
    return t


def test_a_prm_whose_head_is_remote_code_is_refused_unless_trusted(prm_dirs, tmp_path):
    import shutil

    folder = shutil.copytree(prm_dirs["head"], tmp_path / "remote")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["architectures"] = ["Qwen2ForProcessRewardModel"]
    cfg["auto_map"] = {"AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelLoadError, match="pass -V trust_remote_code=true") as e:
        make_verifier("prm", model=str(folder), device="cpu")
    assert "\n" not in str(e.value)
