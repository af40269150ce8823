"""The long-capture benchmark's prompt has the length it is named after (an earlier version of
its builder made a "4096-token" prompt of 2,152 tokens)."""

from __future__ import annotations

import pytest

from benchmarks._long_capture_child import long_prompt
from o3viz.run.prompt import layout_prompt
from o3viz.testing.builders import make_tiny_llama

pytestmark = [pytest.mark.model]


@pytest.mark.parametrize("n", [1024, 4096])
def test_the_prompt_is_about_the_named_length(n):
    _, tok = make_tiny_llama()  # the embedded model's tokenizer
    got = len(layout_prompt(tok, long_prompt(tok, n)).ids)
    assert abs(got - n) <= 32, got
