"""``o3viz app``: starts the app from the package, adds the traces it is given to the store and
prints the URL that opens the first in Inspect; a taken port or a missing file is one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from o3viz.store.store import Store
from o3viz.testing.browser import free_port

pytestmark = [pytest.mark.server, pytest.mark.subprocess]

SAMPLE = "gsm8k_word_problem.o3trace.json.gz"


def _o3viz(*args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "o3viz", *args], capture_output=True, text=True, env=env, timeout=120, **kw
    )


def test_version_names_the_package():
    import o3viz

    out = _o3viz("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"o3viz {o3viz.__version__}"


def test_app_adds_the_trace_serves_health_and_prints_the_inspect_url(tmp_path):
    from o3viz.paths import samples_dir

    store_dir, port = tmp_path / "store", free_port()
    env = {**os.environ, "O3VIZ_HOME": str(tmp_path / "elsewhere")}
    cmd = [sys.executable, "-m", "o3viz", "app", str(samples_dir() / SAMPLE), "--store", str(store_dir)]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline, healthy = time.monotonic() + 90, False
        while time.monotonic() < deadline and proc.poll() is None and not healthy:
            try:
                healthy = (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).status == 200
                )
            except OSError:
                time.sleep(0.5)
        assert healthy, proc.stderr.read() if proc.poll() is not None else "no health answer in 90 s"
        first = proc.stdout.readline() + proc.stdout.readline()
        assert "added 1 trace to the store" in first and "serving this machine only at" in first
        key = first.split("/inspect?trace=")[1].split()[0]
        assert Store(store_dir).trace(key).final is not None
        assert not (tmp_path / "elsewhere").exists()  # --store wins over $O3VIZ_HOME
        with socket.socket() as s:  # the app binds 127.0.0.1 only
            assert s.connect_ex(("127.0.0.1", port)) == 0
    finally:
        proc.terminate()
        proc.wait(30)
    # stopping ``o3viz app`` stops its server: nothing is left listening on the port
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the app server outlived o3viz app on port {port}")


def test_a_taken_port_and_a_missing_file_are_one_line_each(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = _o3viz("app", "--store", str(tmp_path), "--port", str(port), "--no-browser")
    assert out.returncode == 2 and out.stderr.strip() == (
        f"o3viz: error: port {port} on 127.0.0.1 is taken; pass --port with a free one"
    )
    out = _o3viz("app", str(tmp_path / "nope.o3trace.json"), "--no-browser")
    assert out.returncode == 2 and "no such file or folder" in out.stderr and out.stderr.count("\n") == 1
    (tmp_path / "empty").mkdir()
    out = _o3viz("app", str(tmp_path / "empty"), "--no-browser")
    assert out.returncode == 2 and "no trace files" in out.stderr
