"""The ``judge`` column: every kind of name :func:`judge_name` writes reads back the same."""

from __future__ import annotations

import itertools
import math

import pytest

from judge.backends.base import Decoding
from judge.names import JudgeName, decoding_tag, judge_name, parse_judge_name
from judge.runs.plan import ABSOLUTE_MODES, PAIRWISE_MODES

MODELS = (
    "gpt-4o-mini",
    "meta-llama/Llama-2-7b-chat-hf",  # a slash inside the model name
    "org/team/model-v1.5",
    "tiny-t5",
    "t0.7-p0.9",  # a model named like a decoding tag
    "expected",  # and one named like the G-Eval marker
)
TEMPLATES = ("liusie-c1", "chiang-lee.story_2", "expected", "t1-p1")
DECODINGS = (
    Decoding(),  # t1-p1
    Decoding(temperature=0.7, top_p=0.9),
    Decoding(temperature=0.0, top_p=0.95),
    Decoding(temperature=1.25, top_p=0.05),
    Decoding(temperature=2, top_p=1),
    Decoding(temperature=1e-05, top_p=0.5),  # written "1e-05" by :g
    Decoding(temperature=123456, top_p=0.000123),
)


def _cases():
    # pairwise runs name the template; absolute ones keep it in prompt_id (template None)
    for model, template in itertools.product(MODELS, TEMPLATES):
        for mode in PAIRWISE_MODES:
            for dec in DECODINGS if mode == "samples" else (None,):
                yield model, template, template, mode, dec, "pairwise"
    for model, prompt_id in itertools.product(MODELS, TEMPLATES):
        for mode in ABSOLUTE_MODES:
            for dec in DECODINGS if mode == "samples" else (None,):
                yield model, None, prompt_id, mode, dec, "absolute"


@pytest.mark.parametrize("model, template, hint, mode, dec, kind", list(_cases()))
def test_every_name_the_encoder_writes_reads_back(model, template, hint, mode, dec, kind):
    name = judge_name(model, template, mode, dec)
    parsed = parse_judge_name(name, hint, kind)
    assert parsed.model == model
    assert parsed.template == template
    assert parsed.mode == (None if mode == "probs" else mode)
    if mode == "samples":
        assert parsed.temperature == pytest.approx(dec.temperature, rel=1e-6)
        assert parsed.top_p == pytest.approx(dec.top_p, rel=1e-6)
    else:
        assert parsed.temperature is None and parsed.top_p is None
    # and the parts write the same name again
    again = None if parsed.mode != "samples" else Decoding(parsed.temperature, parsed.top_p)
    assert judge_name(parsed.model, parsed.template, parsed.mode or "probs", again) == name


def test_names_look_as_documented():
    assert judge_name("m", "liusie-c2", "probs") == "m/liusie-c2"
    assert judge_name("m", "liusie-c2", "samples", Decoding(0.7, 0.9)) == "m/liusie-c2/t0.7-p0.9"
    assert judge_name("m", None, "samples") == "m/t1-p1"
    assert judge_name("m", None, "expected") == "m/expected"
    assert decoding_tag(Decoding(temperature=1e-05)) == "t1e-05-p1"


def test_imported_names_and_names_without_a_hint():
    # published outputs: the prompt id is a part of the name
    assert parse_judge_name("gpt-3.5-turbo-0301/altmcq", "altmcq") == JudgeName(
        "gpt-3.5-turbo-0301", "altmcq", None, None, None
    )
    assert parse_judge_name("my-model/t0.7-p0.9", "hanna-ep1") == JudgeName(
        "my-model", None, "samples", 0.7, 0.9
    )
    # without a kind a name is read as a ratings one; a pairwise name always has a template
    assert parse_judge_name("m/t1-p1", "t1-p1") == JudgeName("m", None, "samples", 1.0, 1.0)
    assert parse_judge_name("m/t1-p1", "t1-p1", "pairwise") == JudgeName(
        "m", "t1-p1", None, None, None
    )
    assert parse_judge_name("m/expected", "expected", "pairwise").template == "expected"
    with pytest.raises(ValueError, match="kind must be"):
        parse_judge_name("m/x", kind="ratings")
    # a one-part name is the model, whatever it looks like
    assert parse_judge_name("plain", "plain") == JudgeName("plain", None, None, None, None)
    assert parse_judge_name("t0.7-p0.9").model == "t0.7-p0.9"
    # without a hint the template stays in the model (it cannot be told from a model path)
    assert parse_judge_name("org/model/liusie-c1/t0.5-p1") == JudgeName(
        "org/model/liusie-c1", None, "samples", 0.5, 1.0
    )
    nan = parse_judge_name("m/tnan-pinf")
    assert math.isnan(nan.temperature) and nan.top_p == math.inf
