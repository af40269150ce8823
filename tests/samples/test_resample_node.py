""" "Resample from here": K continuations of the reply that leads to a node become whole samples of
the set (the prefix, then the continuation), so the set grows and the node holds K more samples;
the Samples page's job does it in the background and says what it added. On a tiny random Llama
with the embedded model's tokenizer: the text is noise, the prefix and the bookkeeping are not."""

from __future__ import annotations

import pytest

from o3viz.samples.sets import read_set, save_set
from o3viz.samples.tree import build_tree
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def tiny():
    from o3viz.testing.builders import make_tiny_llama

    return make_tiny_llama()


def test_resampling_a_node_grows_the_set_through_that_node(tiny, tmp_path):
    from o3viz.app.sampling import ResampleNodeJob

    store = Store(tmp_path / "store")
    save_set(store, "split", split_set(2, 2))
    before = build_tree(read_set(store, "split").traces)
    opening = before.nodes[1]
    assert (opening.samples, opening.steps) == (4, 2)
    job = ResampleNodeJob(store, "split", 1, 3, lambda: tiny, expect_n=4, max_new_tokens=12)
    assert job.wait(600) and job.error is None, job.error
    assert job.result.kept == 3 and "3 continuations from node 1 added, 7 samples in all" in job.result.line
    s = read_set(store, "split")
    after = build_tree(s.traces)
    assert after.nodes[0].samples == 7
    assert after.nodes[1].samples == 7 and after.nodes[1].depth == 0  # the new samples pass through it
    for t in s.traces[4:]:
        info = t.info["sample"]
        assert info["drawn"] == "resampled" and info["from_step"] == "0:2" and info["node"] == 1
        assert t.final.text.startswith("We need the muffins left. First count the muffins baked.")
    again = ResampleNodeJob(store, "split", 1, 1, lambda: tiny, expect_n=4)  # drawn for 4: the set has 7
    assert again.wait(600) and "changed meanwhile" in again.result.line and read_set(store, "split").n == 7
