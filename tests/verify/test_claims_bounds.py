"""The claim checker stays linear and bounded on hostile input: each adversarial input of issue
16 takes at most 2 s (CPU time of the checking thread, so neither the other jobs on a shared
machine nor other threads of this process count), a megabyte of any text stays under 500 MB,
huge arithmetic is estimated rather than computed, and a hypothesis property times every example
of the pattern families."""

from __future__ import annotations

import threading
import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from o3viz.testing.cpu import best_cpu_seconds
from o3viz.testing.cpu import cpu_seconds as cpu_of
from o3viz.verify.claims.check import check_claims, check_text
from o3viz.verify.claims.regions import MAX_CHECK_CHARS, clean_cut, numeric_lines, pieces

LIMIT_S = 2.0
MB = 1 << 20

ADVERSARIAL = {
    "answer_is_then_spaces": "the answer is" + " " * 2000 + "x",
    "power_tower": "((9^400)^400)^400 = 5",
    "unclosed_boxed": "\\boxed{" * 20000,
    "newlines_20k": "\n" * 20000,
    "newlines_100k": "\n" * 100000,
    "space_newline_100k": " \n" * 100000,
    "digit_groups": "1" + ",234" * 25000 + "5 = 5",
    "annotation_then_spaces": "<<2+3=5>>" + " " * 100000,
    "ten_mb_of_claims": "So 16 - 3 - 4 = 9 eggs and 20% of 50 is 10.\n" * 230000,
    "answer_words_1mb": "the answer is " * 75000,
    "long_sum": "1+" * 300000 + "1 = 5",
    "frac_digits": "\\frac " * 100000,
    "open_parens": "(" * 200000 + "1 = 1",
    "currency_run": "$ " * 200000 + "1 + 1 = 3",
    "final_answer_lines": "Answer:\n" * 100000,
    # issue 23's verbal forms: each starts at a fixed word, and a failed operand never rescans
    "sum_of_long_number": "the sum of " + "1" * 300000 + " x",
    "sum_of_repeated": "the sum of 1 and " * 60000,
    "difference_repeated": "the difference between 3 and " * 40000,
    "squared_repeated": "2 squared " * 100000,
    "percent_of_repeated": "5 percent of " * 80000,
    "number_words_divided": "twenty divided by " * 60000,
    # issue 63's competition LaTeX: math delimiters, sets, factorials, subscripts, bold, labels
    "math_delimiters": "\\(" * 200000 + "1 = 1",
    "display_runs": "\\[1\\] " * 100000,
    "labels_across_displays": "\\[ \\text{Total} = 1 + 2 \\] " * 30000,
    "boxed_set": "So 1 + 1 = 2.\n\\boxed{" + "1, " * 60000 + "}",
    "plus_minus": "1 \\pm " * 100000 + "1 = 2",
    "factorials": "12!" * 100000 + " = 5",
    "subscripts": "0.1_" * 100000 + " = 5",
    "ordinals": "1st + " * 100000 + "2 = 5th",
    "bold_stars": "5** 3 " * 100000,
    "mod_chains": "2 + 2 = 5 \\pmod{3} " * 60000,
    "spaced_fracs": "\\frac {" * 100000,
    "thousands_blanks": "so 10 500 and " * 100000,  # O(1) per number: no pair to check
    "property_of": "the units digit of " * 60000 + "3^3 is 7",
}


def cpu_seconds(text: str) -> float:
    return best_cpu_seconds(check_claims, text, budget=LIMIT_S)


def test_the_clock_bills_the_check_alone_not_another_thread_busy_in_this_process():
    """``process_time`` billed every thread of the process to the check (CI failed this file's
    bounds late in a 36-minute run: 2.08 s for a check that takes 0.45 s alone)."""
    stop = threading.Event()

    def burn():
        while not stop.is_set():
            sum(range(1000))

    other = threading.Thread(target=burn, daemon=True)
    other.start()
    try:
        idle = cpu_of(time.sleep, 0.5)  # this thread waits; the other one burns CPU meanwhile
    finally:
        stop.set()
        other.join()
    assert idle < 0.1


def _spin(seconds: float) -> None:
    """Burn ``seconds`` of this thread's CPU time."""
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        pass


def test_a_check_over_budget_once_is_timed_again_and_one_slow_every_time_still_fails():
    calls = []

    def slow_first(seconds: float) -> None:
        calls.append(1)
        if len(calls) == 1:
            _spin(seconds)

    assert best_cpu_seconds(slow_first, 0.3, budget=0.2) < 0.1 and len(calls) == 2
    assert best_cpu_seconds(_spin, 0.3, budget=0.2) >= 0.3


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_input_is_checked_within_two_seconds(name):
    assert cpu_seconds(ADVERSARIAL[name]) <= LIMIT_S


def test_power_tower_is_unverifiable_too_large_not_computed():
    (claim,) = check_claims("((9^400)^400)^400 = 5")
    assert (claim.verdict, claim.note, claim.value) == ("unverifiable", "too large", "")
    assert [c.verdict for c in check_claims("2^10 = 1024")] == ["correct"]  # small powers still run


def test_huge_product_is_estimated_before_it_is_computed():
    text = " * ".join(["9" * 1000] * 12) + " = 7"  # 12,000 digits, within one piece
    (claim,) = check_claims(text)
    assert (claim.verdict, claim.note) == ("unverifiable", "too large")


def test_text_past_the_budget_is_reported_unchecked_not_dropped_silently():
    line = "So 16 - 3 - 4 = 9 eggs.\n"
    report = check_text(line * (MAX_CHECK_CHARS // len(line) + 1000))
    assert report.unchecked_chars > 0 and "not checked" in report.status
    small = check_text(line * 10)
    assert (small.unchecked_chars, small.status) == (0, "ok")


def test_lines_without_numbers_are_skipped_but_claims_keep_their_offsets():
    text = "Prose only here.\n" * 3 + "Then 17*23 = 381.\n" + "More prose.\n"
    spans = numeric_lines(text)
    assert [text[a:b] for a, b in spans] == ["Then 17*23 = 381.\n"]
    (claim,) = check_claims(text)
    assert text[claim.start : claim.end] == "17*23 = 381" and claim.step == 3
    assert check_claims("twelve eggs\n7 * 8 = 54") != []  # number words count as numeric lines


def test_pieces_cut_long_lines_at_sentence_ends_so_claims_survive():
    text = "So 16 - 3 - 4 = 9 eggs. " * 1500  # one 36k-character line: three pieces
    parts = pieces(text, [(0, len(text))], size=1000)
    assert all(clean_cut(text, b) for _, b in parts) and parts[-1][1] == len(text)
    claims = check_claims(text)
    assert len(claims) == 1500 and {c.verdict for c in claims} == {"correct"}


def test_one_megabyte_of_claims_stays_under_500_mb():
    text = ("So 16 - 3 - 4 = 9 eggs and 20% of 50 is 10.\n" * (MB // 45 + 1))[:MB]
    tracemalloc.start()
    try:
        check_claims(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 500 * MB


# --- hypothesis: the pattern families, each example timed --------------------------------------

FAMILIES = [
    " ",
    "\n",
    " \n",
    "\t",
    "(",
    "[",
    "{",
    "\\boxed{",
    "\\frac{",
    "<<",
    ",234",
    "1",
    "9^",
    "^(",
    "= ",
    "the answer is ",
    "Answer: ",
    "#### ",
    "$",
    "-",
    "twelve times ",
    "x",
    "\\sqrt{",
]


@st.composite
def adversarial_text(draw) -> str:
    """A few hostile pieces, each repeated up to 200k times, joined (capped at 1 MB)."""
    parts = draw(
        st.lists(
            st.tuples(st.sampled_from(FAMILIES), st.integers(1, 200_000)),
            min_size=1,
            max_size=4,
        )
    )
    tail = draw(st.sampled_from(["", "5", " = 5", "1 = 2", "}", ")"]))
    return ("".join(piece * n for piece, n in parts) + tail)[:MB]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(adversarial_text())
def test_any_megabyte_of_hostile_patterns_is_checked_within_two_seconds(text):
    assert cpu_seconds(text) <= LIMIT_S


def test_a_claim_cut_by_a_piece_boundary_is_never_wrong():
    text = "1 + " * 6000 + "1 = 2"  # one line longer than a piece: cut inside the sum
    assert [c for c in check_claims(text) if c.verdict == "wrong"] == []
