"""The six import field options are one dataclass, ``ImportFields`` (issue 52): ``import_trace``
takes it (or its ``*_field`` keywords), ``ImportOptions`` is one, the CLI flags come from it, and
the formats' table refuses a duplicate through ``o3viz.plugins.Registry``."""

from __future__ import annotations

import json

import pytest

from o3viz.cli.main import main
from o3viz.errors import UsageError
from o3viz.importers import ImportFields, import_trace
from o3viz.importers.bulk import ImportOptions
from o3viz.importers.registry import FORMATS

pytestmark = [pytest.mark.light]

REC = {"out": "2 + 3 = 5, so the sum is 5.", "q": "What is 2+3?", "gold": "5", "uid": "a7"}


def test_fields_and_their_keywords_import_the_same_trace():
    by_fields = import_trace(REC, fields=ImportFields(text_field="out", question_field="q", id_field="uid"))
    by_keywords = import_trace(REC, text_field="out", question_field="q", id_field="uid")
    assert by_fields.task.question == by_keywords.task.question == "What is 2+3?"
    assert by_fields.final.text == by_keywords.final.text
    assert by_fields.provenance.source == by_keywords.provenance.source


def test_a_misspelt_field_or_both_forms_are_refused_in_one_line():
    with pytest.raises(
        UsageError, match="no import field 'txt_field'; the fields are text_field, question_field"
    ):
        import_trace(REC, txt_field="out")
    with pytest.raises(UsageError, match="not both"):
        import_trace(REC, fields=ImportFields(text_field="out"), question_field="q")


def test_import_options_are_import_fields_and_keep_their_fingerprint():
    opts = ImportOptions("d", text_field="out", reference_field="gold")
    assert isinstance(opts, ImportFields) and opts.fields() == ImportFields(
        text_field="out", reference_field="gold"
    )
    # the bytes earlier imports were hashed with: id and model fields count only when set
    assert json.loads(opts.fingerprint()) == {
        "answer_field": None, "claims": True, "question_field": None, "reference_field": "gold", "text_field": "out"
    }  # fmt: skip
    assert json.loads(ImportOptions("d", model_field="m").fingerprint())["model_field"] == "m"


def test_the_cli_reads_every_field_flag_and_lists_the_formats(tmp_path, capsys):
    src = tmp_path / "r.json"
    src.write_text(json.dumps([REC]))
    out = tmp_path / "r.o3trace.json"
    argv = ["import", str(src), "--text-field", "out", "--question-field", "q", "--reference-field", "gold"]
    assert main([*argv, "--id-field", "uid", "--out", str(out), "--no-store"]) == 0
    assert "answer '5' (correct)" in capsys.readouterr().out
    assert main(["import", "--list"]) == 0
    assert capsys.readouterr().out == FORMATS.describe() + "\n"
    assert main(["import"]) == 2 and "give the FILE to import" in capsys.readouterr().err


def test_a_format_name_taken_is_refused_through_the_registry():
    from o3viz.importers import register_format

    first = FORMATS.get("jsonl")
    with pytest.raises(UsageError, match="format 'jsonl' is already registered"):
        register_format("jsonl", lambda raw: True, lambda raw, options: None, reads="jsonl")
    assert FORMATS.get("jsonl") is first
