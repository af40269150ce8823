"""The shared attention-implementation switch: shared by same-name users, a stack within one run,
waited for by a different implementation from another run, restored on exit."""

from __future__ import annotations

import contextvars
import threading

import pytest

from o3viz.errors import UsageError
from o3viz.hooks.instrument import attention_implementation
from o3viz.testing.builders import make_tiny_llama_model

pytestmark = [pytest.mark.model]


@pytest.fixture
def model():
    return make_tiny_llama_model(vocab_size=50, num_layers=1)


def test_switch_restores_the_previous_implementation(model):
    before = model.config._attn_implementation
    with attention_implementation(model, "eager"):
        assert model.config._attn_implementation == "eager"
        with attention_implementation(model, "sdpa"):  # nested in the same run: a stack
            assert model.config._attn_implementation == "sdpa"
        assert model.config._attn_implementation == "eager"
    assert model.config._attn_implementation == before


def test_another_run_waits_for_a_busy_model_then_switches_it(model):
    """A second tab's run is queued behind the first tab's, not refused ("the model is busy")."""
    seen: list[str] = []
    started = threading.Event()

    def other_run() -> None:
        started.set()
        with attention_implementation(model, "sdpa"):
            seen.append(model.config._attn_implementation)

    with attention_implementation(model, "eager"):
        t = threading.Thread(target=contextvars.Context().run, args=(other_run,))
        t.start()
        assert started.wait(5)
        t.join(0.3)  # it must still be waiting: the first run's implementation is left alone
        assert t.is_alive() and not seen and model.config._attn_implementation == "eager"
    t.join(10)
    assert not t.is_alive() and seen == ["sdpa"]


def test_a_wait_past_its_limit_is_one_line(model, monkeypatch):
    import o3viz.hooks.instrument as instrument

    monkeypatch.setattr(instrument, "WAIT_FOR_SWITCH_S", 0.05)
    errors: list[Exception] = []

    def other_run() -> None:
        try:
            with attention_implementation(model, "sdpa"):
                pass
        except UsageError as exc:
            errors.append(exc)

    with attention_implementation(model, "eager"):
        t = threading.Thread(target=contextvars.Context().run, args=(other_run,))
        t.start()
        t.join(10)
        assert model.config._attn_implementation == "eager"
    assert len(errors) == 1 and "busy with attention implementation 'eager'" in str(errors[0])


def test_same_implementation_is_shared_and_restored_by_the_last_user(model):
    before = model.config._attn_implementation
    outer = attention_implementation(model, "eager")
    outer.__enter__()
    entered, done = threading.Event(), threading.Event()

    def other_run() -> None:
        with attention_implementation(model, "eager"):
            entered.set()
            done.wait(5)

    t = threading.Thread(target=contextvars.Context().run, args=(other_run,))
    t.start()
    assert entered.wait(5)
    outer.__exit__(None, None, None)
    assert model.config._attn_implementation == "eager"  # the other run still holds it
    done.set()
    t.join()
    assert model.config._attn_implementation == before
