"""``o3viz/trace/ids.py`` is the one place a step id is written: no module of ``o3viz/`` or ``pages/``
formats ``step:R:I`` or ``R:I`` by hand, and ``step_ref`` / ``parse_step_ref`` are inverse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from o3viz.trace.ids import make_id, parse_step_ref, step_ref

REPO = Path(__file__).resolve().parents[2]
OWNER = REPO / "o3viz" / "trace" / "ids.py"
HAND_FORMATTED = re.compile(
    r"""f["'][^"'\n]*\bstep:\{"""  # f"step:{r}:{i}", f"…&node=step:{s}"
    r"""|["']step:["']\s*\+"""  # "step:" + text
    r"""|\{[\w.]*\b(?:round|rnd|r)\}:[{\d]"""  # f"{self.round}:{self.index}", f"{r}:{i}", f"{node.round}:0"
)


def _hand_formatted() -> list[str]:
    found = []
    for path in sorted([*(REPO / "o3viz").rglob("*.py"), *(REPO / "pages").rglob("*.py")]):
        if path == OWNER:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HAND_FORMATTED.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    return found


def test_no_step_id_is_formatted_outside_trace_ids():
    assert _hand_formatted() == [], "use make_id / step_ref / parse_step_ref from o3viz.trace.ids"


@pytest.mark.parametrize(
    "line",
    [
        'node = f"step:{r}:{i}"',
        'url = f"/inspect?trace={k}&node=step:{s}"',
        'node = parse_id("step:" + text)',
        'return f"{self.round}:{self.index}"',
        'msg = f"no step {round}:{step}"',
        'last = f" ({node.round}:0 to {node.round}:{n - 1})"',
        'key = f"{r}:{s}"',
    ],
)
def test_the_pattern_finds_a_hand_formatted_step_id(line):
    assert HAND_FORMATTED.search(line)


@pytest.mark.parametrize(
    "line",
    [
        'name=f"step: {STEP_TYPE_LABELS.get(typ, typ)}"',  # a legend, not an id
        'url = f"http://{shown}:{args.port}"',
        'task_id = f"{source}:{t.task_id}"',
        '>>> parse_step("0:3"), parse_step("step:1:4")',
        'node = make_id("step", r, i)',
        'raise UsageError(f"--round {args.round}: the trace has {n} round(s)")',
    ],
)
def test_the_pattern_leaves_other_strings_alone(line):
    assert not HAND_FORMATTED.search(line)


@pytest.mark.parametrize(("r", "i"), [(0, 0), (0, 3), (2, 17)])
def test_step_ref_and_parse_step_ref_are_inverse(r, i):
    ref = step_ref(r, i)
    assert ref == f"{r}:{i}" and parse_step_ref(ref) == parse_step_ref(make_id("step", r, i))
    node = parse_step_ref(ref)
    assert (node.round, node.index, node.id) == (r, i, make_id("step", r, i))


@pytest.mark.parametrize("text", ["", "0", "0:x", "round:1", "check:0:1", "step:0", "-1:2", "0:3:4", None, 3])
def test_parse_step_ref_refuses_what_is_not_a_step(text):
    assert parse_step_ref(text) is None
