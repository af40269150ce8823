"""Sample sets are datasets, but a hint that lists the store's datasets names the real ones first
and only counts the sample sets: twenty sets no longer hide the one dataset a user meant."""

from __future__ import annotations

import pytest

from o3viz.cli.main import main
from o3viz.samples.sets import SET_TAG, save_set
from o3viz.store import dataset_names as names_module
from o3viz.store.store import Store
from o3viz.testing.sample_sets import split_set, text_sample

pytestmark = [pytest.mark.light]


def test_a_missing_dataset_names_the_real_ones_before_the_sample_sets(capsys):
    store = Store()
    for i in range(20):
        save_set(store, f"set{i:02}", split_set(2, 2))
    store.add(text_sample("So 3. The answer is 3."), source="import", dataset="gsm8k")
    assert main(["library", "list", "--dataset", "gsm8", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "(datasets: gsm8k; 20 sample sets (o3viz sample --list))" in err
    assert "set00" not in err


def test_the_store_and_the_sets_share_one_tag():
    assert names_module.SET_TAG == SET_TAG == "sample-set"
