"""Reading chat-completion replies (choices in index order, faults named) and the label
probabilities from a first token's top logprobs."""

from __future__ import annotations

import math

import pytest

from judge.backends.openai_compat import label_probs_from_top, read_choices


def test_label_outside_top_logprobs():
    top = [(" A", math.log(0.6)), ("Summary", math.log(0.3)), ("The", math.log(0.1))]
    probs, logprobs, bounded = label_probs_from_top(top, ("A", "B"))
    assert bounded == ["B"]
    # B gets the smallest listed logprob as an upper bound
    assert probs["A"] == pytest.approx(0.6 / (0.6 + 0.1))
    assert logprobs["B"] == pytest.approx(math.log(0.1))
    assert label_probs_from_top(top, ("X", "Y")) == ({}, {}, [])


def test_read_choices_orders_by_index_and_accepts_servers_without_one():
    def choice(text, **extra):
        return {"message": {"role": "assistant", "content": text}, **extra}

    got = read_choices({"choices": [choice("y", index=1), choice("x", index=0)]})
    assert [c["message"]["content"] for c in got] == ["x", "y"]
    got = read_choices({"choices": [choice("x"), choice("y")]})  # no index: order as sent
    assert [c["message"]["content"] for c in got] == ["x", "y"]
    with pytest.raises(ValueError, match="no-choices"):
        read_choices({"choices": []})
    with pytest.raises(ValueError, match="bad-response: choice 1 has no message"):
        read_choices({"choices": [choice("x"), {"message": None}]})
