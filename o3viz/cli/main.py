"""The command line, ``o3viz`` (or ``python -m o3viz``): finds subcommands in ``o3viz.cli`` and
turns every ``O3vizError`` into one stderr line with exit code 2. Benchmarks live outside the
library, in the checkout's ``benchmarks/`` (``python -m benchmarks``), which reuses ``_Parser``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from o3viz import __version__
from o3viz import cli as commands
from o3viz.cli._terminal import escaped_output
from o3viz.errors import O3vizError, UsageError, printable


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"o3viz: error: {message} (see --help)\n")
        raise SystemExit(2)


def _modules(package) -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))


class _Commands:
    """The subcommands as each command module's ``register`` sees them: ``add_parser`` as
    argparse's, but a command name (or alias) already taken is refused in one line naming both
    modules, as every registry refuses a duplicate (``o3viz.plugins``)."""

    def __init__(self, sub: argparse._SubParsersAction) -> None:
        self._sub = sub
        self.owners: dict[str, str] = {}  # command name -> the module that added it
        self.module = ""

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        for n in (name, *kwargs.get("aliases", ())):
            if n in self.owners:
                raise UsageError(f"command {n!r} of {self.module} is already registered by {self.owners[n]}")
            self.owners[n] = self.module
        return self._sub.add_parser(name, **kwargs)


def build_parser(package=commands) -> argparse.ArgumentParser:
    """The ``o3viz`` parser: every public module of ``package`` (``o3viz.cli``) adds its command."""
    parser = _Parser(
        prog="o3viz",
        description="o3viz: capture a language model's reasoning (attention, verification, "
        "compression) into one trace file, check it, and inspect it.",
    )
    parser.add_argument("--version", action="version", version=f"o3viz {__version__}")
    sub = _Commands(parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser))
    for name in _modules(package):
        if name == "main":
            continue
        sub.module = f"{package.__name__}.{name}"
        importlib.import_module(sub.module).register(sub)
    return parser


def _check_text(args: argparse.Namespace) -> None:
    """Text arguments must be valid UTF-8: a byte that is not arrives as a lone surrogate, which
    SQLite, JSON and the files cannot take. File names (``Path``) may hold any bytes."""
    for name, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise UsageError(f"{name.replace('_', '-')}: not valid UTF-8 text") from None


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one command; its exit code. A reader that goes away (``o3viz compare ... | head``) ends
    it quietly with exit code 1, for every command: no ``BrokenPipeError`` traceback."""
    try:
        try:
            return _dispatch(argv, parser)
        finally:
            sys.stdout.flush()  # a closed pipe shows here, where it is caught, not at exit
    except BrokenPipeError:
        # the interpreter flushes stdout again at exit: point it at devnull so that flush is quiet
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1


def _dispatch(argv: list[str] | None, parser: argparse.ArgumentParser | None) -> int:
    if parser is None and (sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(f"o3viz {__version__}")  # without importing every subcommand (they import torch)
        return 0
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        _check_text(args)
        with escaped_output():  # text from files never reaches the terminal as control codes
            return int(args.func(args) or 0)
    except O3vizError as exc:
        sys.stderr.write(f"o3viz: error: {printable(str(exc))}\n")  # one line, whatever a name held
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("o3viz: interrupted\n")
        return 130


def run() -> None:
    """The ``o3viz`` console command."""
    sys.exit(main())
