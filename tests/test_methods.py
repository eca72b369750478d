"""Method specs: immutability, the one parser for every shape, and each refusal's message."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from whileai_core import defaults as D
from whileai_core.errors import SpecError
from whileai_core.methods import (BPCO, OPD, OPSD, SAO, Async, Endpoint, FlashReinforce,
                                  GroupwiseGrading, ReinforceAda, RLMethod, method_spec)

URL = "http://localhost:8001/v1"
TEACHER = "PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL"


def test_specs_are_immutable():
    spec = OPSD()
    with pytest.raises(ValidationError):
        spec.anchor = "live"


def test_endpoint_parses_model_at_url_and_keeps_revisions_in_the_model():
    e = Endpoint.parse(f"org/m@step-40@{URL}")
    assert (e.model, e.url, e.api_key_var) == ("org/m@step-40", URL, "VLLM_API_KEY")
    assert str(e) == f"org/m@step-40@{URL}"
    with pytest.raises(SpecError, match="model@http"):
        Endpoint.parse("just-a-model")
    with pytest.raises(SpecError, match="knob `url`.*http"):
        Endpoint("localhost:8001", "m")


@pytest.mark.parametrize("teacher, match", [
    ("gpt-4o", "names a model, not a server"),
    ("gpt-4o@https://api.openai.com/v1", "chat API"),
    (42, "cannot serve as a teacher"),
])
def test_opd_refuses_teachers_without_prompt_logprobs(teacher, match):
    with pytest.raises(SpecError, match=match):
        OPD(teacher)


def test_opd_accepts_the_three_teacher_shapes_and_carries_defaults():
    shapes = [Endpoint(URL, TEACHER), f"{TEACHER}@{URL}", {"url": URL, "model": TEACHER}]
    specs = [OPD(t) for t in shapes]
    assert all(s.teacher == specs[0].teacher for s in specs)
    s = specs[0]
    assert (s.samples, s.temperature, s.max_tokens) == (D.OPD_SAMPLES, 1.0, 8192)


def test_opsd_knobs():
    s = OPSD("answer", anchor="ema")
    assert s.ema_rate == 0.01 and s.resolved_template == D.OPSD_TEMPLATE
    assert OPSD("hint").resolved_template.startswith("Here is a hint")
    assert OPSD(anchor="ema:0.05").ema_rate == 0.05 and OPSD(anchor="live").ema_rate is None
    with pytest.raises(SpecError, match=r"knob `anchor`.*'ema:2'.*default 'ema:0.01'"):
        OPSD(anchor="ema:2")
    with pytest.raises(SpecError, match=r"knob `template`.*\{demonstration\}"):
        OPSD(template="no placeholder")
    with pytest.raises(SpecError, match="unknown knob `bogus`"):
        OPSD(bogus=1)


def test_async_wraps_only_what_prime_rl_can_run_stale():
    assert isinstance(Async("grpo").method, RLMethod)
    assert isinstance(Async({"name": "opd", "teacher": f"m@{URL}"}).method, OPD)
    with pytest.raises(SpecError, match="another Async"):
        Async(Async("grpo"))
    for inner in (FlashReinforce(), SAO(), BPCO(), GroupwiseGrading(), ReinforceAda()):
        with pytest.raises(SpecError, match="cannot wrap"):
            Async(inner)
    with pytest.raises(SpecError, match=r"knob `off_policy_steps`.*>= 0.*default 8"):
        Async("grpo", off_policy_steps=-1)
    with pytest.raises(SpecError, match="knob `correction`"):
        Async("grpo", correction="vtrace")


def test_rl_method_decay_belongs_to_rae_only():
    assert RLMethod("rae", decay=0.9).decay == 0.9
    with pytest.raises(SpecError, match="`decay` is a knob of rae only"):
        RLMethod("grpo", decay=0.9)
    with pytest.raises(SpecError, match=r"knob `decay`.*less than 1"):
        RLMethod("rae", decay=1.0)


@pytest.mark.parametrize("shape, kind", [
    ("grpo", RLMethod), ("max-rl", RLMethod), ({"name": "rae", "decay": 0.5}, RLMethod),
    ({"name": "opd", "teacher": f"m@{URL}"}, OPD), ("opsd", OPSD),
    ({"name": "opsd", "privileged": "answer", "anchor": "live"}, OPSD),
    ({"name": "async", "method": {"name": "opsd"}, "correction": "icepop"}, Async),
    ("flash_reinforce", FlashReinforce), ("SAO", SAO), ("bpco", BPCO),
    ({"name": "groupwise_grading", "mode": "advantage"}, GroupwiseGrading),
    ({"name": "reinforce_ada", "keep": 2}, ReinforceAda),
    ('{"name": "opsd", "anchor": "live"}', OPSD),
])
def test_method_spec_parses_every_shape(shape, kind):
    assert isinstance(method_spec(shape), kind)


def test_method_spec_passes_objects_through_and_refuses_clearly():
    spec = OPSD()
    assert method_spec(spec) is spec
    for bad, match in [("opd", "needs a teacher"), ("self_distill", "'opsd'"),
                       ("icepop", "Async correction"), ("sft", "unknown method"),
                       ({"teacher": "x"}, "no 'name'"), (3.5, "a name, a dict"),
                       ("{not json", "method JSON")]:
        with pytest.raises(SpecError, match=match):
            method_spec(bad)


def test_positional_arguments_have_limits():
    with pytest.raises(SpecError, match="at most 1 positional"):
        OPD(f"m@{URL}", 4)
    with pytest.raises(SpecError, match="given twice"):
        OPSD("hint", privileged="hint")
