"""The judge end to end against a real OpenAI-compatible server: ``transformers serve`` of the
embedded model on 127.0.0.1 (offline), asked through the endpoint client with ProcessBench's
prompt, from the library and from ``o3viz verify``. A 135M model rarely answers in the format:
what is tested is that every reply lands as strictly parsed verdicts (unsure when unparseable)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from o3viz.testing.builders import small_trace
from o3viz.trace import load_trace

pytest.importorskip("fastapi", reason="transformers serve needs fastapi (requirements-dev.txt)")
pytest.importorskip("openai", reason="transformers serve needs openai (requirements-dev.txt)")

pytestmark = [
    pytest.mark.server,
    pytest.mark.timeout(1800),  # server start + a few short requests on a loaded machine
]
# transformers serve reads the whole generation config from the request: max_new_tokens too
GREEDY = {
    "generation_config": '{"do_sample": false, "max_new_tokens": 24, "eos_token_id": 2, "pad_token_id": 2}'
}


def test_the_judge_asks_transformers_serve_and_parses_strictly(transformers_server):
    from o3viz.clients import endpoint_ask
    from o3viz.verify.verifiers import JudgeVerifier, Solution
    from o3viz.verify.verifiers.judge import parse_first_error, verdicts_of

    base_url, model_path = transformers_server
    ask = endpoint_ask(base_url, model_path, max_tokens=24, timeout=600, extra_body=GREEDY)
    sol = Solution("What is 2 + 3?", ["2 + 3 = 6.", "So the answer is 6."])
    # ProcessBench's prompt: the 135M model ends its reply at once (an empty reply): all unsure
    j = JudgeVerifier(ask, label=base_url).verify(sol)
    assert isinstance(j.info["reply"], str)
    assert j.verdicts == verdicts_of(parse_first_error(j.info["reply"], 2), 2)
    assert j.info["reply"].strip() or j.verdicts == ["unsure", "unsure"]
    # a prompt it continues: a real reply comes back and is parsed strictly, never guessed
    plain = "Problem: {problem}\n{tagged_response}\nThe first wrong paragraph is paragraph"
    j = JudgeVerifier(ask, label=base_url, template=plain).verify(sol)
    assert j.info["reply"].strip()
    assert j.verdicts == verdicts_of(parse_first_error(j.info["reply"], 2), 2)


def test_cli_verify_with_a_judge_adds_its_record(transformers_server, tmp_path):
    base_url, model_path = transformers_server
    path = small_trace().save(tmp_path / "t.o3trace.json")
    cmd = [sys.executable, "-m", "o3viz", "verify", str(path), "--verifier", "judge", "--base-url", base_url]
    cmd += ["--model", model_path, "-V", "max_tokens=16", "-V", f"extra_body={GREEDY_JSON}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    rec = load_trace(path).final.verdicts[0]
    assert rec.verifier == "judge" and rec.info["kind"] == "judge" and base_url in rec.info["endpoint"]
    assert len(rec.verdicts) == len(small_trace().final.steps)


GREEDY_JSON = json.dumps(GREEDY)
