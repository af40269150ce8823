"""Reading older trace files: each step upgrades a file's dict by one schema version, so a file
of any supported version reaches ``SCHEMA_VERSION`` before validation.

- 1 → 2: version 2 adds optional fields only (``rounds[].importance``, the step importance
  records of ``o3viz.trace.importance``, and ``rounds[].internals``, MoE routing and the logit
  lens, which version-1 files may already carry); a version-1 file is a valid version-2 file once its
  ``schema_version`` says so.
- 2 → 3: version 3 adds optional ``parent`` (a branch trace: the trace and step it forked from)
  and ``branches`` (the branches a trace lists); a version-2 file has neither and is a valid
  version-3 file once its ``schema_version`` says so.
- 3 → 4: version 4 adds optional ``rounds[].verdicts`` (step verdicts of pluggable verifiers,
  ``o3viz.trace.verdicts``); a version-3 file has none and is a valid version-4 file once its
  ``schema_version`` says so.
- 4 → 5: version 5 adds optional ``rounds[].answers`` (the running answer: stated and forced
  answers per step, ``o3viz.trace.answers``); a version-4 file has none and is a valid version-5
  file once its ``schema_version`` says so.
"""

from __future__ import annotations

from collections.abc import Callable

from o3viz.trace.codec import fail


def _v1_to_v2(d: dict) -> dict:
    return {**d, "schema_version": 2}


def _v2_to_v3(d: dict) -> dict:
    return {**d, "schema_version": 3}


def _v3_to_v4(d: dict) -> dict:
    return {**d, "schema_version": 4}


def _v4_to_v5(d: dict) -> dict:
    return {**d, "schema_version": 5}


MIGRATIONS: dict[int, Callable[[dict], dict]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
}  # from version -> one step up


def migrate(d: dict, version: int, target: int) -> dict:
    """``d`` (a trace file's top-level dict at ``version``) upgraded to ``target``."""
    if version > target or (version < target and version not in MIGRATIONS):
        raise fail("schema_version", f"is {version}; this o3viz reads versions {min(MIGRATIONS)} to {target}")
    while version < target:
        d = MIGRATIONS[version](d)
        version += 1
    return d
