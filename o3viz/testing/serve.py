"""``transformers serve`` on 127.0.0.1 for tests and benchmarks: an OpenAI-compatible server of a
local model, offline, started and stopped in a context manager (the process is always stopped)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

STARTUP_S = 600  # a shared, loaded machine can take minutes to import the server
# transformers serve samples only when the request's generation config says so
SAMPLING_BODY = {"generation_config": '{"do_sample": true, "eos_token_id": 2, "pad_token_id": 2}'}


class ServeError(RuntimeError):
    """The server exited or never answered /health."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def transformers_serve(
    model_path: str, log: Path, startup_s: float = STARTUP_S, *, continuous_batching: bool = False
) -> Iterator[str]:
    """Yield the server's ``/v1`` base URL; its stderr goes to ``log`` (a file: a full pipe blocks it)."""
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe if exe.exists() else shutil.which("transformers")), "serve", model_path]
    port = free_port()
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    cmd += ["--continuous-batching"] if continuous_batching else []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if proc.poll() is not None:
                raise ServeError(f"transformers serve exited: {log.read_text(errors='replace')[-800:]}")
            if time.monotonic() > deadline:
                raise ServeError(f"transformers serve did not answer /health within {startup_s:g} s")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(1)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
