"""The command line, ``python -m o3viz``: finds subcommands in ``o3viz.commands`` and benchmarks
in ``o3viz.benchmarks``, and turns every ``O3vizError`` into one stderr line with exit code 2."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from o3viz import benchmarks, commands
from o3viz.errors import O3vizError


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"o3viz: error: {message} (see --help)\n")
        raise SystemExit(2)


def _modules(package) -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m o3viz",
        description="o3viz: capture a language model's reasoning (attention, verification, "
        "compression) into one trace file, check it, and inspect it.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _modules(commands):
        importlib.import_module(f"o3viz.commands.{name}").register(sub)
    bench = sub.add_parser("bench", help="run a benchmark; prints one 'name: value' line per figure")
    bench_sub = bench.add_subparsers(dest="bench", metavar="NAME", parser_class=_Parser)
    for name in _modules(benchmarks):
        mod = importlib.import_module(f"o3viz.benchmarks.{name}")
        # A module named after a keyword carries a trailing underscore (import_ -> "import").
        p = bench_sub.add_parser(name.rstrip("_"), help=(mod.__doc__ or name).strip().splitlines()[0])
        mod.add_arguments(p)
        p.set_defaults(func=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(args.func(args) or 0)
    except O3vizError as exc:
        sys.stderr.write(f"o3viz: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("o3viz: interrupted\n")
        return 130
