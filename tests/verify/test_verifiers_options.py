"""A verifier's options are its factory's keyword arguments (``VERIFIERS``, issue 52): the CLI
takes them as ``-V key=value`` (``--model``/``--base-url`` as aliases), the old options object is
refused in one line naming the new way, and ``claims+prm`` hands its other options on."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.errors import O3vizError, UsageError
from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace
from o3viz.verify.verifiers import (
    VERIFIERS,
    ClaimVerifier,
    CombinedVerifier,
    make_verifier,
    register_verifier,
    unregister_verifier,
)

pytestmark = [pytest.mark.light]


def test_each_verifier_declares_its_own_options():
    opts = {p.name: [o.name for o in p.options] for p in VERIFIERS}
    assert opts["claims"] == [] and opts["code_tests"] == []
    assert opts["prm"] == [
        "model",
        "device",
        "dtype",
        "batch_size",
        "shape",
        "threshold",
        "trust_remote_code",
    ]
    assert opts["judge"] == ["base_url", "model", "max_tokens", "request_timeout", "budget_s", "extra_body"]
    assert opts["claims+prm"] == ["then"] and VERIFIERS.get("claims+prm").passes_on


def test_combined_runs_the_verifier_then_names_with_the_other_options():
    v = make_verifier("claims+prm", then="claims")
    assert isinstance(v, CombinedVerifier) and v.name == "claims+claims"
    with pytest.raises(UsageError, match="verifier 'claims' has no option 'threshold'"):
        make_verifier("claims+prm", {"then": "claims", "threshold": "0.4"})
    with pytest.raises(UsageError, match=r"verifier 'prm' needs -V model="):
        make_verifier("claims+prm")


def test_bad_option_values_are_refused_before_anything_loads():
    with pytest.raises(UsageError, match="option 'threshold' must be float, not 'high'"):
        make_verifier("prm", {"model": "./nowhere", "threshold": "high"})
    with pytest.raises(UsageError, match="option 'shape' must be one of auto, tag, head"):
        make_verifier("prm", model="./nowhere", shape="row")
    with pytest.raises(UsageError, match="threshold must be a number from 0 to 1"):
        make_verifier("prm", model="./nowhere", threshold=1.5)
    with pytest.raises(UsageError, match="extra_body must be a JSON object, not a list"):
        make_verifier("judge", base_url="http://127.0.0.1:9/v1", model="m", extra_body="[1]")
    with pytest.raises(O3vizError, match="NaN is not allowed"):
        make_verifier("judge", base_url="http://127.0.0.1:9/v1", model="m", extra_body='{"t": NaN}')


def test_the_old_options_object_and_old_factories_get_one_line_naming_the_new_way():
    class VerifierOptions:  # what callers passed before
        model = "m"

    with pytest.raises(UsageError, match=r"as a dict or keywords: make_verifier\(name, model=\.\.\."):
        make_verifier("prm", VerifierOptions())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="keyword-only arguments .* not a positional 'o'"):
        register_verifier("old_style", lambda o: ClaimVerifier(), "built from an options object")
    assert "old_style" not in VERIFIERS


def test_a_registered_verifier_with_an_option_runs_from_the_cli(tmp_path, capsys):
    def strict_claims(*, strict: bool = False) -> ClaimVerifier:
        """strict: name it strict"""
        return ClaimVerifier(name="strict" if strict else "lenient")

    register_verifier("strict_claims", strict_claims, "the claim checker under a chosen name")
    try:
        assert "-V strict=bool (default False): name it strict" in VERIFIERS.describe()
        path = small_trace().save(tmp_path / "t.o3trace.json")
        assert main(["verify", str(path), "--verifier", "strict_claims", "-V", "strict=true"]) == 0
        assert [v.verifier for v in load_trace(path).final.verdicts] == ["strict"]
    finally:
        unregister_verifier("strict_claims")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--verifier", "claims", "--model", "m"], "verifier 'claims' has no option 'model'"),
        (["--verifier", "claims", "-V", "threshold"], "-V takes key=value, not 'threshold'"),
        (
            ["--verifier", "judge", "--model", "m", "-V", "model=n"],
            "--model and -V model= give the same option",
        ),
        (["--verifier", "judge", "--model", "m"], "verifier 'judge' needs -V base_url="),
        (["--verifier", "nope"], "no verifier named 'nope'; the verifiers are claims, code_tests, prm"),
    ],
)
def test_the_cli_refuses_bad_options_in_one_line(tmp_path, capsys, argv, says):
    path = small_trace().save(tmp_path / "t.o3trace.json")
    assert main(["verify", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
