"""Every plug-in kind follows the one convention of ``o3viz.plugins.Registry`` (issue 52): each
registry in the package is listed here with the command that shows it; that command's ``--list``
prints exactly the registry's generated text and its ``--help`` ends with it; every option parses
from its CLI string form; a duplicate name is refused; and no command adds a flag per plug-in
option (options go through ``-V key=value``). A new registry fails the first test until it is
added to ``SHOWN_BY``."""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
from pathlib import Path

import pytest

from o3viz.cli.main import build_parser, main
from o3viz.errors import UsageError
from o3viz.plugins import Option, Registry

pytestmark = [pytest.mark.light]

ROOT = Path(__file__).resolve().parents[1]
# (module, name) of each registry -> (the command that shows it, its flags allowed to share an
# option's name: generic aliases of -V, documented in the command's help)
SHOWN_BY = {
    ("o3viz.verify.verifiers.registry", "VERIFIERS"): ("verify", {"--model", "--base-url"}),
    ("o3viz.importers.registry", "FORMATS"): ("import", set()),
    ("o3viz.verify.claims.round_checks", "CHECKS"): ("check-claims", set()),
    ("o3viz.answers.probes", "PROBES"): ("answers", {"--model", "--base-url", "--suffix"}),
}


def _registries_in_source() -> set[tuple[str, str]]:
    """(module, name) of every module-level ``NAME = Registry(...)`` under ``o3viz/``."""
    found = set()
    for path in (ROOT / "o3viz").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "Registry"
            ):
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                found |= {(module, t.id) for t in node.targets if isinstance(t, ast.Name)}
    return found


def _registry(key: tuple[str, str]) -> Registry:
    module, name = key
    if module == "o3viz.answers.probes":
        pytest.importorskip(module)
    return getattr(importlib.import_module(module), name)


def _output(capsys, argv: list[str]) -> str:
    try:
        assert main(argv) == 0
    except SystemExit as exc:  # --help
        assert exc.code == 0
    return capsys.readouterr().out


def test_every_registry_in_the_package_is_checked_here():
    assert _registries_in_source() == set(SHOWN_BY)


@pytest.mark.parametrize("key", sorted(SHOWN_BY), ids=lambda k: k[1])
def test_list_and_help_print_the_generated_text(key, capsys):
    reg, command = _registry(key), SHOWN_BY[key][0]
    text = reg.describe()
    assert text and all(p.name in text for p in reg)
    assert _output(capsys, [command, "--list"]) == text + "\n"
    assert _output(capsys, [command, "--help"]).rstrip().endswith(text)


def _cli_form(o: Option) -> tuple[str, object]:
    """A string the CLI could give for ``o``, and the value it stands for."""
    if o.choices:
        return o.choices[-1], o.choices[-1]
    return {bool: ("true", True), int: (" 7", 7), float: ("0.25", 0.25), str: ("x=y", "x=y")}[o.type]


@pytest.mark.parametrize("key", sorted(SHOWN_BY), ids=lambda k: k[1])
def test_every_option_parses_from_its_cli_string(key):
    reg = _registry(key)
    for plugin in reg:
        given = {o.name: _cli_form(o)[0] for o in plugin.options}
        values = reg.values(plugin.name, given)
        assert values == {o.name: _cli_form(o)[1] for o in plugin.options}, plugin.name
        if any(o.optional for o in plugin.options):
            nones = {o.name: "none" for o in plugin.options if o.optional}
            assert all(reg.values(plugin.name, {**given, **nones})[k] is None for k in nones)


@pytest.mark.parametrize("key", sorted(SHOWN_BY), ids=lambda k: k[1])
def test_a_duplicate_name_is_refused(key):
    reg = _registry(key)
    first = next(iter(reg))
    with pytest.raises(UsageError, match="is already registered"):
        reg.register(first.name, lambda: None, "a second one")
    assert reg.get(first.name) is first


def _flags(command: str) -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {s for a in sub.choices[command]._actions for s in a.option_strings}


@pytest.mark.parametrize("key", sorted(SHOWN_BY), ids=lambda k: k[1])
def test_no_command_adds_a_flag_per_plug_in_option(key):
    reg, (command, aliases) = _registry(key), SHOWN_BY[key]
    per_option = {"--" + o.name.replace("_", "-") for p in reg for o in p.options}
    assert _flags(command) & per_option <= aliases


def test_the_verify_command_takes_options_only_through_v():
    flags = _flags("verify")
    assert "-V" in flags and not flags & {"--threshold", "--batch-size", "--extra-body", "--device"}


def test_the_import_field_flags_are_the_import_fields():
    from o3viz.importers import ImportFields

    fields = {"--" + n.replace("_", "-") for n in ImportFields.names()}
    assert {f for f in _flags("import") if f.endswith("-field")} == fields


def test_a_command_name_taken_twice_is_refused(tmp_path, monkeypatch):
    pkg = tmp_path / "twin_cli"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod in ("alpha", "beta"):
        (pkg / f"{mod}.py").write_text("def register(sub):\n    sub.add_parser('twin', help='x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(
            UsageError, match="command 'twin' of twin_cli.beta is already registered by twin_cli.alpha"
        ):
            build_parser(importlib.import_module("twin_cli"))
    finally:
        for name in [m for m in sys.modules if m.startswith("twin_cli")]:
            del sys.modules[name]
