"""Batch runs (issue 15, item 3) against the local test server's /v1/files and /v1/batches,
through the real ``openai`` client: the round trip, the same keys and accounting as a live run,
partial failures and expiry, malformed output lines, keys never on disk, and kill-and-resume
of the command line (nothing paid twice)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from data.io import save_dataset
from judge.backends.base import Decoding
from judge.backends.openai_compat.batch_api import BatchService
from judge.batch import (
    BatchError,
    collect_batch,
    give_up_batch,
    import_batch,
    list_batches,
    load_batch,
    pending_count,
    run_table,
    submit_batch,
    write_batch,
)
from judge.runs.plan import plan_absolute, plan_pairwise
from judge.runs.runners import run_absolute, run_pairwise
from judge.store import RunStore
from tests.judge.fake_openai import FakeOpenAI, expected_p_first
from tests.judge.judge_runs import C2, REPO, TEMPLATES, backend_for, c2_prompt, tiny_dataset

DEADLINE_S = 120


def _plan(ds, backend, **kw):
    return plan_pairwise(ds, attribute="coherence", template=C2, backend=backend, **kw)


@contextmanager
def _planned(ds, tmp_path):
    """(the fake server, a run store in ``tmp_path``, a backend on the server, the plan of a
    pairwise run on ``ds``)."""
    with FakeOpenAI() as fake, RunStore(tmp_path / "b.sqlite") as store:
        backend = backend_for(fake)
        yield fake, store, backend, _plan(ds, backend)


def _finish(rec, backend, store, timeout=60.0):
    end = time.monotonic() + timeout
    while (res := collect_batch(rec.batch_id, backend, store)) is None:
        assert time.monotonic() < end, "the batch never ended"
        time.sleep(0.02)
    return res


def _wait(cond, what, proc=None, timeout=DEADLINE_S):
    end = time.monotonic() + timeout
    while not cond():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process ended: {proc.communicate()}")
        assert time.monotonic() < end, f"timed out waiting until {what}"
        time.sleep(0.02)


def test_round_trip_matches_a_live_run(tmp_path):
    ds = tiny_dataset(3, 5)  # 60 ordered pairs
    with _planned(ds, tmp_path) as (fake, store, backend, plan):
        written = write_batch(plan, backend, store)
        assert (written.n_calls, written.n_cached, written.n_lines) == (60, 0, 60)
        first = json.loads(written.jsonl.splitlines()[0])
        assert first["custom_id"] in plan.requests and first["url"] == "/v1/chat/completions"
        body = first["body"]
        assert body["max_tokens"] == 1 and body["logprobs"] is True
        assert body["top_logprobs"] == backend.top_logprobs and body["model"] == "fake-model"
        rec = submit_batch(written, backend, store)
        assert rec.remote_id == "batch_1" and rec.input_file_id
        res = _finish(rec, backend, store)
        assert (res.n_lines, res.n_answered, res.n_failed, res.n_pending) == (60, 60, 0, 0)
        assert res.n_prompt_tokens > 0 and res.n_completion_tokens == 60
        table = run_table(plan, store)
        assert load_batch(store, rec.batch_id).status == "imported"
        # a live run now pays nothing: same keys, everything from the store
        live = run_pairwise(ds, attribute="coherence", template=C2, backend=backend, store=store)
        assert (live.n_cached, live.n_called) == (60, 0)
        assert write_batch(plan, backend, store).record is None
        assert set(fake.answers_by_prompt.values()) == {1} and len(fake.answers_by_prompt) == 60
    for row in table.itertuples():
        want = expected_p_first(c2_prompt(ds, row.context_id, row.first_id, row.second_id))
        assert row.p_first == pytest.approx(want, abs=1e-9)
    # and the table is the one a live run on a fresh store gives
    with FakeOpenAI() as fake, RunStore(tmp_path / "live.sqlite") as store:
        live = run_pairwise(
            ds, attribute="coherence", template=C2, backend=backend_for(fake), store=store
        )
    cols = ["context_id", "first_id", "second_id", "p_first", "judge"]
    assert table[cols].reset_index(drop=True).equals(live.table[cols].reset_index(drop=True))


def test_sampled_ratings_one_line_per_sample_and_equal_to_live(tmp_path):
    ds = tiny_dataset(2, 3)
    tpl = TEMPLATES["liusie-s1"]
    kw = dict(attribute="coherence", template=tpl, n_samples=3, decoding=Decoding(seed=7))
    with FakeOpenAI(support_n=False) as fake, RunStore(tmp_path / "b.sqlite") as store:
        backend = backend_for(fake)
        plan = plan_absolute(ds, backend=backend, mode="samples", domain="summary", **kw)
        written = write_batch(plan, backend, store)
        assert written.n_lines == 18
        seeds = sorted(json.loads(x)["body"]["seed"] for x in written.jsonl.splitlines())
        assert set(seeds) == {7, 8, 9}
        _finish(submit_batch(written, backend, store), backend, store)
        table = run_table(plan, store)
    with FakeOpenAI(support_n=False) as fake, RunStore(tmp_path / "l.sqlite") as store:
        live = run_absolute(ds, backend=backend_for(fake), store=store, domain="summary", **kw)
    cols = ["context_id", "candidate_id", "sample", "score", "raw"]
    a = table[cols].sort_values(cols[:3]).reset_index(drop=True)
    b = live.table[cols].sort_values(cols[:3]).reset_index(drop=True)
    assert a.equals(b)


def test_partial_failure_and_expiry_leave_the_rest_pending(tmp_path):
    ds = tiny_dataset(3, 5)
    with _planned(ds, tmp_path) as (fake, store, backend, plan):
        fake.batch_fail_marker = "Summary 1 of article 0"  # 8 ordered pairs of doc0
        fake.batch_expire_after = 40
        rec = submit_batch(write_batch(plan, backend, store), backend, store)
        res = _finish(rec, backend, store)
        assert load_batch(store, rec.batch_id).status == "expired"
        assert res.n_not_run == 20 and res.failures == {"http-500": 8}
        assert res.n_answered == 32 and res.n_pending == 28
        assert pending_count(plan, store)["n_to_ask"] == 28
        fake.batch_fail_marker, fake.batch_expire_after = None, None
        second = write_batch(plan, backend, store)
        assert (second.n_cached, second.n_lines) == (32, 28)
        res2 = _finish(submit_batch(second, backend, store), backend, store)
        assert res2.n_answered == 28 and pending_count(plan, store)["n_to_ask"] == 0
        assert run_table(plan, store)["p_first"].notna().all()
        # the failed prompts were asked twice (they failed once); no answered one twice
        assert set(fake.answers_by_prompt.values()) == {1} and len(fake.answers_by_prompt) == 60


def test_an_open_batch_keeps_its_calls_out_of_the_next_until_given_up(tmp_path):
    ds = tiny_dataset(2, 4)
    with _planned(ds, tmp_path) as (fake, store, backend, plan):
        first = write_batch(plan, backend, store)
        again = write_batch(plan, backend, store)
        assert again.record is None and again.n_in_open_batches == first.n_lines == 24
        with pytest.raises(BatchError, match="nothing to submit"):
            submit_batch(again, backend, store)
        give_up_batch(first.record.batch_id, store)
        small = write_batch(plan, backend, store, max_requests=10)
        assert (small.n_lines, small.n_left) == (10, 14)
        rest = write_batch(plan, backend, store)
        assert (rest.n_lines, rest.n_in_open_batches) == (14, 10)
        assert len(list_batches(store, plan.run_id)) == 3
        assert not set(small.record.keys) & set(rest.record.keys)


def _output_of(fake, backend, store, plan) -> tuple[str, str]:
    """(batch id, output text) of a batch run at the server but not imported."""
    written = write_batch(plan, backend, store)
    rec = submit_batch(written, backend, store)
    _wait(lambda: fake.batches[rec.remote_id]["status"] == "completed", "the batch is done")
    out_id = fake.batches[rec.remote_id]["output_file_id"]
    return rec.batch_id, BatchService(backend).content(out_id)


def test_malformed_output_lines_are_named_and_their_calls_stay_pending(tmp_path):
    ds = tiny_dataset(2, 4)  # 24 calls
    with _planned(ds, tmp_path) as (fake, store, backend, plan):
        batch_id, text = _output_of(fake, backend, store, plan)
        lines = text.splitlines()
        lines[2] = lines[2][: len(lines[2]) // 2]  # cut short
        lines[4] = json.dumps({"id": "x", "response": {"status_code": 200}})
        other = json.loads(lines[6])
        other["custom_id"] = "f" * 64
        lines[6] = json.dumps(other)
        lines.append(lines[0])  # the same request twice
        bad_body = json.loads(lines[8])
        bad_body["response"]["body"] = {"choices": "nope"}
        lines[8] = json.dumps(bad_body)
        with pytest.raises(BatchError, match="output line 1: not JSON"):
            import_batch(batch_id, store, [("output", "<html>502</html>\n")])
        assert load_batch(store, batch_id).is_open  # a wrong file changes nothing
        res = import_batch(batch_id, store, [("output", "\n".join(lines))])
        joined = "\n".join(res.problems)
        assert "output line 3: not JSON" in joined
        assert "output line 5: no custom_id" in joined
        assert "output line 7: custom_id ffffffffffffffff… is not a request of this batch" in joined
        assert "output line 25: custom_id" in joined and "again (first: output line 1)" in joined
        assert res.failures == {"bad-response": 1}  # a body that is no chat completion
        assert res.n_answered == 20 and res.n_missing == 3 and res.n_pending == 4
        assert pending_count(plan, store)["n_to_ask"] == 4
        with pytest.raises(BatchError, match="imported or given up already"):
            import_batch(batch_id, store, [("output", text)])


def test_run_elsewhere_write_then_import_file(tmp_path):
    ds = tiny_dataset(2, 3)
    with _planned(ds, tmp_path) as (fake, store, backend, plan):
        written = write_batch(plan, backend, store)
        # "elsewhere": the same JSONL run by the server's batch runner under another id
        service = BatchService(backend)
        remote = service.create(service.upload(written.jsonl), {})
        _wait(lambda: fake.batches[remote.id]["status"] == "completed", "the batch is done")
        text = service.content(fake.batches[remote.id]["output_file_id"])
        res = import_batch(written.record.batch_id, store, text)
        assert res.n_answered == written.n_lines == 12
        assert run_table(plan, store)["p_first"].notna().all()


def test_api_key_never_reaches_the_jsonl_or_the_store(tmp_path):
    secret = "sk-test-" + "k3y" * 12
    ds = tiny_dataset(2, 3)
    path = tmp_path / "b.sqlite"
    with FakeOpenAI(api_key=secret) as fake, RunStore(path) as store:
        backend = backend_for(fake, api_key=secret)
        plan = _plan(ds, backend)
        written = write_batch(plan, backend, store)
        assert secret not in written.jsonl
        res = _finish(submit_batch(written, backend, store), backend, store)
        assert res.n_answered == 12
        sent = b"".join(f["content"] for f in fake.files.values())
        assert secret.encode() not in sent
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f


# ---------------------------------------------------------------------------------------
# the command line killed mid-way, then resumed: nothing paid twice, nothing lost
# ---------------------------------------------------------------------------------------
def _cli(args, env):
    return subprocess.Popen(
        [sys.executable, "-m", "judge", "batch", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _setup(tmp_path, fake):
    ds = tiny_dataset(3, 5)
    folder = save_dataset(ds, tmp_path / "data")
    env = {**os.environ, "JUDGESCOPE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    store = str(tmp_path / "runs.sqlite")
    run = ["--dataset", str(folder), "--attribute", "coherence", "--template", "liusie-c2"]
    run += ["--model", "fake-model", "--base-url", fake.base_url, "--store", store]
    return env, store, run


@pytest.mark.slow
def test_poller_killed_mid_batch_then_resumed_pays_nothing_twice(tmp_path):
    with FakeOpenAI() as fake:
        env, store, run = _setup(tmp_path, fake)
        fake.batch_hold, fake.batch_hold_after = threading.Event(), 25
        proc = _cli(["submit", *run, "--wait", "--interval", "0.05"], env)
        _wait(lambda: fake.n_batch_answered == 25 and fake.batches, "25 answered", proc)
        time.sleep(0.3)  # the poller has seen the progress
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        fake.batch_hold.set()
        with RunStore(store) as s:
            (rec,) = list_batches(s)
            assert rec.is_open and s.count() == 0
        again = _cli(["submit", *run], env)  # the open batch keeps its calls: nothing new
        _, err = again.communicate(timeout=DEADLINE_S)
        assert again.returncode == 0 and "60 in an open batch, 0 in this batch" in err, err
        poll = _cli(["poll", rec.batch_id, "--store", store, "--wait", "--interval", "0.05"], env)
        _, err = poll.communicate(timeout=DEADLINE_S)
        assert poll.returncode == 0, err
        assert "imported batch" in err and "60 answers" in err
        assert len(fake.batches) == 1
        answers = fake.answers_by_prompt
    assert len(answers) == 60 and set(answers.values()) == {1}
    with RunStore(store) as s:
        assert s.count("ok") == 60


@pytest.mark.slow
def test_submitter_killed_before_it_heard_the_batch_id_finds_it_again(tmp_path):
    with FakeOpenAI() as fake:
        env, store, run = _setup(tmp_path, fake)
        fake.hold_batch_create = threading.Event()  # created at the server, reply held
        proc = _cli(["submit", *run], env)
        _wait(lambda: fake.batches, "the batch exists at the server", proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        fake.hold_batch_create.set()
        with RunStore(store) as s:
            (rec,) = list_batches(s)
            assert rec.status == "submitting" and rec.remote_id is None
        poll = _cli(["poll", rec.batch_id, "--store", store, "--wait", "--interval", "0.05"], env)
        _, err = poll.communicate(timeout=DEADLINE_S)
        assert poll.returncode == 0, err
        assert "(batch_1)" in err and "60 answers" in err
        assert len(fake.batches) == 1  # found again through its metadata, not resubmitted
        answers = fake.answers_by_prompt
    assert len(answers) == 60 and set(answers.values()) == {1}


def test_cli_import_of_a_garbage_file_is_one_line_and_exit_2(tmp_path):
    with FakeOpenAI() as fake:
        env, store, run = _setup(tmp_path, fake)
        out = tmp_path / "b.jsonl"
        w = _cli(["write", *run, "--out", str(out)], env)
        stdout, err = w.communicate(timeout=DEADLINE_S)
        assert w.returncode == 0, err
        assert len(out.read_text().splitlines()) == 60
        bad = tmp_path / "out.jsonl"
        bad.write_text("not a batch output\n")
        imp = _cli(["import", stdout.strip(), str(bad), "--store", store], env)
        _, err = imp.communicate(timeout=DEADLINE_S)
    assert imp.returncode == 2
    assert "output line 1: not JSON" in err and "Traceback" not in err
