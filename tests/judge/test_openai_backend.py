"""The OpenAI-compatible backend with the real ``openai`` client against a local fake server."""

from __future__ import annotations

import math
import socket
import threading
import time

import pytest

from judge.backends.base import BackendError, Decoding, GenerateRequest, LabelRequest
from judge.backends.openai_compat import OpenAIBackend
from judge.store import status_of
from tests.judge.fake_openai import (
    FAULT_CODES,
    FAULT_KINDS,
    PROBE_MARK,
    FakeOpenAI,
    expected_p_first,
    expected_score,
    fake_openai_fixture,  # noqa: F401  (registers the fake_openai fixture)
    label_logprobs,
    sampled_answer,
)

SENTINEL = "sk-SENTINEL-9f8e7d6c5b4a39281706"


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def make_backend(fake, **kw) -> OpenAIBackend:
    kw.setdefault("backoff_base", 0.001)
    kw.setdefault("random_state", 0)
    backend = OpenAIBackend(kw.pop("model", "fake-model"), base_url=fake.base_url, **kw)
    backend.sleeps = []
    backend._sleep = backend.sleeps.append  # record waits instead of sleeping
    return backend


# ---------------------------------------------------------------------------------------
# label probabilities
# ---------------------------------------------------------------------------------------
def test_label_probs_match_server_logprobs_and_keep_order(fake_openai):
    backend = make_backend(fake_openai, max_concurrency=4)
    prompts = [f"Passage {i}\n\nWhich summary is better, A or B?" for i in range(20)]
    reqs = [LabelRequest(prompt=p[8:], prefix=p[:8]) for p in prompts]
    done = []
    results = backend.label_probs(reqs, progress=done.append)
    assert sum(done) == 20
    for p, res in zip(prompts, results, strict=True):
        assert res.error is None
        assert res.probs["A"] == pytest.approx(expected_p_first(p), abs=1e-9)
        assert res.probs["A"] + res.probs["B"] == pytest.approx(1.0)
        lp = label_logprobs(p)
        # " A" and "A" merged: log(exp(lp[" A"]) + exp(lp["A"]))
        assert res.logprobs["A"] == pytest.approx(math.log(math.exp(lp[" A"]) + math.exp(lp["A"])))
        assert res.n_prompt_tokens == max(1, len(p) // 4)
    body = fake_openai.bodies[0]
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert fake_openai.n_chat_calls == 20
    assert fake_openai.max_in_flight <= 4


def test_score_labels_give_expected_score(fake_openai):
    backend = make_backend(fake_openai)
    prompt = "Rate the summary on a scale of 1-5."
    res = backend.label_probs([LabelRequest(prompt=prompt, labels=("1", "2", "3", "4", "5"))])[0]
    assert sum(res.probs.values()) == pytest.approx(1.0)
    score = sum(int(k) * v for k, v in res.probs.items())
    assert score == pytest.approx(expected_score(prompt), abs=1e-9)


def test_no_label_among_top_tokens_is_an_error_with_raw(fake_openai):
    backend = make_backend(fake_openai)
    res = backend.label_probs([LabelRequest(prompt="hello", labels=("X", "Y"))])[0]
    assert res.probs == {}
    assert res.error.startswith("no-label:")
    assert '"top"' in res.raw


def test_server_without_logprobs_is_detected_by_check():
    with FakeOpenAI(offer_logprobs=False) as fake:
        backend = make_backend(fake)
        assert backend.supports_logprobs is None
        backend.check()
        assert backend.supports_logprobs is False
        with pytest.raises(BackendError, match="no logprobs"):
            backend.label_probs([LabelRequest(prompt="x")])
        strict = make_backend(fake, logprobs=True)
        with pytest.raises(BackendError, match="returned no logprobs"):
            strict.check()


def test_server_rejecting_logprobs_is_detected_by_check():
    with FakeOpenAI(reject_logprobs=True) as fake:
        backend = make_backend(fake)
        backend.check()
        assert backend.supports_logprobs is False
        with FakeOpenAI() as good:
            ok = make_backend(good)
            ok.check()
            assert ok.supports_logprobs is True


def test_missing_logprobs_without_check_become_errors():
    with FakeOpenAI(offer_logprobs=False) as fake:
        backend = make_backend(fake)
        res = backend.label_probs([LabelRequest(prompt="x")])[0]
        assert res.error.startswith("no-logprobs:")
        assert backend.supports_logprobs is False


# ---------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------
def test_generate_uses_n_and_keeps_sample_order(fake_openai):
    backend = make_backend(fake_openai)
    dec = Decoding(temperature=0.7, top_p=0.9, max_new_tokens=20, seed=11)
    prompts = ["Which is better, A or B? one", "Which is better, A or B? two"]
    reqs = [GenerateRequest(prompt=p, decoding=dec, sample=k) for p in prompts for k in range(3)]
    results = backend.generate(reqs)
    assert fake_openai.n_chat_calls == 2  # one call per prompt with n=3
    for req, res in zip(reqs, results, strict=True):
        assert res.error is None
        assert res.text == sampled_answer(req.prompt, 11, req.sample)
    body = fake_openai.bodies[0]
    assert body["n"] == 3 and body["temperature"] == 0.7 and body["top_p"] == 0.9
    assert body["seed"] == 11 and body["max_tokens"] == 20
    assert backend.supports_n is True


def test_generate_falls_back_to_one_call_per_sample():
    with FakeOpenAI(support_n=False) as fake:
        backend = make_backend(fake)
        dec = Decoding(seed=5)
        reqs = [GenerateRequest(prompt="A or B?", decoding=dec, sample=k) for k in range(4)]
        texts = [r.text for r in backend.generate(reqs)]
        # first call asked n=4 and got one choice; the 3 missing samples got their own calls
        assert fake.n_chat_calls == 4
        assert texts[0] == sampled_answer("A or B?", 5, 0)
        assert texts[1:] == [sampled_answer("A or B?", 5 + k, 0) for k in (1, 2, 3)]
        assert backend.supports_n is False
        backend.generate([GenerateRequest(prompt="again", sample=k) for k in range(2)])
        assert all("n" not in b for b in fake.bodies[4:])


def test_refusals_are_errors_never_scores(fake_openai):
    backend = make_backend(fake_openai)
    reqs = [GenerateRequest(prompt=p) for p in ("REFUSE this", "FILTER this", "EMPTY this")]
    res = backend.generate(reqs)
    assert [r.text for r in res] == [None, None, None]
    assert res[0].error.startswith("refusal: I'm sorry")
    assert res[1].error.startswith("content_filter")
    assert res[2].error.startswith("empty")
    lab = backend.label_probs([LabelRequest(prompt="REFUSE")])[0]
    assert lab.probs == {} and lab.error.startswith("refusal")


# ---------------------------------------------------------------------------------------
# retries
# ---------------------------------------------------------------------------------------
def test_429_retry_after_is_honoured(fake_openai):
    backend = make_backend(fake_openai)
    fake_openai.fail_next(429, 2, retry_after=3)
    res = backend.label_probs([LabelRequest(prompt="p")])[0]
    assert res.error is None
    assert backend.sleeps == [3.0, 3.0]
    assert fake_openai.n_chat_calls == 3
    fake_openai.fail_next(429, 1, retry_after_ms=250)
    backend.label_probs([LabelRequest(prompt="q")])
    assert backend.sleeps[-1] == pytest.approx(0.25)


def test_server_errors_back_off_exponentially_with_jitter(fake_openai):
    backend = make_backend(fake_openai, backoff_base=1.0, backoff_max=100.0)
    fake_openai.fail_next(500, 3)
    res = backend.generate([GenerateRequest(prompt="p")])[0]
    assert res.error is None and res.text
    assert len(backend.sleeps) == 3
    for attempt, s in enumerate(backend.sleeps):
        assert 0.5 * 2**attempt <= s < 1.5 * 2**attempt


def test_retries_give_up_with_an_error_result(fake_openai):
    backend = make_backend(fake_openai, max_retries=2)
    fake_openai.fail_next(503, 5)
    res = backend.generate([GenerateRequest(prompt="p")])[0]
    assert res.text is None
    assert res.error.startswith("http-503") and "3 attempts" in res.error
    assert fake_openai.n_chat_calls == 3


def test_client_errors_are_not_retried(fake_openai):
    backend = make_backend(fake_openai)
    fake_openai.fail_next(400, 1, message="bad request: context too long")
    res = backend.generate([GenerateRequest(prompt="p")])[0]
    assert res.text is None and res.error.startswith("http-400: bad request")
    assert fake_openai.n_chat_calls == 1 and backend.sleeps == []


def test_timeouts_are_retried(fake_openai):
    backend = make_backend(fake_openai, timeout=0.3)
    fake_openai.slow_next(1.5, 1)
    res = backend.generate([GenerateRequest(prompt="p")])[0]
    assert res.error is None and res.text
    assert len(backend.sleeps) == 1
    once = make_backend(fake_openai, timeout=0.3, max_retries=0)
    fake_openai.slow_next(1.5, 1)
    res = once.generate([GenerateRequest(prompt="p")])[0]
    assert res.text is None and res.error.startswith("timeout")


def test_cancel_stops_sending(fake_openai):
    backend = make_backend(fake_openai, max_concurrency=1)
    cancel = threading.Event()
    got = []
    for index, res in backend.iter_label_probs(
        [LabelRequest(prompt=f"p{i}") for i in range(50)], cancel
    ):
        got.append(index)
        assert res.error is None
        cancel.set()
    assert 1 <= len(got) <= 3
    assert fake_openai.n_chat_calls == len(got)


# ---------------------------------------------------------------------------------------
# malformed replies: a failed result for that request, never an exception, never an answer
# ---------------------------------------------------------------------------------------


def test_every_fault_kind_has_an_expected_outcome():
    assert set(FAULT_CODES) == set(FAULT_KINDS)


def _ask(backend, kind_of_request, prompts):
    if kind_of_request == "label":
        return backend.label_probs([LabelRequest(prompt=p) for p in prompts])
    return backend.generate([GenerateRequest(prompt=p) for p in prompts])


@pytest.mark.parametrize("request_kind", ["label", "generate"])
@pytest.mark.parametrize("fault", FAULT_KINDS)
def test_a_fault_fails_only_its_request(fault, request_kind, fake_openai):
    want = FAULT_CODES[fault][0 if request_kind == "label" else 1]
    backend = make_backend(fake_openai, max_retries=0, timeout=1.0, max_concurrency=2)
    fake_openai.fault("BROKEN", fault, seconds=5.0)
    prompts = ["BROKEN prompt", "good prompt one", "good prompt two"]
    results = _ask(backend, request_kind, prompts)  # no exception escapes
    bad, *good = results
    for res in good:
        assert res.error is None
    if want is None:
        assert bad.error is None
        return
    assert bad.error.split(":", 1)[0] == want, bad.error
    assert status_of(bad.error) == "failed"  # asked again on the next run, not an answer
    if request_kind == "label":
        assert bad.probs == {}
    else:
        assert bad.text is None
    assert "Traceback" not in bad.error and len(bad.error) < 500


@pytest.mark.parametrize(
    "fault",
    ["not-json", "text-plain", "bad-utf8", "error-200", "empty-choices", "null-message"],
)
def test_a_malformed_reply_is_retried_like_a_server_error(fault, fake_openai):
    backend = make_backend(fake_openai, max_retries=2)
    fake_openai.fault("flaky", fault, times=1)
    label = backend.label_probs([LabelRequest(prompt="flaky label")])[0]
    assert label.error is None and label.probs["A"] == pytest.approx(
        expected_p_first("flaky label")
    )
    fake_openai.fault("flaky", fault, times=1)
    text = backend.generate([GenerateRequest(prompt="flaky text", decoding=Decoding(seed=1))])[0]
    assert text.error is None and text.text == sampled_answer("flaky text", 1, 0)
    assert fake_openai.calls_by_prompt == {"flaky label": 2, "flaky text": 2}
    assert len(backend.sleeps) == 2 and backend.n_retries == 2


def test_a_prompt_that_always_fails_gives_up_after_the_retries(fake_openai):
    backend = make_backend(fake_openai, max_retries=3)
    fake_openai.fault("doomed", "null-message")
    res = backend.generate([GenerateRequest(prompt="doomed"), GenerateRequest(prompt="fine")])
    assert res[0].error.startswith("bad-response: choice 0 has no message")
    assert "gave up after 4 attempts" in res[0].error
    assert res[1].error is None
    assert fake_openai.calls_by_prompt == {"doomed": 4, "fine": 1}


def test_n_samples_in_one_call_fail_together(fake_openai):
    backend = make_backend(fake_openai, max_retries=0)
    fake_openai.fault("pair", "null-message")
    reqs = [GenerateRequest(prompt="pair", sample=k) for k in range(3)]
    res = backend.generate(reqs)
    assert fake_openai.n_chat_calls == 1  # one call with n=3
    assert [r.error.split(":")[0] for r in res] == ["bad-response"] * 3


def test_check_retries_a_malformed_probe_and_names_a_broken_endpoint(fake_openai):
    fake_openai.fault(PROBE_MARK, "not-json", times=1)
    backend = make_backend(fake_openai)
    backend.check()  # one bad probe reply is a hiccup
    assert backend.supports_logprobs is True
    fake_openai.fault(PROBE_MARK, "text-plain")  # every probe reply is text
    with pytest.raises(BackendError, match="not chat completions .*upstream overloaded"):
        make_backend(fake_openai).check()


def test_a_key_echoed_in_a_malformed_reply_is_scrubbed(fake_openai):
    backend = make_backend(fake_openai, max_retries=0, api_key=SENTINEL)
    fake_openai.fault("echo", "text-plain", body=f"invalid key {SENTINEL} for this proxy")
    res = backend.generate([GenerateRequest(prompt="echo")])[0]
    assert res.error.startswith("bad-response") and "invalid key" in res.error
    assert SENTINEL not in res.error and "SENTINEL" not in res.error


# ---------------------------------------------------------------------------------------
# results reach the caller's sink first; closing the stream waits for answers in flight
# ---------------------------------------------------------------------------------------
def test_sink_sees_each_result_before_it_is_yielded(fake_openai):
    backend = make_backend(fake_openai, max_concurrency=3)
    sunk = {}
    lock = threading.Lock()

    def sink(index, result):
        with lock:
            sunk[index] = result

    reqs = [LabelRequest(prompt=f"p{i}") for i in range(10)]
    seen = 0
    for index, result in backend.iter_label_probs(reqs, sink=sink):
        with lock:
            assert sunk[index] is result
        seen += 1
    assert seen == 10 and len(sunk) == 10


def test_closing_the_stream_keeps_the_answers_in_flight():
    with FakeOpenAI(stall_after=1) as fake:
        backend = make_backend(fake, max_concurrency=3)
        sunk = []
        stream = backend.iter_label_probs(
            [LabelRequest(prompt=f"p{i}") for i in range(12)],
            sink=lambda i, r: sunk.append((i, r)),
        )
        next(stream)  # one answer; two more requests are held by the server

        def release_when_held():
            deadline = time.monotonic() + 60
            while fake.n_stalled < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            fake.release()

        helper = threading.Thread(target=release_when_held, daemon=True)
        helper.start()
        stream.close()  # the consumer stops: nothing new is sent, what is in flight is kept
        helper.join()
        answered = len(fake.answered_prompts)
        assert 3 <= answered < 12
        assert len(fake.work_prompts) == answered  # every request sent was answered ...
        assert len(sunk) == answered  # ... and reached the sink before close() returned
        assert all(r.error is None for _, r in sunk)


# ---------------------------------------------------------------------------------------
# probe, endpoint and key handling
# ---------------------------------------------------------------------------------------
def test_check_passes_and_names_unknown_models(fake_openai):
    make_backend(fake_openai).check()
    with pytest.raises(BackendError, match=r"'gpt-nope' is not served .* available: fake-model"):
        make_backend(fake_openai, model="gpt-nope").check()


def test_check_unknown_model_without_model_list():
    with FakeOpenAI(serve_models=False) as fake:
        make_backend(fake).check()
        with pytest.raises(BackendError, match="'other' is unknown"):
            make_backend(fake, model="other").check()


def test_check_endpoint_down():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(BackendError, match="cannot reach the endpoint"):
        backend.check()


def test_wrong_key_is_reported_without_echoing_it():
    with FakeOpenAI(api_key="right-key") as fake:
        backend = make_backend(fake, api_key=SENTINEL)
        with pytest.raises(BackendError, match="refused the API key") as info:
            backend.check()
        assert SENTINEL not in str(info.value)
        make_backend(fake, api_key="right-key").check()


def test_key_stays_out_of_describe_and_repr(fake_openai):
    backend = make_backend(fake_openai, api_key=SENTINEL)
    assert SENTINEL not in repr(backend.describe()) and SENTINEL not in repr(backend)
    assert SENTINEL not in repr(vars(backend))
    assert backend.describe() == {
        "kind": "openai",
        "model": "fake-model",
        "base_url": fake_openai.base_url,
    }


def test_bad_arguments():
    with pytest.raises(ValueError, match="logprobs must be"):
        OpenAIBackend("m", base_url="http://x/v1", logprobs="yes")
    with pytest.raises(BackendError, match="model name"):
        OpenAIBackend("", base_url="http://x/v1")


def test_a_timeout_below_the_reply_time_warns_once(fake_openai, caplog):
    """A call the client gives up on is still generated by the server (billed), and its retry
    is paid again: the first timeout says so once, with the slowest answer seen."""
    backend = make_backend(fake_openai, timeout=0.3)
    fake_openai.slow_next(1.0, 2)
    with caplog.at_level("WARNING", logger="judge.backends.openai_compat"):
        res = backend.generate([GenerateRequest(prompt="p"), GenerateRequest(prompt="q")])
    assert all(r.error is None for r in res)
    assert backend.n_timeouts == 2 and 0 < backend.slowest_reply < 0.3
    warned = [r.getMessage() for r in caplog.records if "no answer within" in r.getMessage()]
    assert len(warned) == 1 and "(and bill)" in warned[0] and "--timeout" in warned[0]
    # the server heard every call the client gave up on: each was generated twice
    assert fake_openai.n_chat_calls == 4


def test_an_answer_close_to_the_timeout_warns(fake_openai, caplog):
    backend = make_backend(fake_openai, timeout=1.0)
    fake_openai.slow_next(0.9, 1)
    with caplog.at_level("WARNING", logger="judge.backends.openai_compat"):
        res = backend.generate([GenerateRequest(prompt="p")])[0]
    assert res.error is None and backend.n_timeouts == 0
    assert any("close to the timeout of 1 s" in r.getMessage() for r in caplog.records)
