"""CLI subcommands. Each module here defines ``register(subparsers)``; ``o3viz.cli.main`` finds them all.

A command's handler is set with ``parser.set_defaults(func=handler)`` and returns an exit code.
Raise ``o3viz.errors.O3vizError`` (or ``UsageError``/``TraceError``) for bad input: the CLI prints
one line on stderr and exits 2, never a traceback.
"""
