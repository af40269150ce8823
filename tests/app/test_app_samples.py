"""The Samples page through ``AppTest``: with no set, the empty state says how to make one and
offers the form; on sets grouped from the four GSM8K systems (two questions imported with
``o3viz import --all``, then ``o3viz sample --group-dataset``) the first screen has the question,
the majority with its interval, the share reaching the reference, the tree and the fork with both
sides' step and a link into Compare at the fork; a node lists its samples with Inspect links; the
twenty thinking texts make one ungraded tree; 64 samples of about 4k tokens name their collapsed
chains; Compare opened with ``?at=N`` shows both traces' step N."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from o3viz.cli.main import main
from o3viz.paths import REPO_ROOT

pytestmark = [pytest.mark.light]  # AppTest in this process; no model, server or browser

APP = str(REPO_ROOT / "app.py")
LINES = (12, 352)  # 1-based records of the GSM8K solutions file: a fork at the first step, one after step 0
ROPES = "Two ropes each burn for 60 minutes, unevenly. How do you measure 20 minutes?"


@pytest.fixture
def no_samples(tmp_path, monkeypatch):
    samples = tmp_path / "samples"
    samples.mkdir()
    monkeypatch.setenv("O3VIZ_SAMPLES", str(samples))


@pytest.fixture
def gsm8k_sets(shared_data, tmp_path, no_samples):
    """Sets g:q1 and g:q2: the four systems' solutions to two GSM8K questions, grouped by question."""
    src = (shared_data / "gsm8k" / "gsm8k_example_model_solutions.jsonl").read_text().splitlines()
    path = tmp_path / "two.jsonl"
    path.write_text("".join(src[i - 1] + "\n" for i in LINES))
    assert main(["import", str(path), "--all", "--dataset", "g", "--workers", "0"]) == 0
    assert main(["sample", "--group-dataset", "g"]) == 0


def _page(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/samples.py")
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in (*at.markdown, *at.caption, *at.info)).replace("\\", "")  # unescaped


def test_no_set_says_how_to_make_one_and_offers_the_form(no_samples):
    at = _page()
    assert any("No sample sets yet" in i.value and "o3viz sample" in i.value for i in at.info)
    assert any(b.label == "Sample 8" for b in at.button)
    assert any("o3viz sample --task gsm8k:3 --n 8" in c.value for c in at.caption)
    at.button_group(key="smp_src").set_value("prompt").run()
    at.text_input(key="smp_prompt").set_value("  ").run()  # no prompt: one line, before any model loads
    assert not at.exception
    assert next(b for b in at.button if b.label == "Sample 8").disabled
    assert any("give a prompt" in c.value for c in at.caption)


def test_a_free_prompt_takes_a_reference_that_the_command_line_shows(no_samples):
    at = _page()
    at.button_group(key="smp_src").set_value("prompt").run()
    at.text_input(key="smp_prompt").set_value("What is 2 + 3?").run()
    at.text_input(key="smp_ref").set_value("5").run()
    assert not at.exception
    assert any('o3viz sample --prompt "What is 2 + 3?" --reference "5" --n 8' in c.value for c in at.caption)
    assert not next(b for b in at.button if b.label == "Sample 8").disabled


def test_a_gsm8k_set_opens_on_its_fork_with_both_sides_and_compare_at_the_fork(gsm8k_sets):
    at = _page({"set": "g:q2"})
    text = _text(at)
    assert "April is donating plant pots" in text
    assert "n = 4" in text and "majority **10** (:green[the reference]): 2 of 4 (50%, 95% 15%–85%)" in text
    assert "**50%** reach the reference 10 (2 of 4 graded" in text
    assert "**Fork 1** after step 0" in text and "differs by **100%** (95% 7% to 100%)" in text
    assert "April needs 60 daisies + 30 roses" in text  # the better side's step
    assert len(at.get("plotly_chart")) == 1
    link = next(p for p in at.get("page_link") if p.proto.label == "Compare the two sides")
    assert "at=1" in link.proto.query_string and "b=" in link.proto.query_string
    assert at.query_params["set"] == "g:q2"


def test_a_node_lists_its_samples_with_inspect_links(gsm8k_sets):
    at = _page({"set": "g:q2"})
    next(b for b in at.button if b.label == "Select this fork").click().run()
    assert not at.exception
    assert any(m.value.startswith("**Node 1**") for m in at.markdown)
    rows = at.dataframe[0].value
    assert len(rows) == 4 and set(rows["correct"]) == {"✓ right", "✗ wrong"}
    assert all(u.startswith("/inspect?trace=") for u in rows["inspect"])
    assert any(b.label == "Resample from here" for b in at.button)
    # node 1 is "step 0", as its heading says: the continuations start after it, named the same way
    assert "Continues after step 0 of #" in _text(at)
    next(b for b in at.button if b.label == "Forks").click().run()
    assert any("**Fork 1**" in m.value for m in at.markdown)


def test_compare_opens_at_the_fork(gsm8k_sets):
    from o3viz.samples.sets import read_set
    from o3viz.store.store import Store

    s = read_set(Store(), "g:q2")
    link = next(
        p for p in _page({"set": "g:q2"}).get("page_link") if p.proto.label == "Compare the two sides"
    )
    query = dict(kv.split("=", 1) for kv in link.proto.query_string.split("&"))
    a, b = (s.traces[s.keys.index(query[k])] for k in ("trace", "b"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/compare.py")
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (info,) = [i.value.replace("\\", "") for i in at.info if "At the fork" in i.value]
    assert "At the fork, step 1 (step 0 is equivalent in both, final rounds)" in info
    assert a.final.steps[1].text[:30] in info and b.final.steps[1].text[:30] in info
    from o3viz.samples.steps import equivalent, step_key

    assert equivalent(*(step_key(t.final.steps[0].text) for t in (a, b)))  # the shared step before it


def test_the_twenty_thinking_texts_make_one_ungraded_tree(shared_data, no_samples):
    paths = sorted((shared_data / "traces" / "thinking_texts").glob("*.txt"))
    assert main(["sample", "--texts", *map(str, paths), "--question", ROPES, "--set", "ropes"]) == 0
    at = _page()
    text = _text(at)
    assert "n = 20" in text and "no reference: nothing is graded" in text
    assert "No reference answer, so nothing is graded" in text


def test_64_samples_of_4k_tokens_name_their_collapsed_chains(no_samples):
    from o3viz.samples.sets import save_set
    from o3viz.store.store import Store
    from o3viz.testing.sample_sets import long_texts, text_sample

    save_set(Store(), "long", [text_sample(t) for t in long_texts(64, 200)])
    at = _page({"set": "long"})
    assert "n = 64" in _text(at)
    (chart,) = at.get("plotly_chart")
    assert "shared steps" in chart.proto.spec


def test_an_undecided_split_offers_to_firm_it_up_and_a_decided_one_does_not(gsm8k_sets):
    from o3viz.samples.sets import save_set
    from o3viz.store.store import Store
    from o3viz.testing.sample_sets import undecided_set

    save_set(Store(), "u", undecided_set(), {"temperature": 0.6, "max_new_tokens": 64})
    at = _page({"set": "u"})
    assert any(b.label == "Firm up 1 undecided split" for b in at.button)
    assert any(
        "1 split has two sides of 2+ graded samples" in c.value and "8 continuations" in c.value
        for c in at.caption
    )
    at.number_input(key="smp_firm_k").set_value(6).run()
    assert any("draws 12 continuations" in c.value for c in at.caption)
    decided = _page({"set": "g:q2"})  # its one split is a fork
    assert not any(b.label.startswith("Firm up") for b in decided.button)
