"""Importing every trace under a data folder (``../shared/data/traces``): every JSONL record and
every thinking text, with how often the extracted answer's verdict against the reference agrees
with the file's own ``is_correct``. Used by the data tests and the import benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from o3viz.importers import import_trace
from o3viz.importers.formats import read_input
from o3viz.trace import Trace


@dataclass
class AnswerSurvey:
    """Every imported trace (keyed ``file:record``) and the agreement with ``is_correct``."""

    traces: dict[str, Trace] = field(default_factory=dict)
    graded: int = 0  # records with is_correct and a verdict other than unverifiable
    agree: int = 0
    disagreements: list[str] = field(default_factory=list)  # "file:record answer vs reference (file says …)"


def iter_sources(folder: Path) -> list[tuple[Path, int | None]]:
    """(path, record) for every JSONL record and every ``.txt`` file under ``folder``."""
    out: list[tuple[Path, int | None]] = []
    for path in sorted(folder.glob("*.jsonl")):
        n = sum(1 for line in path.read_text().splitlines() if line.strip())
        out += [(path, i) for i in range(n)]
    out += [(p, None) for p in sorted(folder.rglob("*.txt"))]
    return out


def survey_answers(folder: Path, *, claims: bool = True) -> AnswerSurvey:
    folder = Path(folder)
    folder = folder / "traces" if (folder / "traces").is_dir() else folder
    survey, raws = AnswerSurvey(), {}
    for path, record in iter_sources(folder):
        if path not in raws:  # parse each file once, not once per record
            raws[path] = read_input(path)
        raw = raws[path]
        trace = import_trace(raw, record=record, claims=claims)
        key = f"{path.name}:{record}" if record is not None else path.name
        survey.traces[key] = trace
        if "agrees_with_file" in trace.info:
            survey.graded += 1
            survey.agree += trace.info["agrees_with_file"]
            if not trace.info["agrees_with_file"]:
                check = trace.final.checks[-1]
                survey.disagreements.append(
                    f"{key} answer {check.stated!r} vs reference {check.computed!r}: we say "
                    f"{check.verdict}, the file says is_correct={trace.info['file_is_correct']}"
                )
    return survey
