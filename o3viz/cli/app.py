"""``o3viz app [TRACE_OR_FOLDER ...] [--store DIR] [--port N] [--host ADDR]``: start the app.

The files named are added to the store first (a folder: every trace file in it), and the first
one opens in Inspect. The app is the checkout's ``app.py`` or, from a wheel, the installed
``o3viz_app`` package (``o3viz.paths.app_dir``); it runs under this Python, with the app's own
``.streamlit/config.toml``. It binds 127.0.0.1 unless ``--host`` says otherwise, and a port that
is taken is one line, before Streamlit starts.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import webbrowser
from pathlib import Path

from o3viz.errors import O3vizError, UsageError
from o3viz.paths import app_dir, home_dir

TRACE_SUFFIXES = (".o3trace.json", ".o3trace.json.gz")
MAX_FOLDER_FILES = 10_000  # a folder argument adds at most this many trace files


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "app",
        help="start the app (and add trace files to its store)",
        description="Start the o3viz app in the browser. Trace files or folders named here are added "
        "to the store, and the first one opens in Inspect. The app serves this machine only "
        "(127.0.0.1) unless --host says otherwise: anyone who can reach the port can run the model "
        "and sandboxed code. Stop it with Ctrl-C.",
    )
    p.add_argument(
        "paths", nargs="*", type=Path, metavar="TRACE_OR_FOLDER", help="trace files or folders to open"
    )
    p.add_argument(
        "--store", type=Path, help="the store folder (default: $O3VIZ_HOME or ~/.local/share/o3viz)"
    )
    p.add_argument("--port", type=int, default=8501, help="the port to listen on (default 8501)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default 127.0.0.1; 0.0.0.0 serves a network)",
    )
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.set_defaults(func=run)


def trace_files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The trace files ``paths`` name: files as given, folders searched (sorted, bounded); and
    one line for each trace name in a folder that is not a regular file (a FIFO, a dangling link),
    skipped without being opened. A path named that is neither file nor folder is one line."""
    out: list[Path] = []
    skipped: list[str] = []
    for path in paths:
        if path.is_dir():
            named = sorted(p for p in path.rglob("*") if p.name.endswith(TRACE_SUFFIXES) and not p.is_dir())
            found = [p for p in named if p.is_file()]
            skipped += [f"{p}: not a regular file" for p in named if not p.is_file()]
            if not found:
                raise UsageError(f"{path}: no trace files (*.o3trace.json[.gz]) in this folder")
            out.extend(found[:MAX_FOLDER_FILES])
        elif path.is_file():
            out.append(path)
        elif path.exists():  # a FIFO, socket or device: refused from its stat, never opened
            raise UsageError(f"{path}: not a regular file or folder")
        elif path.is_symlink():
            raise UsageError(f"{path}: a symbolic link that leads to nothing (or to itself)")
        else:
            raise UsageError(f"{path}: no such file or folder")
    return out, skipped


def add_to_store(files: list[Path]) -> tuple[list[str], list[str]]:
    """Add ``files`` to the store at ``home_dir()``; return their keys, and one line naming each
    file that could not be added and why (a truncated file, one that is not a trace): the others
    are added all the same. A trace file is added as it is; anything else goes through the
    importers (as ``o3viz import`` does)."""
    from o3viz.store.store import Store

    store, keys, failed = Store(home_dir()), [], []
    for f in files:
        try:
            if f.name.endswith(TRACE_SUFFIXES):
                keys.append(store.add_file(f))
            else:
                from o3viz.importers import import_trace

                keys.append(store.add(import_trace(f)))
        except O3vizError as exc:
            failed.append(f"{f}: {str(exc).removeprefix(f'{f}: ').removeprefix('(file): ')}")
    return keys, failed


def port_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound now (the check Streamlit would fail later, less clearly)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def streamlit_command(app: Path, host: str, port: int) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(app / "app.py"),
        "--server.address", host, "--server.port", str(port),
        "--server.headless", "true", "--server.enableXsrfProtection", "true",
    ]  # fmt: skip


def open_when_up(url: str, health: str, wait_s: float = 60.0) -> None:
    """Open ``url`` in a browser tab once ``health`` answers (a background thread; no display, no tab)."""

    def wait_then_open() -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(health, timeout=2) as r:  # noqa: S310 (our own local URL)
                    if r.status == 200:
                        webbrowser.open(url)
                        return
            except OSError:
                time.sleep(0.5)

    threading.Thread(target=wait_then_open, daemon=True).start()


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be 1-65535, not {args.port}")
    if args.store:
        store = args.store.expanduser()
        if store.exists() and not store.is_dir():
            raise UsageError(
                f"--store {args.store}: not a folder (the store is a folder; give a new or existing one)"
            )
        os.environ["O3VIZ_HOME"] = str(store.resolve())
    files, skipped = trace_files(args.paths)
    app = app_dir()
    if not (app / "app.py").is_file():
        raise UsageError(f"the app is not installed beside o3viz ({app}); reinstall o3viz")
    if not port_free(args.host, args.port):
        raise UsageError(f"port {args.port} on {args.host} is taken; pass --port with a free one")
    keys, failed = add_to_store(files)
    for line in skipped + failed:
        sys.stderr.write(f"o3viz: skipped {line}\n")
    if files and not keys:
        raise UsageError(f"none of the {len(files)} trace files could be added (each is named above)")
    shown = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
    url = f"http://{shown}:{args.port}"
    if keys:
        left = f" ({len(skipped) + len(failed)} skipped)" if skipped or failed else ""
        print(
            f"o3viz: added {len(keys)} trace{'' if len(keys) == 1 else 's'} to the store at {home_dir()}{left}"
        )
        url += f"/inspect?trace={keys[0]}"
    scope = "this machine only" if args.host in ("127.0.0.1", "::1", "localhost") else "the network"
    print(f"o3viz: serving {scope} at {url}  (Ctrl-C stops it)", flush=True)
    cmd = streamlit_command(app, args.host, args.port)
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    proc = subprocess.Popen(cmd, cwd=app, env=env)  # cwd: the app's .streamlit/config.toml applies
    if not args.no_browser:
        local = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        open_when_up(url, f"http://{local}:{args.port}/_stcore/health")
    return serve_until_stopped(proc)


def serve_until_stopped(proc: subprocess.Popen) -> int:
    """Wait for the server; Ctrl-C or a SIGTERM to ``o3viz app`` stops it too (a server left
    behind would keep the port and the model), killed if it has not ended within 10 s."""

    def stop(signum, frame) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
