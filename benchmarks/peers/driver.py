"""The peers benchmark's three phases (time, memory, size) and its figures.

Every measurement is a fresh child process in the tool's own environment (``child.run_child``).
Time: per pair, one process per tool, tools alternating; each process runs, for every length,
the tool and then plain sdpa ``generate`` in the same process; the figure is the median of the
per-pair ratios. Memory: each tool climbs the ``--memory-tokens``
ladder until a run is stopped (16 GiB cap, machine memory, time limit); tools whose peak comes
from one forward pass over the whole sequence are forced there by prefill and bisected between
the last length that fit and the first that did not. Size: one run per tool, saved with the
tool's own means, measured on disk and loaded back.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from benchmarks.peers.child import ChildOutcome, run_child
from benchmarks.peers.tools import HERE, Tool, python_for

BISECT_STEP = 256  # forced-length bisection stops at this resolution


@dataclass
class Figure:
    """One row of the CSV and one ``name: value`` line."""

    figure: str  # e.g. "time_vs_plain_inseq_attention_64"
    tool: str
    tokens: int | None
    value: str  # a number, "yes"/"no", or "unavailable"/"stopped"
    unit: str = ""
    detail: str = ""

    def line(self) -> str:
        return f"{self.figure}: {self.value}" + (f"  ({self.detail})" if self.detail else "")


@dataclass
class Settings:
    """What one driver run measures (the CLI's arguments)."""

    model: str
    ids: list[int]
    prompt: str
    tools: list[Tool]
    tokens: list[int] = field(default_factory=lambda: [64, 256, 1024])
    memory_tokens: list[int] = field(default_factory=lambda: [1024, 4096, 8192])
    size_tokens: int = 512
    pairs: int = 3
    threads: int = 2
    cap_gib: float = 16.0
    time_limit_s: float = 1800.0
    bisect: int = 2
    peers_dir: Path | None = None
    out: Path | None = None  # CSV rewritten after every figure, so a stopped run keeps what it measured


Runner = Callable[[list[str], int, float], ChildOutcome]


class Driver:
    """Runs the phases, collecting figures; ``runner`` is ``run_child`` (swappable in tests)."""

    def __init__(self, s: Settings, runner: Runner = run_child, emit: Callable[[Figure], None] | None = None):
        self.s, self.runner, self.figures = s, runner, []
        self.emit = emit or (lambda f: print(f.line(), flush=True))
        self.unavailable: dict[str, str] = {}
        self.versions: dict[str, dict] = {}

    def add(self, fig: Figure) -> None:
        self.figures.append(fig)
        self.emit(fig)
        if self.s.out:
            write_csv(self.figures, self.s.out)

    def _python(self, tool: Tool) -> str | None:
        py, reason = python_for(tool.env, self.s.peers_dir) if self.s.peers_dir else python_for(tool.env)
        if py is None and tool.name not in self.unavailable:
            self.unavailable[tool.name] = reason
        return py

    def child(self, tool: Tool, mode: str, lengths: list[int], *, forced: bool = False, out_dir: str = ""):
        py = self._python(tool)
        job = {
            "tool": tool.name,
            "variant": tool.variant,
            "mode": mode,
            "model": self.s.model,
            "ids": self.s.ids,
            "prompt": self.s.prompt,
            "new_tokens": lengths,
            "threads": self.s.threads,
            "out_dir": out_dir,
            "forced": forced,
        }
        cmd = [py, str(HERE / tool.runner), "--job", json.dumps(job)]
        out = self.runner(cmd, int(self.s.cap_gib * 2**30), self.s.time_limit_s)
        if out.ok:
            self.versions.setdefault(tool.env, out.result.get("versions", {}))
        elif out.stopped == "error":  # a tool that can't run at all stays out, with why
            self.unavailable.setdefault(tool.name, out.reason)
        return out

    def usable(self, tool: Tool) -> bool:
        return self._python(tool) is not None and tool.name not in self.unavailable

    def run(self) -> list[Figure]:
        self.time_phase()
        self.memory_phase()
        self.size_phase()
        self.report_unavailable_and_versions()
        return self.figures

    def time_phase(self) -> None:
        if not self.s.tokens:
            return
        rows: dict[str, list[dict[str, float]]] = {t.name: [] for t in self.s.tools}
        stops: dict[str, str] = {}
        for pair in range(self.s.pairs):
            for tool in self.s.tools:
                if not self.usable(tool) or tool.name in stops:
                    continue
                progress(f"time {self.s.tokens} tokens, pair {pair + 1}/{self.s.pairs}: {tool.name}")
                out = self.child(tool, "time", self.s.tokens)
                if out.ok:
                    rows[tool.name].extend(out.result["times"])
                else:
                    stops[tool.name] = out.reason
                if pair == self.s.pairs - 1 or tool.name in stops:  # its figures now, not at the end
                    self._time_figures(tool, rows[tool.name], stops.get(tool.name))
        for tool in self.s.tools:
            if not self.usable(tool) and tool.name not in stops:
                self._time_figures(tool, [], None)

    def _time_figures(self, tool: Tool, rows: list[dict[str, float]], stop: str | None) -> None:
        for n in self.s.tokens:
            self._time_figure(tool, n, [r for r in rows if r["tokens"] == n], stop)

    def _time_figure(self, tool: Tool, n: int, rows: list[dict[str, float]], stop: str | None) -> None:
        name = f"time_vs_plain_{tool.name}_{n}"
        if not rows:
            if tool.name in self.unavailable or stop:
                reason = stop or self.unavailable[tool.name]
                value = "stopped" if reason.startswith("stopped:") else "unavailable"
                self.add(Figure(name, tool.name, n, value, "ratio", reason))
            return
        ratio = statistics.median(r["tool_s"] / r["plain_s"] for r in rows)
        t_tool = statistics.median(r["tool_s"] for r in rows)
        t_plain = statistics.median(r["plain_s"] for r in rows)
        detail = f"median of {len(rows)} pairs; tool {t_tool:.2f} s, plain {t_plain:.2f} s"
        self.add(Figure(name, tool.name, n, f"{ratio:.3f}", "ratio", detail))

    def memory_phase(self) -> None:
        if not self.s.memory_tokens:
            return
        for tool in self.s.tools:
            if not self.usable(tool):
                continue
            ladder = sorted(set(self.s.memory_tokens))
            best, fail_n, fail_reason = 0, 0, ""
            for n in ladder:
                progress(f"memory {n} tokens: {tool.name}")
                out = self.child(tool, "memory", [n], forced=tool.forced_memory)
                self._memory_figure(tool, n, out)
                if not out.ok:
                    fail_n, fail_reason = n, out.reason
                    break
                best = n
            if fail_n and tool.forced_memory and self.s.bisect and fail_reason.startswith("stopped: RSS"):
                best, fail_n = self._bisect(tool, best, fail_n)
            self._longest_figure(tool, best, fail_n, fail_reason, ladder)

    def _memory_figure(self, tool: Tool, n: int, out: ChildOutcome) -> None:
        name = f"peak_mb_{tool.name}_{n}"
        if out.ok:
            forced = "forced by prefill; " if tool.forced_memory else ""
            detail = (
                f"{forced}RSS above the loaded model; whole process peaked at {out.watched_peak_mb:,.0f} MB"
            )
            self.add(Figure(name, tool.name, n, f"{out.result['peak_above_model_mb']:.0f}", "MB", detail))
        else:
            self.add(Figure(name, tool.name, n, "stopped", "MB", out.reason))

    def _bisect(self, tool: Tool, lo: int, hi: int) -> tuple[int, int]:
        for _ in range(self.s.bisect):
            mid = (lo + hi) // 2 // BISECT_STEP * BISECT_STEP
            if mid <= lo or mid >= hi:
                break
            progress(f"memory bisect {mid} tokens: {tool.name}")
            out = self.child(tool, "memory", [mid], forced=True)
            self._memory_figure(tool, mid, out)
            lo, hi = (mid, hi) if out.ok else (lo, mid)
        return lo, hi

    def _longest_figure(self, tool: Tool, best: int, fail_n: int, reason: str, ladder: list[int]) -> None:
        name = f"longest_within_cap_{tool.name}"
        if fail_n:
            detail = f"stopped at {fail_n} tokens: {reason}"
        else:
            detail = (
                f"every length tried fit; the longest tried was {ladder[-1]}" if ladder else "nothing tried"
            )
        value = str(best) if best else "none"
        self.add(Figure(name, tool.name, best or None, value if fail_n else f">= {best}", "tokens", detail))

    def size_phase(self) -> None:
        if not self.s.size_tokens:
            return
        n = self.s.size_tokens
        for tool in self.s.tools:
            if not self.usable(tool):
                continue
            progress(f"size {n} tokens: {tool.name}")
            folder = tempfile.mkdtemp(prefix=f"o3viz-peers-{tool.name}-")
            try:
                out = self.child(tool, "size", [n], out_dir=folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            self._size_figures(tool, n, out)

    def _size_figures(self, tool: Tool, n: int, out: ChildOutcome) -> None:
        if not out.ok:
            value = "unavailable" if out.stopped == "error" else "stopped"
            self.add(Figure(f"size_mb_{tool.name}_{n}", tool.name, n, value, "MB", out.reason))
            return
        r = out.result
        if not r.get("saved_as"):
            self.add(Figure(f"size_mb_{tool.name}_{n}", tool.name, n, "none", "MB", r.get("note", "")))
            return
        self.add(
            Figure(
                f"size_mb_{tool.name}_{n}", tool.name, n, f"{r['size_bytes'] / 1e6:.2f}", "MB", r["saved_as"]
            )
        )
        back = "yes" if r.get("loads_back") else "no"
        self.add(Figure(f"loads_back_{tool.name}_{n}", tool.name, n, back, "", r.get("load_error", "")))

    def report_unavailable_and_versions(self) -> None:
        for tool in self.s.tools:
            if not self.usable(tool):  # also a peer no phase asked for: never silently absent
                self.add(
                    Figure(
                        f"unavailable_{tool.name}",
                        tool.name,
                        None,
                        "unavailable",
                        "",
                        self.unavailable[tool.name],
                    )
                )
        for env, v in sorted(self.versions.items()):
            text = ", ".join(f"{k} {val}" for k, val in v.items())
            self.add(Figure(f"versions_{env}", env, None, text))


def progress(msg: str) -> None:
    print(f"[peers] {msg}", file=sys.stderr, flush=True)


def write_csv(figures: list[Figure], path: Path) -> Path:
    """Write the figures as CSV atomically (a temporary file in the same folder, then rename)."""
    buf = io.StringIO()
    names = [f.name for f in fields(Figure)]
    writer = csv.DictWriter(buf, fieldnames=names)
    writer.writeheader()
    for fig in figures:
        writer.writerow(asdict(fig))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write(buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_csv(path: Path) -> list[Figure]:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [
        Figure(
            r["figure"],
            r["tool"],
            int(r["tokens"]) if r["tokens"] else None,
            r["value"],
            r["unit"],
            r["detail"],
        )
        for r in rows
    ]
