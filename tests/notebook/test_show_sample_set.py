"""``o3viz.show(sample_set)``: a ``SampleSet`` or a set's name shows the tree of where its samples
part ways (headline, figure, forks with both sides); two names still pair two datasets, and a name
that is no set is not taken for one."""

from __future__ import annotations

import json
import re

import pytest

from o3viz.notebook import StaticView, show
from o3viz.samples.sets import read_set, save_set
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set

pytestmark = [pytest.mark.light]


def _figure(page: str) -> dict:
    return json.loads(re.search(r'id="o3-figs">(.*?)</script>', page, re.S).group(1))[0]


def test_a_set_or_its_name_shows_its_tree():
    store = Store()
    s = save_set(store, "split", split_set(3, 3))
    for view in (show(s), show("split")):
        assert isinstance(view, StaticView)
        page = view.html()
        assert "split: n = 6" in page and "majority" in page and "Fork 1" in page
        assert "12 * 4 = 48" in page and "12 + 4 = 16" in page  # both sides' step
        fig = _figure(page)
        assert fig["layout"]["title"]["text"].startswith("Where 6 samples part ways")
    assert read_set(store, "split").n == 6


def test_a_name_that_is_no_set_is_not_a_tree():
    from o3viz.errors import UsageError

    with pytest.raises(UsageError, match="name two datasets"):
        show("no-such-set")


def test_a_tie_names_no_majority():
    """A four-way tie named its first answer "majority" in the notebook (``o3viz tree`` and the
    Samples page already said it is a tie)."""
    from o3viz.testing.sample_sets import text_sample

    traces = [text_sample(f"Count them all. The answer is {x}.") for x in (3, 5, 7, 9)]
    page = show(save_set(Store(), "tie", traces)).html()
    assert "no majority: a 4-way tie at 1 sample each" in page
    assert "majority 3" not in page
