"""An import's generated-token count is what its source says, or unknown (None, shown "—"), never 0."""

from __future__ import annotations

from o3viz.analysis.summary import summarize
from o3viz.importers import import_trace

REC = {"problem": "What is 6 * 7?", "full_response": "6 * 7 = 42. The answer is 42.", "ground_truth": "42"}


def test_an_import_without_a_count_has_an_unknown_token_count():
    assert summarize(import_trace(REC)).tokens is None


def test_an_import_whose_source_counts_its_tokens_keeps_that_count():
    assert summarize(import_trace({**REC, "total_generated_tokens": 518})).tokens == 518
