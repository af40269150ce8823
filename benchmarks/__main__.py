"""``python -m benchmarks NAME``: run one benchmark from the checkout. Each prints one
``name: value`` line per figure; speed figures are ratios against a baseline measured in the same run.
Every run also writes its figures to ``docs/results/NAME/`` (``benchmarks._results``); ``--no-record``
leaves that out."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import benchmarks
from benchmarks._results import recorded
from o3viz.cli.main import _Parser, main


def build_parser() -> _Parser:
    parser = _Parser(
        prog="python -m benchmarks",
        description="o3viz benchmarks: each prints one 'name: value' line per figure.",
    )
    sub = parser.add_subparsers(dest="command", metavar="NAME", parser_class=_Parser)
    for mod_info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        name = mod_info.name
        if name.startswith("_"):
            continue
        mod = importlib.import_module(f"benchmarks.{name}")
        # A module named after a keyword carries a trailing underscore (import_ -> "import").
        p = sub.add_parser(name.rstrip("_"), help=(mod.__doc__ or name).strip().splitlines()[0])
        mod.add_arguments(p)
        p.add_argument(
            "--no-record", action="store_true", help="do not write the result file under docs/results/"
        )
        p.set_defaults(func=recorded(name.rstrip("_"), mod))
    return parser


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], build_parser()))
