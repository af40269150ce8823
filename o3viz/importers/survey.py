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
                survey.disagreements.append(f"{key} {explain_disagreement(trace)}")
    return survey


def explain_disagreement(trace: Trace) -> str:
    """Why o3viz's grade of an imported trace differs from its source's ``is_correct``, in one
    line: the answers each side read, and which of them equals the reference.

    The cases: both read the same answer (the file's grader missed a notation variant, or o3viz's
    equivalence is wrong), or they read different answers from the text (one extractor took the
    wrong number)."""
    from o3viz.text.answers import answers_equivalent

    check = next((c for c in reversed(trace.final.checks) if c.kind == "answer"), None)
    ours, ref = (check.stated, check.computed) if check is not None else (None, None)
    theirs = trace.info.get("file_answer")
    verdict = check.verdict if check is not None else "unverifiable"
    head = (
        f"answer {ours!r} vs reference {ref!r}: we say {verdict}, "
        f"the file says is_correct={trace.info.get('file_is_correct')}"
    )
    if why_not := trace.final.info.get("not_graded"):
        return f"{head} (o3viz does not grade it, {why_not}; the file graded {theirs!r})"
    if ours is None or ref is None:
        return f"{head} (o3viz found no answer or no reference to compare)"
    if theirs is None:
        return f"{head} (the file does not say which answer it read)"
    same = answers_equivalent(ours, theirs)
    if same and verdict == "correct":
        why = f"both read {theirs!r}; it equals the reference by math equivalence, which the file's grader missed"
    elif same:
        why = f"both read {theirs!r}; the file's grader calls it equal to the reference and o3viz does not"
    elif verdict == "correct":
        why = f"the file's grader read {theirs!r} from the text, not the answer o3viz read"
    else:
        why = f"the file's grader read {theirs!r} from the text; o3viz read {ours!r}, which differs"
    return f"{head} ({why})"
