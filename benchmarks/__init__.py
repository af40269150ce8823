"""Benchmarks for ``python -m benchmarks NAME`` (from the checkout). Each module NAME here defines
``add_arguments(parser)`` and ``run(args) -> int``, and prints one ``name: value`` line per figure.
Speed figures are ratios against a baseline measured in the same run.
"""
