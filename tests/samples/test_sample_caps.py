"""A set's 256-sample cap is checked before anything is drawn: "Resample from here", firm-up (the
library, the command line and the Samples page's jobs) refuse in one line that says what fits, and
no continuation is asked for. (Growing from an endpoint: ``test_draw_endpoint.py``.)"""

from __future__ import annotations

import pytest

from o3viz.errors import UsageError
from o3viz.samples.resample import firm_up, resample_node, undecided
from o3viz.samples.sets import SampleSet, read_set, save_set
from o3viz.samples.tree import build_tree
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set, text_sample, undecided_set

pytestmark = [pytest.mark.light]


class NeverDraws:
    """A continuer that fails the test when it is asked for anything."""

    name = "never"

    def __getattr__(self, name):
        raise AssertionError(f"a continuation was asked for ({name})")


def filler(n: int) -> list:
    return [text_sample("Another way entirely. The answer is 3.")] * n


def test_resampling_a_node_of_a_full_set_asks_for_no_continuation():
    s = SampleSet("big", split_set(2, 2) + filler(246))
    tree = build_tree(s.traces)
    with pytest.raises(UsageError, match="250 \\+ 8 samples is over the 256 a set holds; add at most 6"):
        resample_node(s, tree, 1, 8, NeverDraws(), sampling=None)


def test_firming_up_a_full_set_asks_for_no_continuation():
    s = SampleSet("big", undecided_set() + filler(251 - len(undecided_set())))
    tree = build_tree(s.traces)
    assert undecided(tree)
    with pytest.raises(UsageError, match="251 \\+ 6 samples is over the 256"):
        firm_up(s, tree, 3, NeverDraws(), sampling=None)


def test_firm_up_on_the_command_line_refuses_before_the_model_loads(monkeypatch, capsys):
    import o3viz.model
    from o3viz.cli.main import main

    save_set(Store(), "big", undecided_set() + filler(251 - len(undecided_set())))
    monkeypatch.setattr(o3viz.model, "load_model", NeverDraws())
    assert main(["sample", "--firm-up", "3", "--set", "big"]) == 2
    assert "251 + 6 samples is over the 256 a set holds; add at most 5" in capsys.readouterr().err
    assert read_set(Store(), "big").n == 251


def test_the_pages_resample_job_refuses_before_the_model_loads(tmp_path):
    from o3viz.app.sampling import ResampleNodeJob

    store = Store(tmp_path / "store")
    save_set(store, "big", split_set(2, 2) + filler(250))
    job = ResampleNodeJob(store, "big", 1, 4, NeverDraws(), expect_n=254)
    assert job.wait(60) and "254 + 4 samples is over the 256" in (job.error or "")
    assert read_set(store, "big").n == 254
