"""Running notebooks in a real kernel for tests and screenshots: a kernel spec for this
interpreter (``kernel_spec``), ``execute`` (nbclient + ipykernel), and ``notebook_page``, the
executed notebook as one HTML page (each cell's source, then its HTML or text output), the way
nbconvert or a notebook viewer without widgets would show it."""

from __future__ import annotations

import html
import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from o3viz.paths import REPO_ROOT

KERNEL = "o3viz-test"


def kernel_spec(folder: Path) -> Path:
    """A Jupyter data folder (for ``JUPYTER_PATH``) naming this Python as kernel ``KERNEL``, with
    the project on its ``PYTHONPATH``."""
    spec = folder / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python", "env": env})
    )
    return folder


def execute(cells: list[str], jupyter_path: Path, *, timeout: int = 120) -> nbformat.NotebookNode:
    """A new notebook of ``cells`` (code), executed top to bottom in kernel ``KERNEL``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": KERNEL, "language": "python"}
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(jupyter_path)
    try:
        NotebookClient(
            nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(REPO_ROOT)}}
        ).execute()
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old
    return nb


def _output_html(out) -> str:
    data = out.get("data", {})
    if "text/html" in data:
        return data["text/html"]
    text = data.get("text/plain") or out.get("text") or ""
    return f"<pre>{html.escape(text)}</pre>"


def notebook_page(nb: nbformat.NotebookNode) -> str:
    """The executed notebook as HTML: ``In [n]`` with its source, then its outputs."""
    parts = []
    for cell in nb.cells:
        n = cell.get("execution_count") or " "
        parts.append(f'<div class="in"><span>In [{n}]:</span><pre>{html.escape(cell.source)}</pre></div>')
        parts += [f'<div class="out">{_output_html(o)}</div>' for o in cell.get("outputs", [])]
    style = (
        "body{font:13px system-ui,sans-serif;margin:8px 16px;background:#fff}"
        ".in{display:flex;gap:8px;align-items:baseline}.in span{color:#303f9f;font:12px monospace;min-width:60px}"
        ".in pre{flex:1;background:#f5f5f5;border:1px solid #e0e0e0;padding:4px 8px;margin:4px 0}"
        ".out{margin-left:68px}.out pre{margin:2px 0}"
    )
    return f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{style}</style></head><body>{"".join(parts)}</body></html>'
