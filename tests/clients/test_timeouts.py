"""Issue 62, break 10: a large finite timeout (``1e10`` s passes ``math.isfinite`` but overflows
``socket.settimeout``) is refused in one line by the one check every timeout goes through
(``o3viz.clients.post.check_timeout``), at each entry point the red team used, against a live stub
server on 127.0.0.1 that would otherwise be asked: the answers probe's ``-V timeout``, ``o3viz
sample --request-timeout`` and the judge verifier's ``-V request_timeout``."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.clients import OpenAIBackend, check_timeout
from o3viz.clients.post import post
from o3viz.errors import UsageError
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported
from o3viz.store.store import Store
from o3viz.testing.builders import small_trace
from tests.answers.stub_server import Stub, completion

pytestmark = [pytest.mark.server]

SAYS = "give seconds above 0 and at most 86400 (a day)"


@pytest.fixture
def stub():
    s = Stub(lambda path, body: completion("7} The answer is 7."))
    yield s
    s.close()


def _one_line(capsys, name: str) -> None:
    err = capsys.readouterr().err.strip()
    assert f"{name} 1e+10: {SAYS}" in err and len(err.splitlines()) == 1, err


def test_the_answers_probe_refuses_a_timeout_of_1e10(stub, capsys):
    t = build_trace(Imported("test", "3 + 4 = 7.\n\nSo 7.", question="What is 3 + 4?"), reference="7")
    Store().add(t, source="import", dataset="d")
    argv = ["answers", "--dataset", "d", "--probe", "endpoint", "--base-url", stub.url, "--model", "m"]
    assert main([*argv, "-V", "timeout=1e10"]) == 2
    _one_line(capsys, "-V timeout")
    assert stub.bodies == []


def test_sample_refuses_a_request_timeout_of_1e10(stub, capsys):
    argv = ["sample", "--prompt", "What is 3 + 4?", "--n", "2", "--base-url", stub.url, "--model", "m"]
    assert main([*argv, "--request-timeout", "1e10"]) == 2
    _one_line(capsys, "--request-timeout")
    assert stub.bodies == []


def test_the_judge_refuses_a_request_timeout_of_1e10(stub, tmp_path, capsys):
    path = small_trace().save(tmp_path / "t.o3trace.json")
    argv = ["verify", str(path), "--verifier", "judge", "--base-url", stub.url, "--model", "m"]
    assert main([*argv, "-V", "request_timeout=1e10"]) == 2
    _one_line(capsys, "-V request_timeout")
    assert stub.bodies == []


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 86_401, True, "60"])
def test_the_one_check_refuses_what_no_socket_can_wait(bad):
    with pytest.raises(UsageError, match="give seconds above 0"):
        check_timeout(bad, "--t")
    with pytest.raises(UsageError, match="the request timeout"):
        OpenAIBackend("http://127.0.0.1:9/v1", "m", timeout=bad)
    with pytest.raises(UsageError, match="the request's deadline"):
        post("http://127.0.0.1:9/v1", b"{}", {}, deadline_s=bad, limit=10)


def test_a_day_is_still_a_timeout(stub):
    assert check_timeout(86_400, "--t") == 86_400.0
    reply = post(stub.url + "/completions", b"{}", {}, deadline_s=86_400, limit=1 << 20)
    assert reply.status == 200
