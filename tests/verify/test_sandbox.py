"""The sandbox's promises, checked from inside: fresh directory, clean environment, unprivileged
user, limits, network, and that describe_isolation tells the truth about each mode."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import tempfile

import pytest

from o3viz.errors import UsageError
from o3viz.verify.code import verify_code
from o3viz.verify.sandbox.run import (
    ISOLATION_MODES,
    SandboxLimits,
    available_isolation,
    describe_isolation,
    resolve_isolation,
    run_sandboxed,
)

pytestmark = [pytest.mark.subprocess]

WORKING = available_isolation()
MODES = [
    pytest.param(
        mode, marks=pytest.mark.skipif(mode not in WORKING, reason=f"{mode} does not work on this machine")
    )
    for mode in ISOLATION_MODES
]


def _value(code: str, expr: str, mode: str, **limits):
    """Evaluate expr after code in the candidate's sandbox; (status, repr of the plain value or message)."""
    job = {
        "candidate_code": f"{code}\n\ndef _probe():\n    return {expr}\n",
        "test_module": "",
        "entry_point": "_probe",
        "candidate_name": "candidate",
        "scope": "module",
    }
    job["steps"] = [{"src": "candidate()", "expr": True}]
    run = run_sandboxed(job, isolation=mode, limits=SandboxLimits(**limits))
    end = next(r for r in run.records if r.get("k") == "end")
    return end["s"], end.get("v", end.get("m"))


def test_describe_isolation_says_what_each_mode_does_not_stop():
    for mode in ISOLATION_MODES:
        assert "Not stopped:" in describe_isolation(mode)
    assert "network access" in describe_isolation("rlimits")
    with pytest.raises(UsageError, match="unknown mode"):
        describe_isolation("docker")


def test_unknown_isolation_mode_is_a_usage_error():
    with pytest.raises(UsageError, match="isolation: unknown mode 'chroot'"):
        resolve_isolation("chroot")


@pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
def test_auto_picks_bubblewrap_when_it_is_installed():
    assert resolve_isolation("auto") == "bubblewrap"
    assert verify_code("def f():\n    return 1\n", ["assert f() == 1"]).isolation == "bubblewrap"


@pytest.mark.parametrize("mode", MODES)
def test_code_runs_in_a_fresh_empty_directory_that_is_removed_after(mode):
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), f"o3viz-sbx-{os.getpid()}-*")))
    code = "import os\nlisted = os.listdir('.')\nopen('mine.txt', 'w').write('x')\n"
    status, value = _value(code, "(listed, os.listdir('.'), os.getcwd())", mode)
    assert status == "pass"
    listed, after_write, cwd = eval(value)  # a repr of plain literals from our own runner
    assert listed == [] and after_write == ["mine.txt"]
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), f"o3viz-sbx-{os.getpid()}-*"))) == before
    if mode != "bubblewrap":
        assert not os.path.exists(cwd)


@pytest.mark.parametrize("mode", MODES)
def test_environment_is_scrubbed(mode, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    status, value = _value("import os", "sorted(os.environ)", mode)
    assert status == "pass"
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "PYTHONHASHSEED", "PYTHONSAFEPATH"}
    allowed |= {"PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING"}  # PWD: bwrap sets it on --chdir
    assert set(eval(value)) <= allowed


@pytest.mark.parametrize("mode", MODES)
def test_code_runs_as_an_unprivileged_user(mode):
    status, value = _value("import os", "(os.getuid(), os.geteuid())", mode)
    uid, euid = eval(value)
    assert status == "pass" and uid != 0 and euid != 0
    if mode == "bubblewrap":
        assert uid == 65534


@pytest.mark.parametrize("mode", MODES)
def test_memory_limit_is_enforced(mode):
    code = "def grab():\n    return len(bytearray(300 * 2**20))\n"
    assert _value(code, "grab()", mode, memory_mb=1024) == ("pass", str(300 * 2**20))
    status, message = _value(code, "grab()", mode, memory_mb=200)
    assert status == "error" and "MemoryError" in message


@pytest.mark.parametrize("mode", MODES)
def test_file_size_limit_is_enforced(mode):
    code = "def write(n):\n    with open('big', 'wb') as fh:\n        fh.write(b'x' * n)\n    return n\n"
    assert _value(code, "write(2**20)", mode, file_size_mb=2)[0] == "pass"
    status, message = _value(code, "write(4 * 2**20)", mode, file_size_mb=2)
    assert status == "error" and "File too large" in message


@pytest.mark.parametrize("mode", MODES)
def test_network_matches_what_describe_isolation_says(mode):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        "def connect(port):\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=2).close()\n"
        "        return 'connected'\n"
        "    except OSError as exc:\n"
        "        return 'refused'\n"
    )
    try:
        status, value = _value(code, f"connect({port})", mode)
    finally:
        listener.close()
    assert status == "pass"
    assert value == ("'connected'" if mode == "rlimits" else "'refused'")
    assert ("network access" in describe_isolation(mode)) == (mode == "rlimits")


def test_hash_seed_is_fixed_so_verdicts_do_not_depend_on_set_order():
    code = "order = list({'apple', 'pear', 'fig', 'kiwi', 'plum'})\n"
    first = _value(code, "order", WORKING[0])
    assert all(_value(code, "order", WORKING[0]) == first for _ in range(3))


def test_verdict_records_the_interpreter_and_output_caps():
    code = "print('y' * 100000)\ndef f():\n    return 1\n"
    verdict = verify_code(code, ["assert f() == 1"], limits=SandboxLimits(output_cap=1000))
    assert verdict.passed and verdict.stdout == "y" * 1000 and verdict.stdout_truncated
    assert verdict.info["python"].count(".") == 2


def test_cpu_limit_ends_a_busy_loop_as_a_timeout():
    code = "def f():\n    while True:\n        pass\n"
    verdict = verify_code(code, ["assert f() == 1"], timeout_s=20, limits=SandboxLimits(cpu_s=1))
    assert not verdict.timed_out  # the wall clock did not fire: RLIMIT_CPU did
    assert verdict.results[0].status == "timeout" and "CPU time limit" in verdict.results[0].message
