"""The server's safe default: this machine only, XSRF protection on, for `make run` and for a bare
`streamlit run app.py` (which reads .streamlit/config.toml)."""

from __future__ import annotations

import shutil
import subprocess
import tomllib

import pytest

from o3viz.paths import REPO_ROOT

pytestmark = [pytest.mark.server, pytest.mark.subprocess]


def test_streamlit_config_binds_localhost_with_xsrf_protection():
    server = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server["address"] == "127.0.0.1" and server["enableXsrfProtection"] is True


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_serves_127_0_0_1_unless_asked_for_a_network():
    """`make run` is `o3viz app` with the Makefile's ADDRESS (127.0.0.1 unless asked), and `o3viz app`
    starts Streamlit bound to that address with XSRF protection on."""
    from o3viz.cli.app import streamlit_command

    def dry(*extra: str) -> str:  # -n prints the commands without running any
        out = subprocess.run(["make", "-n", "run", *extra], cwd=REPO_ROOT, capture_output=True, text=True)
        lines = out.stdout.replace("\\\n", " ").splitlines()  # join continued lines
        return next(line for line in lines if "o3viz app" in line)

    assert "--host 127.0.0.1" in dry()
    assert "--host 0.0.0.0" in dry("ADDRESS=0.0.0.0")
    cmd = " ".join(streamlit_command(REPO_ROOT, "127.0.0.1", 8501))
    assert "--server.address 127.0.0.1" in cmd and "--server.enableXsrfProtection true" in cmd
