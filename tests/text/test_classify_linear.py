"""The step classifier reads model output in linear time (red-team finding 8, the same sweep as the
judge): ``plug\\b.*\\bback`` inside one regex rescanned the rest of the line from every "plug", so a
line of 80,000 characters took 23 s and 1 MB hours. ``_plugs_back`` gives the same answers in one
pass."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from o3viz.text.classify import _plugs_back, classify_step

OLD = re.compile(r"\bplug(?:ging)?\b.*\bback\b")  # the pattern it replaces, for the contract


@pytest.mark.parametrize(
    "text",
    [
        "plugging x = 3 back in gives 7",
        "plug it back",
        "plug it in\nthen go back",
        "plugback",
        "plugs back",
        "unplug it back",
        "plug x in, then plug y back",
        "plug\nplug back",
        "back then we plug",
        "plugging it backwards",
        "",
    ],
)
def test_plugs_back_answers_as_the_regex_did(text):
    assert _plugs_back(text) == (OLD.search(text) is not None)


def test_a_step_that_plugs_back_is_still_a_check():
    assert classify_step("Plugging x = 3 back in: 3 + 4 = 7.", 5, 10) == "self_checking"


@pytest.mark.subprocess
def test_a_megabyte_line_of_plug_is_classified_in_a_separate_process_quickly():
    """Run where a hang cannot stop the suite; it took hours before."""
    code = "from o3viz.text.classify import classify_step as c\nprint(c('plug ' * 200_000, 1, 3))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "active_computation", r.stderr[-500:]
