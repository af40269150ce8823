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
        assert info["drawn"] == "resampled" and info["after_step"] == "0:1" and info["node"] == 1
        # cut right after the node's last step, before the space: the model writes what follows
        assert t.final.text[: info["prefix_chars"]].endswith(
            "We need the muffins left. First count the muffins baked."
        )
    again = ResampleNodeJob(store, "split", 1, 1, lambda: tiny, expect_n=4)  # drawn for 4: the set has 7
    assert again.wait(600) and "changed meanwhile" in again.result.line and read_set(store, "split").n == 7


def test_firming_up_grows_both_sides_of_an_undecided_split(tiny):
    from o3viz.branch.continuation import Continuer
    from o3viz.clients import Sampling
    from o3viz.samples.resample import firm_up, undecided
    from o3viz.samples.sets import SampleSet
    from o3viz.testing.sample_sets import undecided_set

    s = SampleSet("undecided", undecided_set())
    tree = build_tree(s.traces)
    assert undecided(tree) == [1]
    best, worst = tree.nodes[1].sides
    model, tokenizer = tiny
    seen = []
    new = firm_up(
        s, tree, 3, Continuer(model=model, tokenizer=tokenizer), Sampling(12, 0.7, 0.95, 7),
        on_progress=lambda done, total: seen.append((done, total)),
    )  # fmt: skip
    assert len(new) == 6 and seen[-1] == (6, 6)
    assert [t.info["sample"]["node"] for t in new] == [best] * 3 + [worst] * 3
    head = "We need the muffins left. First count the muffins baked. "
    assert all(t.final.text.startswith(head + "There are 12 * 4 = 48 muffins.") for t in new[:3])
    assert all(t.final.text.startswith(head + "There are 12 + 4 = 16 muffins.") for t in new[3:])
    after = build_tree(s.traces + new)
    sides = [n for n in after.nodes if n.parent == 1]
    assert sorted(n.samples for n in sides) == [5, 5]  # each side: its 2 samples and 3 new ones
    assert len({t.final.text for t in new[:3]}) > 1  # one stream a side, not one continuation copied
    assert all(t.final.text[: t.info["sample"]["prefix_chars"]].endswith("muffins.") for t in new)


def test_firm_up_continues_a_side_whose_samples_end_at_its_first_step(tiny):
    # Such a side was left as it was ("nothing to continue"), so only the other side grew and the
    # split could stay undecided however many were drawn. Cut right after the step, the model may
    # end the reply there again, as the side's own samples did, or go on.
    from o3viz.branch.continuation import Continuer
    from o3viz.clients import Sampling
    from o3viz.samples.resample import firm_up, undecided
    from o3viz.samples.sets import SampleSet
    from o3viz.testing.sample_sets import text_sample

    head = "We need the muffins left. First count the muffins baked. "
    ends = head + "So 18 are left, and the answer is 18."
    right = head + "There are 12 * 4 = 48 muffins. Then 48 - 30 = 18 are left. The answer is 18."
    wrong = head + "There are 12 * 4 = 48 muffins. Then 48 - 31 = 17 are left. The answer is 17."
    s = SampleSet("ends", [text_sample(t) for t in (ends, ends, right, wrong, wrong)])  # 2/2 vs 1/3
    tree = build_tree(s.traces)
    assert undecided(tree) == [1]
    ending = next(i for i in tree.nodes[1].sides if tree.nodes[i].steps == 1 and not tree.nodes[i].children)
    model, tokenizer = tiny
    new = firm_up(s, tree, 2, Continuer(model=model, tokenizer=tokenizer), Sampling(8, 0.7, 0.95, 3))
    assert len(new) == 4 and sum(t.info["sample"]["node"] == ending for t in new) == 2  # was 0
    for t in new:
        if t.info["sample"]["node"] == ending:
            assert t.final.text[: t.info["sample"]["prefix_chars"]] == ends


def test_firm_up_on_the_command_line_adds_to_the_set_and_reports_the_forks(
    tiny, tmp_path, monkeypatch, capsys
):
    import o3viz.model
    from o3viz.cli.main import main
    from o3viz.testing.sample_sets import undecided_set

    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: tiny)
    save_set(Store(), "undecided", undecided_set(), {"temperature": 0.7, "max_new_tokens": 12})
    assert main(["sample", "--firm-up", "2", "--set", "undecided"]) == 0
    out = capsys.readouterr().out
    assert "4 continuations added after the sides of 1 undecided split(s), 8 samples in all" in out
    assert "forks 0 before" in out
    assert read_set(Store(), "undecided").n == 8


def test_the_firm_up_job_grows_the_set_and_says_how_the_forks_changed(tiny, tmp_path):
    from o3viz.app.sampling import FirmUpJob
    from o3viz.testing.sample_sets import undecided_set

    store = Store(tmp_path / "store")
    save_set(store, "u", undecided_set())
    job = FirmUpJob(store, "u", 2, lambda: tiny, expect_n=4, max_new_tokens=12)
    assert job.wait(600) and job.error is None, job.error
    assert (
        job.result.kept == 4
        and "4 continuations added after the sides of 1 undecided split(s), 8 samples" in job.result.line
    )
    assert "forks: 0 before" in job.result.line and read_set(store, "u").n == 8
    decided = Store(tmp_path / "decided")
    save_set(decided, "split", split_set(3, 3))
    job = FirmUpJob(decided, "split", 2, lambda: pytest.fail("a model was loaded"), expect_n=6)
    assert job.wait(600) and "no undecided split" in job.result.line


def test_a_firm_up_stopped_before_a_continuation_counts_what_it_asked_for(tiny, tmp_path):
    # It said it had asked for K continuations, where it asks for K a side of every split.
    import threading

    from o3viz.app.sampling import FirmUpJob
    from o3viz.testing.sample_sets import undecided_set

    store = Store(tmp_path / "store")
    save_set(store, "u", undecided_set())
    made, jobs = threading.Event(), []

    def load():
        made.wait(60)
        jobs[0].stop()  # stopped once the model is loaded, before the first continuation
        return tiny

    jobs.append(FirmUpJob(store, "u", 3, load, expect_n=4, max_new_tokens=12))
    made.set()
    assert jobs[0].wait(600) and jobs[0].error is None, jobs[0].error
    r = jobs[0].result
    assert (r.kept, r.asked, r.stopped) == (0, 6, True), r  # 3 a side of 1 split
    assert "the set is unchanged" in r.line and read_set(store, "u").n == 4


def test_a_grown_free_prompt_set_grades_its_new_samples_by_the_sets_reference(tiny, monkeypatch, capsys):
    import o3viz.model
    from o3viz.cli.main import main
    from o3viz.testing.sample_sets import QUESTION, REFERENCE

    monkeypatch.setattr(o3viz.model, "load_model", lambda *a, **k: tiny)
    settings = {"prompt": QUESTION, "temperature": 0.7, "max_new_tokens": 8}
    save_set(Store(), "free", split_set(1, 1), settings)
    assert main(["sample", "--grow", "--set", "free", "--n", "2"]) == 0
    s = read_set(Store(), "free")
    assert s.n == 4 and {t.task.reference for t in s.traces[2:]} == {REFERENCE}
    assert main(["sample", "--grow", "--set", "free", "--reference", "7"]) == 2
    assert "a set keeps the reference it was drawn with" in capsys.readouterr().err
