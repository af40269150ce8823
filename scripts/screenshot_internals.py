"""Screenshots of the "Inside the layers" and "Importance" views for the README, with the real
browser (Debian's Chromium through Playwright) against ``streamlit run app.py`` on a free local port.

Usage: ``python scripts/screenshot_internals.py A.o3trace.json.gz [B.o3trace.json.gz] [--importance
C.o3trace.json.gz] --out DIR`` (A: a trace with routing and the logit lens; B, optional: a second
one for Compare; C, optional: a trace with importance records, for the Importance view and the map).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from o3viz.store.store import content_key  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str) -> None:
    for _ in range(240):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("streamlit did not start")


def _settle(page, text: str) -> None:
    try:
        page.get_by_text(text).first.wait_for(timeout=180_000)
    except Exception:
        page.screenshot(path="/tmp/o3viz_screenshot_failed.png")
        raise
    page.wait_for_timeout(4000)


def shoot(traces: list[Path], out: Path, size: tuple[int, int], importance: Path | None = None) -> None:
    from playwright.sync_api import sync_playwright

    samples = Path(tempfile.mkdtemp())
    for t in traces + ([importance] if importance else []):
        shutil.copy(t, samples / t.name)
    port, env = _port(), {**os.environ, "O3VIZ_SAMPLES": str(samples)}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    proc = subprocess.Popen(cmd + ["--server.headless", "true", "--server.address", "127.0.0.1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url)
        key = content_key(traces[0].read_bytes())
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": size[0], "height": size[1]})
            view = urllib.parse.quote("Inside the layers")
            page.goto(f"{url}/inspect?trace={key}&view={view}")
            _settle(page, "Which experts did each token use?")
            page.screenshot(path=str(out / "internals_routing.png"))
            page.screenshot(path=str(out / "internals_routing_full.png"), full_page=True)
            page.get_by_text("Logit lens", exact=True).first.click()
            _settle(page, "What would each layer have predicted")
            page.screenshot(path=str(out / "internals_lens.png"))
            if len(traces) > 1:
                kb = content_key(traces[1].read_bytes())
                page.goto(f"{url}/compare?trace={key}&b={kb}")
                page.get_by_text("Expert routing").first.scroll_into_view_if_needed(timeout=180_000)
                page.wait_for_timeout(4000)
                page.screenshot(path=str(out / "internals_compare.png"))
            if importance is not None:
                ki = content_key(importance.read_bytes())
                page.goto(f"{url}/inspect?trace={ki}&view=Importance")
                _settle(page, "Step × step matrix")
                page.screenshot(path=str(out / "importance.png"))
                page.screenshot(path=str(out / "importance_full.png"), full_page=True)
                page.goto(f"{url}/inspect?trace={ki}")
                _settle(page, "What happened")
                page.screenshot(path=str(out / "importance_map.png"))
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(samples, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--importance", type=Path, help="a trace with importance records")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    w, h = (int(x) for x in args.size.split("x"))
    shoot(args.traces, args.out, (w, h), args.importance)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
