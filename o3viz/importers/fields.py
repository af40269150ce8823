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

from o3viz.errors import UsageError

__all__ = ["ImportFields"]


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
    """

    text_field: str | None = None
    question_field: str | None = None
    answer_field: str | None = None
    reference_field: str | None = None
    id_field: str | None = None
    model_field: str | None = None

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
