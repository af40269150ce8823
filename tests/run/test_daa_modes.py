"""DAA's modes are one table (``o3viz.run.daa.modes``): the settings, the CLI, the facade the pages
import and the trace's record read it, and no module or page lists the modes a second time."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import get_args

import pytest

from o3viz.errors import UsageError
from o3viz.run.config import DAAConfig, SteerSpan
from o3viz.run.daa.modes import DAA_MODE_TABLE, DAA_MODES, DAAMode
from o3viz.trace.attention import DAA_RECORD_MODES

REPO = Path(__file__).resolve().parents[2]
HOME = REPO / "o3viz" / "run" / "daa" / "modes.py"  # the one place the modes are written
# A tuple or list of two or more mode names in quotes, like ("off", "observe", ...).
MODE_LIST = re.compile(
    r"""[\[(]\s*(["'](off|observe|allocate|steer)["']\s*,\s*){1,}["'](off|observe|allocate|steer)["']"""
)


def test_the_table_holds_every_mode_once_and_the_literal_agrees():
    assert DAA_MODES == tuple(DAA_MODE_TABLE) == get_args(DAAMode)
    assert DAA_MODES == ("off", "observe", "allocate", "steer")


def test_each_mode_does_what_its_row_says():
    off, observe, allocate, steer = (DAA_MODE_TABLE[m] for m in DAA_MODES)
    assert not (off.relevance or off.biases or off.steers)
    assert observe.relevance and not observe.biases  # records relevance, attention unchanged
    assert allocate.relevance and allocate.biases
    assert steer.steers and steer.biases and not steer.relevance
    assert all(spec.does for spec in DAA_MODE_TABLE.values())


def test_the_trace_record_modes_are_the_modes_that_write_a_daa_record():
    """``DAARecord`` sits below the run layer, so it keeps its own list: the modes whose row scores
    relevance (and ``off``, its default)."""
    assert set(DAA_RECORD_MODES) == {"off"} | {m for m, s in DAA_MODE_TABLE.items() if s.relevance}


def test_no_module_or_page_lists_the_modes_again():
    found = []
    for root in ("o3viz", "pages"):
        for path in sorted((REPO / root).rglob("*.py")):
            if path == HOME:
                continue
            text = path.read_text(encoding="utf-8")
            for m in MODE_LIST.finditer(text):
                found.append(
                    f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                )
            if re.search(r"^\s*DAA_MODES\s*[:=]", text, re.M):
                found.append(f"{path.relative_to(REPO)}: defines DAA_MODES")
    # DAARecord's own list is allowed (it is a different set, checked above), nothing else.
    found = [f for f in found if not f.startswith("o3viz/trace/daa_records.py")]
    assert not found, "read the modes from o3viz.run.daa.modes instead:\n" + "\n".join(found)


def test_the_mode_list_check_can_fail():
    assert MODE_LIST.search('MODES = ["off", "observe", "allocate", "steer"]')
    assert MODE_LIST.search("st.selectbox('DAA', ('off', 'allocate'))")
    assert not MODE_LIST.search('daa == "steer"')


def test_the_facade_and_the_cli_read_the_table():
    from o3viz.app import running
    from o3viz.cli.run import add_capture_arguments

    assert running.DAA_MODES is DAA_MODES and running.DAA_MODE_TABLE is DAA_MODE_TABLE
    p = argparse.ArgumentParser()
    add_capture_arguments(p)
    daa = next(a for a in p._actions if a.dest == "daa")
    assert daa.choices is DAA_MODES
    assert all(spec.does in daa.help for spec in DAA_MODE_TABLE.values())  # help from the table


def test_the_pages_take_the_modes_from_the_facade():
    for page in ("pages/run.py", "pages/common/paired_run.py"):
        text = (REPO / page).read_text(encoding="utf-8")
        assert re.search(r"from o3viz\.app\.running import \(?[^)]*\bDAA_MODES\b", text), page
        assert re.search(r"selectbox\([^)]*DAA_MODES", text), page


def test_settings_refuse_an_unknown_mode_naming_the_table_s_modes():
    with pytest.raises(UsageError, match="off, observe, allocate, steer"):
        DAAConfig(mode="boost").validate()  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="marked span"):
        DAAConfig(mode="steer").validate()  # the steers row asks for spans
    DAAConfig(mode="steer", spans=[SteerSpan(text="x")]).validate()
