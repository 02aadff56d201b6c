"""Judge runs under faults (issue 9, items 1-3): malformed replies, exceptions, kills and two
runners on one store — with the real ``openai`` client, the real runners and run store, and the
local fake server counting the calls it got and the answers it delivered per prompt.

What every test here checks, in the issue's words: no answered prompt is paid for again, no
answer is lost, every failure is kept with its reason and asked again once on the next run.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from data.io import read_table, save_dataset
from data.schema import Dataset
from judge.backends.base import BackendError, LabelResult
from judge.runs.runners import run_absolute
from judge.store import RunStore
from judge.templates import builtin_templates
from tests.judge.fake_openai import FAULT_CODES, FAULT_KINDS, FakeOpenAI
from tests.judge.judge_runs import (
    ChunkedBackend,
    backend_for,
    cli,
    cli_args,
    isolated_env,  # noqa: F401  (autouse: no user key, a cache per test)
    run_c2,
)

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = builtin_templates()
C2 = TEMPLATES["liusie-c2"]
DEADLINE_S = 120  # generous: only a broken run ever comes near it


def wait_until(condition, what: str, proc=None) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if proc is not None:
            assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def pairwise_dataset(n_contexts: int = 2, n_candidates: int = 4, broken: str | None = None):
    """Candidates "Summary k of article c."; ``broken`` ("doc/s") carries the marker BROKEN."""
    ctx = pd.DataFrame(
        {
            "context_id": [f"doc{c}" for c in range(n_contexts)],
            "text": [f"Article {c}: the council voted on a cycle path." for c in range(n_contexts)],
        }
    )
    rows = []
    for c in range(n_contexts):
        for k in range(n_candidates):
            text = f"Summary {k} of article {c}."
            if broken == f"doc{c}/s{k}":
                text += " BROKEN"
            rows.append((f"doc{c}", f"s{k}", text))
    cands = pd.DataFrame(rows, columns=["context_id", "candidate_id", "text"])
    return Dataset(name="faults", contexts=ctx, candidates=cands)


def fault_dataset(kinds) -> Dataset:
    """One context; a good candidate, then one candidate per fault kind (marker F<k>X)."""
    texts = ["A clear and faithful summary."] + [
        f"Summary number {k} (marker F{k}X)." for k in range(len(kinds))
    ]
    return Dataset(
        name="faults",
        contexts=pd.DataFrame({"context_id": ["d"], "text": ["The article."]}),
        candidates=pd.DataFrame(
            {
                "context_id": ["d"] * len(texts),
                "candidate_id": [f"c{i}" for i in range(len(texts))],
                "text": texts,
            }
        ),
    )


def in_progress(path) -> pd.DataFrame:
    with RunStore(path) as store:
        return store.in_progress()


def stored_count(path) -> int:
    with RunStore(path) as store:
        return store.count()


# ---------------------------------------------------------------------------------------
# item 1 and 3: every fault kind is a failed result; the run finishes; the next run asks
# exactly the failures again, once, and nothing else
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["samples", "expected"])
def test_every_fault_fails_its_call_only_and_is_asked_once_more_next_run(mode, tmp_path):
    assert set(FAULT_CODES) == set(FAULT_KINDS)
    ds = fault_dataset(FAULT_KINDS)
    column = 1 if mode == "samples" else 0  # generate / label requests
    want = {f"c{k + 1}": FAULT_CODES[kind][column] for k, kind in enumerate(FAULT_KINDS)}
    want["c0"] = None
    kw = dict(
        attribute="coherence",
        template=TEMPLATES["liusie-s1" if mode == "samples" else "geval"],
        mode=mode,
        n_samples=1,
        store=tmp_path / "runs.sqlite",
    )
    with FakeOpenAI() as fake:
        for k, kind in enumerate(FAULT_KINDS):
            fake.fault(f"F{k}X", kind, seconds=600.0)  # every time: these prompts always fail
        result = run_absolute(ds, backend=backend_for(fake, max_retries=0, timeout=1.0), **kw)
        df = result.table
        first_calls = fake.calls_by_prompt
        fake.clear_faults()
        again_run = run_absolute(ds, backend=backend_for(fake, max_retries=0, timeout=1.0), **kw)
        again = again_run.table
        calls = fake.calls_by_prompt
        answers = fake.answers_by_prompt
    # the first run finished with a row per candidate; failures are NaN with their reason
    assert len(df) == len(ds.candidates) and not result.cancelled
    failing = {c: code for c, code in want.items() if code is not None}
    for row in df.itertuples():
        if row.candidate_id in failing:
            assert math.isnan(row.score)
            assert row.raw.startswith(f"[error] {failing[row.candidate_id]}:"), row.raw
        else:
            assert not row.raw.startswith("[error]"), row.raw
    assert result.n_failed == len(failing)
    assert result.failures == dict(Counter(failing.values()))
    assert set(first_calls.values()) == {1}  # no retry inside the run (max_retries=0)
    # the next run: every failure asked exactly once more, no answered prompt paid again
    assert again_run.n_failed == 0 and again["raw"].str.startswith("[error]").sum() == 0
    assert again_run.n_called == len(failing)
    assert again_run.n_cached == len(ds.candidates) - len(failing)
    markers = [f"F{k}X" for k, kind in enumerate(FAULT_KINDS) if FAULT_CODES[kind][column]]
    failing_prompts = {p for p in calls if any(m in p for m in markers)}
    assert len(failing_prompts) == len(failing)
    assert all(calls[p] == (2 if p in failing_prompts else 1) for p in calls)
    assert set(answers.values()) == {1}  # each prompt answered (paid) exactly once overall
    assert sum(answers.values()) == len(ds.candidates)


def test_one_off_faults_are_retried_within_the_run(tmp_path):
    ds = fault_dataset(FAULT_KINDS)
    with FakeOpenAI() as fake:
        for k, kind in enumerate(FAULT_KINDS):
            fake.fault(f"F{k}X", kind, times=1, seconds=600.0)
        result = run_absolute(
            ds,
            attribute="coherence",
            template=TEMPLATES["geval"],
            backend=backend_for(fake, max_retries=2, timeout=1.0),
            mode="expected",
            store=tmp_path / "runs.sqlite",
        )
        df = result.table
        calls = fake.calls_by_prompt
    assert result.n_failed == 0 and df["score"].notna().all()
    assert sorted(calls.values()) == [1] + [2] * len(FAULT_KINDS)


def test_a_prompt_that_always_fails_does_not_stop_the_run(tmp_path):
    ds = pairwise_dataset(2, 4, broken="doc0/s1")
    with FakeOpenAI() as fake:
        fake.fault("BROKEN", "null-message")  # every call, every retry
        result = run_c2(
            ds, backend=backend_for(fake, max_retries=2), store=tmp_path / "runs.sqlite"
        )
        df = result.table
        calls = fake.calls_by_prompt
    broken = df["first_id"].eq("s1") | df["second_id"].eq("s1")
    broken &= df["context_id"].eq("doc0")
    assert len(df) == 24 and broken.sum() == 6
    assert df.loc[broken, "p_first"].isna().all() and df.loc[~broken, "p_first"].notna().all()
    assert df.loc[broken, "raw"].str.contains("gave up after 3 attempts").all()
    assert result.n_failed == 6 and result.failures == {"bad-response": 6}
    assert sorted(calls.values()) == [1] * 18 + [3] * 6


# ---------------------------------------------------------------------------------------
# answers received are stored before anything else happens
# ---------------------------------------------------------------------------------------
def test_an_exception_in_the_run_keeps_every_answer_already_sent(tmp_path):
    ds = pairwise_dataset(2, 4)
    path = tmp_path / "runs.sqlite"

    def crash(done, total):
        if done >= 1:
            raise RuntimeError("the progress display crashed")

    with FakeOpenAI(stall_after=1) as fake:

        def release_when_held():  # two more requests reach the server, then it answers them
            deadline = time.monotonic() + DEADLINE_S
            while fake.n_stalled < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            fake.release()

        helper = threading.Thread(target=release_when_held, daemon=True)
        helper.start()
        with pytest.raises(RuntimeError, match="progress display crashed"):
            run_c2(ds, backend=backend_for(fake, max_concurrency=3), store=path, progress=crash)
        helper.join()
        answered = len(fake.answered_prompts)
        assert answered >= 3 and len(fake.work_prompts) == answered
    assert stored_count(path) == answered  # the answers in flight were kept, none lost
    assert in_progress(path).empty  # and the run's claims were released on the way out


def test_an_exception_for_one_request_fails_that_request_only(tmp_path):
    ds = pairwise_dataset(1, 4, broken="doc0/s3")
    store = tmp_path / "runs.sqlite"
    kw = dict(store=store, chunk_size=12)
    backend = ChunkedBackend("BROKEN")
    result = run_c2(ds, backend=backend, **kw)
    df = result.table
    # the chunk raised; each request was then asked alone: 6 answers, 6 failures
    assert backend.calls == [12] + [1] * 12
    bad = df["raw"].str.startswith("[error] exception: ValueError: tokenizer choked", na=False)
    assert bad.sum() == 6 and df.loc[~bad, "p_first"].eq(0.25).all()
    assert result.failures == {"exception": 6}
    backend.poison = "no such text"
    again_run = run_c2(ds, backend=backend, **kw)
    again = again_run.table
    assert backend.calls[13:] == [6]  # only the failures, once each
    assert again["p_first"].notna().all()


class BreakingStream:
    """A streaming backend that answers two requests, then raises."""

    model_id = "breaks"
    supports_logprobs = True

    def describe(self):
        return {"kind": "test", "model": "breaks"}

    def count_tokens(self, text):
        return 1

    def label_probs(self, requests, progress=None):  # pragma: no cover - streaming is used
        raise AssertionError

    def generate(self, requests, progress=None):  # pragma: no cover
        raise AssertionError

    def iter_label_probs(self, requests, cancel=None):
        for i in range(2):
            yield i, LabelResult(probs={"A": 0.5, "B": 0.5})
        raise ConnectionAbortedError("socket closed under us")


def test_a_backend_that_breaks_off_fails_the_rest_and_keeps_what_it_gave(tmp_path):
    ds = pairwise_dataset(1, 3)
    result = run_c2(ds, backend=BreakingStream(), store=tmp_path / "s")
    df = result.table
    assert df["p_first"].notna().sum() == 2 and len(df) == 6
    assert result.failures == {"exception": 4}
    assert df["raw"].str.contains("ConnectionAbortedError", na=False).sum() == 4


def test_backend_errors_still_end_the_run(tmp_path):
    class NoLogprobs(BreakingStream):
        def iter_label_probs(self, requests, cancel=None):
            raise BackendError("this endpoint gives no logprobs")
            yield  # pragma: no cover

    with pytest.raises(BackendError, match="no logprobs"):
        run_c2(pairwise_dataset(1, 3), backend=NoLogprobs(), store=tmp_path / "s")
    assert in_progress(tmp_path / "s").empty


# ---------------------------------------------------------------------------------------
# item 2: two runs on one store (threads of one process here; processes below)
# ---------------------------------------------------------------------------------------
def _run_in_thread(results: dict, name: str, ds, path, backend, cancel=None):
    def work():
        try:
            results[name] = run_c2(ds, backend=backend, store=path, cancel=cancel)
        except BaseException as exc:  # surfaced by the test
            results[name] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_a_second_run_takes_over_what_a_cancelled_first_run_gives_up(tmp_path):
    ds = pairwise_dataset(2, 4)  # 24 prompts
    path = tmp_path / "runs.sqlite"
    out: dict = {}
    with FakeOpenAI(stall_after=5) as fake:
        cancel_a = threading.Event()
        a = _run_in_thread(out, "a", ds, path, backend_for(fake, max_concurrency=3), cancel_a)
        wait_until(lambda: fake.n_stalled >= 1 and stored_count(path) == 5, "A holds requests")
        b = _run_in_thread(out, "b", ds, path, backend_for(fake, max_concurrency=3))
        wait_until(lambda: len(in_progress(path)) == 2, "B waits for A")
        assert stored_count(path) == 5  # B asked nothing A had claimed
        cancel_a.set()
        fake.abandon_stalled()  # A's requests in flight end without an answer
        a.join(DEADLINE_S)
        b.join(DEADLINE_S)
        answers = fake.answers_by_prompt
    first, second = out["a"], out["b"]
    # A got 5 answers (its table may hold more: B's answers, stored meanwhile)
    assert first.cancelled and first.n_called == 5
    assert second.n_rows == 24 and second.table["p_first"].notna().all()
    assert (second.n_cached, second.n_called) == (5, 19)
    assert len(answers) == 24 and set(answers.values()) == {1}  # nothing paid twice
    assert in_progress(path).empty


def test_cancel_while_waiting_reports_the_calls_in_progress(tmp_path):
    ds = pairwise_dataset(1, 4)  # 12 prompts
    path = tmp_path / "runs.sqlite"
    out: dict = {}
    with FakeOpenAI(stall_after=0) as fake:
        a = _run_in_thread(out, "a", ds, path, backend_for(fake, max_concurrency=2))
        wait_until(lambda: fake.n_stalled >= 1, "A holds requests")
        cancel_b = threading.Event()
        b = _run_in_thread(out, "b", ds, path, backend_for(fake), cancel_b)
        wait_until(lambda: len(in_progress(path)) == 2, "B waits for A")
        cancel_b.set()
        b.join(DEADLINE_S)
        waiting = out["b"]
        assert waiting.cancelled and waiting.n_in_progress == 12
        assert waiting.n_rows == 0 and waiting.n_called == 0
        fake.release()
        a.join(DEADLINE_S)
        answers = fake.answers_by_prompt
    assert out["a"].n_rows == 12 and out["a"].n_called == 12
    assert len(answers) == 12 and set(answers.values()) == {1}


# ---------------------------------------------------------------------------------------
# processes: kill -9 with answers not yet handed on; two CLI runs started together; SIGTERM
# ---------------------------------------------------------------------------------------
def _env(tmp_path) -> dict:
    env = {**os.environ, "JUDGESCOPE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    return env


# A run whose main thread stops handing results on after the first one (a stuck progress
# display, a long pause): the answers that keep arriving must reach the store all the same.
STUCK_CONSUMER = """
import sys, time
from data.io import load_dataset
from judge.backends.openai_compat import OpenAIBackend
from judge.runs.runners import run_pairwise
from judge.templates import builtin_templates

def progress(done, total):
    if done >= 1:
        time.sleep(3600)

run_pairwise(
    load_dataset(sys.argv[1]), attribute="coherence",
    template=builtin_templates()["liusie-c2"],
    backend=OpenAIBackend("fake-model", base_url=sys.argv[2], max_concurrency=4),
    store=sys.argv[3], progress=progress,
)
"""


@pytest.mark.slow
def test_sigkill_loses_no_answer_that_arrived_and_resume_pays_nothing_twice(tmp_path):
    ds = pairwise_dataset(3, 5)  # 60 prompts
    folder = save_dataset(ds, tmp_path / "data")
    path = tmp_path / "runs.sqlite"
    env = _env(tmp_path)
    with FakeOpenAI() as fake:
        proc = subprocess.Popen(
            [sys.executable, "-c", STUCK_CONSUMER, str(folder), fake.base_url, str(path)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # 8 requests are sent (twice the concurrency are queued) and all 8 answered, while
        # the main thread took only the first: all 8 must be in the store all the same
        wait_until(lambda: len(fake.answered_prompts) == 8, "8 answers were sent", proc)
        wait_until(lambda: stored_count(path) == 8, "the 8 answers are stored", proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        before = Counter(fake.answered_prompts)
        out = tmp_path / "comparisons.csv"
        rerun = cli(cli_args(folder, fake.base_url, path, out), env)
        _, stderr = rerun.communicate(timeout=DEADLINE_S)
        assert rerun.returncode == 0, stderr
        answers = fake.answers_by_prompt
    # the killed run's claims did not hold the rerun up (its process is gone)
    assert "another run" not in stderr
    assert "8 from the store, 52 new" in stderr
    assert len(answers) == 60 and set(answers.values()) == {1}  # 0 paid again, 0 lost
    assert all(answers[p] == 1 for p in before)
    df = read_table(out, "comparisons")
    assert len(df) == 60 and df["p_first"].notna().all()


@pytest.mark.slow
def test_two_runs_started_together_pay_once_and_both_get_the_full_table(tmp_path):
    ds = pairwise_dataset(3, 5, broken="doc1/s2")  # 60 prompts, 8 of them always fail
    folder = save_dataset(ds, tmp_path / "data")
    path = tmp_path / "runs.sqlite"
    env = _env(tmp_path)
    outs = [tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"]
    with FakeOpenAI(stall_after=0) as fake:  # hold every request until both runs are up
        fake.fault("BROKEN", "not-json")
        args = [cli_args(folder, fake.base_url, path, o, "--max-retries", "0") for o in outs]
        procs = [cli(args[0], env), cli(args[1], env)]
        wait_until(
            lambda: len(in_progress(path)) == 2 and fake.n_stalled >= 1,
            "both runs are registered and one is asking",
        )
        fake.release()
        results = [p.communicate(timeout=DEADLINE_S) for p in procs]
        for proc, (_, stderr) in zip(procs, results, strict=True):
            assert proc.returncode == 0, stderr
            assert "Traceback" not in stderr
        calls_together = fake.calls_by_prompt
        # the next run, with the server fixed: exactly the 8 failures are asked again
        fake.clear_faults()
        third = cli(args[2], env)
        _, stderr3 = third.communicate(timeout=DEADLINE_S)
        assert third.returncode == 0, stderr3
        calls = fake.calls_by_prompt
        answers = fake.answers_by_prompt
    # together: every prompt asked once in all (0 paid twice), failures included
    assert len(calls_together) == 60 and set(calls_together.values()) == {1}
    stderrs = [stderr for _, stderr in results]
    assert sum("60 new" in s for s in stderrs) == 1
    assert sum("60 answered by another run" in s for s in stderrs) == 1
    assert all("8 model call(s) failed (bad-response 8)" in s for s in stderrs)
    tables = [read_table(o, "comparisons") for o in outs[:2]]
    pd.testing.assert_frame_equal(tables[0], tables[1])
    assert len(tables[0]) == 60 and tables[0]["p_first"].isna().sum() == 8
    # the third run: only the failures, once each; nothing answered is paid again
    broken = {p for p in calls if "BROKEN" in p}
    assert len(broken) == 8
    assert all(calls[p] == (2 if p in broken else 1) for p in calls)
    assert len(answers) == 60 and set(answers.values()) == {1}
    assert "52 from the store, 8 new" in stderr3 and "failed" not in stderr3
    assert read_table(outs[2], "comparisons")["p_first"].notna().all()


@pytest.mark.slow
def test_sigterm_stops_the_run_and_releases_its_claims_at_once(tmp_path):
    ds = pairwise_dataset(3, 5)
    folder = save_dataset(ds, tmp_path / "data")
    path = tmp_path / "runs.sqlite"
    with FakeOpenAI(stall_after=10) as fake:
        args = cli_args(folder, fake.base_url, path, tmp_path / "o.csv", "--timeout", "3")
        proc = cli(args, _env(tmp_path))
        wait_until(
            lambda: fake.n_stalled >= 1 and stored_count(path) == 10, "the run is held", proc
        )
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=DEADLINE_S)
        fake.abandon_stalled()
        answered = len(fake.answered_prompts)
    assert proc.returncode == 130, stderr
    assert "terminated; every answer received is in the store" in stderr
    assert "Traceback" not in stderr
    assert stored_count(path) == answered == 10
    assert in_progress(path).empty  # a run elsewhere would not wait for its lease to expire
