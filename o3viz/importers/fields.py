"""The import field options, declared once: which field of a dataset record holds the text, the
question, the answer, the reference, the id and the model. ``import_trace``, the dataset formats,
``ImportOptions`` (bulk import), the preview and the CLI's ``--*-field`` flags all read this one
dataclass; its fields are keyword-only, so it is a plug-in factory in ``o3viz.plugins``' sense and
the CLI generates its flags from ``options_of(ImportFields)``.

>>> ImportFields(text_field="conversations.1.value").given()
{'text_field': 'conversations.1.value'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from o3viz.errors import TraceError, UsageError

__all__ = ["ImportFields", "read_grade"]

_GRADES = {
    **dict.fromkeys(("true", "1", "1.0", "yes", "y", "t", "correct", "right", "pass", "passed"), True),
    **dict.fromkeys(("false", "0", "0.0", "no", "n", "f", "incorrect", "wrong", "fail", "failed"), False),
}


@dataclass(kw_only=True)
class ImportFields:
    """Dataset fields, each a dotted path into a record (``conversations.1.value``); None: the
    format's own guess from the usual names.

    text_field: the field holding the reasoning text
    question_field: the field holding the question
    answer_field: the field holding the final answer
    reference_field: the field holding the correct answer
    id_field: the field holding the item's id
    model_field: the field holding the model that wrote it
    grade_field: the field holding the source's grade of the answer (true/false, 1/0, correct/incorrect)
    """

    text_field: str | None = None
    question_field: str | None = None
    answer_field: str | None = None
    reference_field: str | None = None
    id_field: str | None = None
    model_field: str | None = None
    grade_field: str | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(ImportFields))

    @classmethod
    def of(cls, source: Mapping[str, Any] | object) -> ImportFields:
        """The fields of a mapping or an object holding them (an ``argparse.Namespace``, an
        ``ImportOptions``); missing ones are None."""
        get = source.get if isinstance(source, Mapping) else lambda k: getattr(source, k, None)
        return ImportFields(**{k: get(k) for k in cls.names()})

    @classmethod
    def take(cls, options: dict[str, Any]) -> ImportFields:
        """Remove the ``*_field`` keywords from ``options`` and return them as fields; a
        ``*_field`` keyword that is no field (a typo) is a one-line UsageError."""
        bad = [k for k in options if k.endswith("_field") and k not in cls.names()]
        if bad:
            raise UsageError(f"no import field {bad[0][:64]!r}; the fields are {', '.join(cls.names())}")
        return ImportFields(**{k: options.pop(k) for k in cls.names() if k in options})

    def as_dict(self) -> dict[str, str | None]:
        return {k: v for k, v in asdict(self).items() if k in self.names()}

    def given(self) -> dict[str, str]:
        """The fields that are named (not None)."""
        return {k: v for k, v in self.as_dict().items() if v is not None}


def read_grade(value: Any, where: str) -> bool:
    """A source's grade as true or false: a bool, 0 or 1, or a word such as ``"correct"`` or
    ``"no"`` (any case); anything else is one ``TraceError`` line naming ``where``.

    >>> read_grade(1, "g"), read_grade(" Incorrect ", "g"), read_grade(True, "g")
    (True, False, True)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and len(value) <= 20 and value.strip().lower() in _GRADES:
        return _GRADES[value.strip().lower()]
    shown = repr(value) if isinstance(value, str | int | float) else f"a JSON {type(value).__name__}"
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    raise TraceError(f"{where}: {shown} is not a grade (true/false, 1/0, correct/incorrect, yes/no)")
