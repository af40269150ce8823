"""A hint that names an o3viz command with its action (``o3viz library list``) names one that
exists: every string in ``o3viz/`` that reads "o3viz COMMAND ACTION", where COMMAND takes actions,
is checked against the CLI's own parser (issue 63: a hint named ``o3viz library datasets``)."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from o3viz.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
HINT = re.compile(r"(?<![\w./-])o3viz ([a-z][a-z_-]*) ([a-z][a-z_-]*)")


def _actions() -> dict[str, set[str]]:
    """Each command that takes an action, and its actions."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, parser in sub.choices.items():
        inner = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if inner:
            out[name] = set(inner[0].choices)
    return out


def test_every_hint_names_an_action_the_cli_has():
    actions = _actions()
    assert "list" in actions["library"]  # the parser is read as the test expects
    wrong = []
    for path in sorted((ROOT / "o3viz").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for m in HINT.finditer(node.value):
                    command, action = m.groups()
                    if command in actions and action not in actions[command]:
                        wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {m.group()}")
    assert not wrong, "hints naming no such command:\n" + "\n".join(wrong)
