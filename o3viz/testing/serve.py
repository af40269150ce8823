"""``transformers serve`` on 127.0.0.1 for tests: an OpenAI-compatible endpoint with a local model
(offline), started in a subprocess, waited for on ``/health``, and stopped on exit."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_S = 600  # a shared, loaded CI machine can take minutes to import the server


class ServeError(RuntimeError):
    """The server exited or did not answer within ``STARTUP_S``."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def transformers_serve(model_path: str, log: Path, startup_s: float = STARTUP_S) -> Iterator[str]:
    """Serve ``model_path`` on a free port; yields the base URL (``http://127.0.0.1:PORT/v1``)."""
    exe = Path(sys.executable).with_name("transformers")
    if not exe.exists():
        exe = shutil.which("transformers")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with log.open("wb") as sink:  # a file, not a pipe: a full pipe blocks the server
        proc = subprocess.Popen(
            [str(exe), "serve", model_path, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ServeError(f"transformers serve exited: {log.read_text(errors='replace')[-800:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
        else:
            raise ServeError(f"transformers serve did not answer /health within {startup_s:g} s")
        yield f"{url}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
