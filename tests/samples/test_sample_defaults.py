"""One set of sampling defaults: ``o3viz sample``'s flags and the Samples page's form both start
from ``SampleRequest``'s (the page drew at 0.8 and 160 tokens where the command line drew at 0.7
and 256)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.cli.main import build_parser
from o3viz.paths import REPO_ROOT
from o3viz.samples.request import SampleRequest

pytestmark = [pytest.mark.light]

FIELDS = ("n", "temperature", "top_p", "max_new_tokens", "seed", "concurrency", "batch", "request_timeout")


def test_the_command_lines_defaults_are_the_requests():
    args = build_parser().parse_args(["sample", "--task", "gsm8k:3"])
    d = SampleRequest()
    assert {f: getattr(args, f) for f in FIELDS} == {f: getattr(d, f) for f in FIELDS}


def test_the_pages_form_starts_from_the_requests_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("O3VIZ_SAMPLES", str(tmp_path))
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/samples.py").run()
    assert not at.exception, [e.value for e in at.exception]
    d = SampleRequest()
    assert at.number_input(key="smp_n").value == d.n
    assert at.number_input(key="smp_temp").value == d.temperature
    assert at.number_input(key="smp_new").value == d.max_new_tokens
    line = f"--n {d.n} --temperature {d.temperature:g} --max-new-tokens {d.max_new_tokens}"
    assert any(line in c.value for c in at.caption)
