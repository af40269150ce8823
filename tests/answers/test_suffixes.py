"""The answer-forcing suffix per chat template (the real SmolLM2 tokenizer, a tokenizer folder
whose template opens a think block), and the reduction of what follows it to an answer."""

from __future__ import annotations

import pytest

from o3viz.answers.suffixes import (
    PLAIN_SUFFIX,
    THINK_SUFFIX,
    Suffix,
    answer_ended,
    forced_answer,
    suffix_for_prompt,
    suffix_for_template,
    suffix_for_tokenizer,
)
from o3viz.errors import UsageError

pytestmark = []  # light: templates and text; the real tokenizer is a file read, not a model

R1_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}<｜User｜>{{ m['content'] }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜><think>\n{% endif %}"
)


@pytest.fixture(scope="module")
def smol_tokenizer():
    from transformers import AutoTokenizer

    from o3viz.errors import ModelLoadError
    from o3viz.model import resolve_model

    try:
        return AutoTokenizer.from_pretrained(resolve_model(None)[0])
    except (ModelLoadError, OSError) as exc:
        pytest.skip(f"embedded model unavailable: {exc}")


def test_smollm2_is_a_plain_chat_model_and_continues_the_assistant_text(smol_tokenizer):
    from o3viz.run.prompt import layout_prompt

    s = suffix_for_tokenizer(smol_tokenizer)
    assert (s.text, s.style, s.boxed) == (PLAIN_SUFFIX, "plain", False)
    rendered = layout_prompt(smol_tokenizer, "What is 3 + 4?").rendered
    assert rendered.endswith("<|im_start|>assistant\n")  # the suffix continues this assistant turn
    # ": " + "42" tokenizes as "Final answer: 42" does, so the reference reads as the model writes it
    alone = smol_tokenizer(s.text, add_special_tokens=False)["input_ids"]
    joined = smol_tokenizer(s.text + "42", add_special_tokens=False)["input_ids"]
    assert joined[: len(alone)] == alone


def test_a_think_template_from_a_tokenizer_folder_closes_the_block_then_boxes(smol_tokenizer, tmp_path):
    from transformers import AutoTokenizer

    from o3viz.run.prompt import layout_prompt

    smol_tokenizer.save_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(tmp_path)
    tok.chat_template = R1_TEMPLATE
    tok.save_pretrained(tmp_path)  # the template travels in the folder's files
    tok = AutoTokenizer.from_pretrained(tmp_path)
    s = suffix_for_tokenizer(tok)
    assert (s.text, s.style, s.boxed) == (THINK_SUFFIX, "think", True)
    assert s.text == "\n</think>\n\nFinal answer: \\boxed{"
    assert layout_prompt(tok, "What is 3 + 4?").rendered.endswith("<think>\n")
    assert suffix_for_prompt("<｜User｜>Q<｜Assistant｜><think>\nhm").style == "think"


def test_a_closed_think_block_gets_only_the_boxed_tail():
    s = Suffix(THINK_SUFFIX, "think")
    assert s.after("<think>\nso 7\n</think>\nThe answer").text == "\n\nFinal answer: \\boxed{"
    assert s.after("<think>\nstill thinking").text == THINK_SUFFIX


@pytest.mark.parametrize("marker", ["<|channel|>analysis", "[THINK]", "<seed:think>"])
def test_an_unknown_reasoning_template_names_the_suffix_option(marker):
    with pytest.raises(UsageError, match=r"--suffix \(-V suffix=\.\.\.\)") as err:
        suffix_for_template("{{ '" + marker + "' }}")
    assert "\n" not in str(err.value)
    assert suffix_for_template("{{ '" + marker + "' }}", "\\nAnswer: ").text == "\nAnswer: "


def test_a_given_suffix_wins_and_is_bounded():
    assert suffix_for_template(R1_TEMPLATE, "So the answer is ").style == "user"
    with pytest.raises(UsageError, match="suffix"):
        suffix_for_template(None, "x" * 401)


@pytest.mark.parametrize(
    ("suffix", "decoded", "answer"),
    [
        (Suffix(PLAIN_SUFFIX, "plain"), "7 apples.\nSo", "7 apples"),
        (Suffix(PLAIN_SUFFIX, "plain"), " $18\n", "$18"),
        (Suffix(PLAIN_SUFFIX, "plain"), "   \n", None),
        (Suffix(THINK_SUFFIX, "think"), "\\frac{1}{2}}.", "\\frac{1}{2}"),
        (Suffix(THINK_SUFFIX, "think"), "42", "42"),  # cut before the box closed
        (Suffix("So the answer is ", "user"), "9.", "9"),
    ],
)
def test_the_forced_answer_is_reduced_by_the_one_extractor(suffix, decoded, answer):
    assert forced_answer(suffix, decoded) == answer


def test_decoding_stops_when_the_box_closes_or_the_line_ends():
    boxed, plain = Suffix(THINK_SUFFIX, "think"), Suffix(PLAIN_SUFFIX, "plain")
    assert not answer_ended(boxed, "\\frac{1}{2") and answer_ended(boxed, "\\frac{1}{2}}")
    assert not answer_ended(plain, "\n7")  # a leading newline is not the end of the answer
    assert not answer_ended(plain, "7") and answer_ended(plain, "7\n")
