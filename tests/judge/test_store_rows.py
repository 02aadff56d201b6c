"""What a stored row is worth (ok, answer-error, failed) and rows from backend results."""

from __future__ import annotations

from judge.backends.base import GenerateResult, LabelResult
from judge.store.rows import result_row, status_of


def test_status_of():
    assert status_of(None) == "ok"
    assert status_of("refusal: no") == "answer-error"
    assert status_of("content_filter: x") == "answer-error"
    assert status_of("no-label: none of A, B") == "answer-error"
    assert status_of("http-500: boom") == "failed"
    assert status_of("timeout: no answer") == "failed"


def test_result_row_from_backend_results():
    ok = result_row(
        "k", "label", LabelResult(probs={"A": 0.4, "B": 0.6}, logprobs={"A": -1, "B": -0.5})
    )
    assert ok.status == "ok" and ok.probs == {"A": 0.4, "B": 0.6}
    bad = result_row("k", "label", LabelResult(error="http-429: slow down"))
    assert bad.status == "failed" and bad.probs is None
    ref = result_row("k", "generate", GenerateResult(None, "refusal: no"))
    assert ref.status == "answer-error" and ref.raw is None
    # neither text nor error is a backend fault, asked again, not the model's empty answer
    none = result_row("k", "generate", GenerateResult(None))
    assert none.status == "failed" and none.error.startswith("bad-response")
    empty = result_row(
        "k", "generate", GenerateResult(None, "empty: the model answered with nothing")
    )
    assert empty.status == "answer-error"
    assert status_of("no-choices: the server returned no choices") == "failed"
    assert status_of("bad-response: JSONDecodeError: Expecting value") == "failed"
    assert status_of("exception: KeyError: 'x'") == "failed"
    txt = result_row("k", "generate", GenerateResult("A", None, 10, 1), model_id="m")
    assert (txt.raw, txt.n_prompt_tokens, txt.n_completion_tokens, txt.model_id) == (
        "A",
        10,
        1,
        "m",
    )
