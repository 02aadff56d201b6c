"""Runners end to end: real templates, the real openai client, a local fake server, a store.

Includes the resume test the issue asks for: a real subprocess (``python -m judge run``) is
killed with SIGKILL mid-run, the same command is run again, and the fake server's counts show
zero repeated model calls and zero lost results.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from data.io import read_table, save_dataset, write_table
from data.schema import Dataset
from judge.backends.base import BackendError, Decoding
from judge.backends.openai_compat import OpenAIBackend
from judge.runs.runners import run_absolute
from judge.store import RunStore
from tests._columns import COMPARISON_COLUMNS, RATING_COLUMNS
from tests.judge.fake_openai import (
    FakeOpenAI,
    expected_p_first,
    expected_score,
    fake_openai_fixture,  # noqa: F401  (registers the fake_openai fixture)
    sampled_answer,
)
from tests.judge.judge_runs import (
    C2,
    TEMPLATES,
    ChunkedBackend,
    backend_for,
    c2_prompt,
    cli,
    cli_args,
    isolated_env,  # noqa: F401  (autouse: no user key, a cache per test)
    run_c2,
    tiny_dataset,
)

REPO = Path(__file__).resolve().parents[2]
SENTINEL = "sk-SENTINEL-5d41402abc4b2a76b9719d911017c592"


# ---------------------------------------------------------------------------------------
# pairwise
# ---------------------------------------------------------------------------------------
def test_pairwise_probs_all_pairs_and_resume(fake_openai, tmp_path):
    ds = tiny_dataset()
    store = RunStore(tmp_path / "runs.sqlite")
    seen = []
    result = run_c2(
        ds,
        backend=backend_for(fake_openai),
        store=store,
        progress=lambda done, total: seen.append((done, total)),
    )
    df = result.table
    assert list(df.columns) == [*COMPARISON_COLUMNS, "raw"]
    assert len(df) == 2 * 4 * 3  # every ordered pair of every context
    assert set(df["judge"]) == {"fake-model/liusie-c2"} and set(df["attribute"]) == {"coherence"}
    pairs = set(zip(df["context_id"], df["first_id"], df["second_id"], strict=True))
    assert ("doc0", "s0", "s1") in pairs and ("doc0", "s1", "s0") in pairs  # both orders kept
    for row in df.itertuples():
        assert row.p_first == pytest.approx(
            expected_p_first(c2_prompt(ds, row.context_id, row.first_id, row.second_id)), abs=1e-9
        )
    assert df["sample"].eq(0).all() and df["verdict"].isna().all()
    assert fake_openai.n_chat_calls == 24 + 1  # one probe from check()
    assert seen[0] == (0, 24) and seen[-1] == (24, 24)
    assert result.n_called == 24 and result.n_cached == 0
    # the same run again: everything from the store, not even a probe
    again_run = run_c2(ds, backend=backend_for(fake_openai), store=store)
    again = again_run.table
    assert fake_openai.n_chat_calls == 25
    assert again_run.n_cached == 24 and again_run.n_called == 0
    pd.testing.assert_frame_equal(df, again, check_like=False)
    # re-export from the store alone gives the same table
    pd.testing.assert_frame_equal(store.export_comparisons(result.run_id), df)
    store.close()


def test_pairwise_samples_rows_per_sample(fake_openai, tmp_path):
    ds = tiny_dataset(1, 3)
    dec = Decoding(temperature=0.7, top_p=0.9, max_new_tokens=16, seed=3)
    result = run_c2(
        ds,
        backend=backend_for(fake_openai),
        mode="samples",
        n_samples=4,
        decoding=dec,
        store=tmp_path / "s.sqlite",
    )
    df = result.table
    assert len(df) == 6 * 4
    assert set(df["judge"]) == {"fake-model/liusie-c2/t0.7-p0.9"}
    assert fake_openai.n_chat_calls == 6 + 1  # n=4 per call, plus the probe
    expected_p = {"A": 1.0, "B": 0.0, "tie": 0.5}
    for row in df.itertuples():
        text = sampled_answer(
            c2_prompt(ds, row.context_id, row.first_id, row.second_id), 3, row.sample
        )
        assert row.raw == text
        want = C2.parse_answer(text).value
        assert row.verdict == want
        if want is None:
            assert math.isnan(row.p_first)
        else:
            assert row.p_first == expected_p[want]
    assert sorted(df["sample"].unique()) == [0, 1, 2, 3]


def test_probs_fall_back_to_samples_without_logprobs(tmp_path):
    """The fallback is said in the result's warnings, not through the process-wide warnings
    module (which a background run would share with every other session)."""
    ds = tiny_dataset(1, 3)
    with FakeOpenAI(offer_logprobs=False) as fake:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run_c2(ds, backend=backend_for(fake), n_samples=2, store=tmp_path / "s.sqlite")
            df = result.table
    assert len(result.warnings) == 1
    assert "no token probabilities" in result.warnings[0]
    assert "sampling 2 answers per pair" in result.warnings[0]
    assert not [w for w in caught if "token probabilities" in str(w.message)]
    assert len(df) == 6 * 2 and result.mode == "samples"
    assert set(df["judge"]) == {"fake-model/liusie-c2/t1-p1"}


def test_failures_are_asked_again_refusals_are_not(fake_openai, tmp_path):
    ds = tiny_dataset(1, 3)
    ds.candidates.loc[ds.candidates["candidate_id"] == "s2", "text"] = "REFUSE to judge this."
    store = tmp_path / "s.sqlite"
    kw = dict(mode="samples", n_samples=1, store=store)
    backend = backend_for(fake_openai, max_concurrency=1)
    backend.check()
    fake_openai.fail_next(400, 2, message="bad request")
    result = run_c2(ds, backend=backend, **kw)
    df = result.table
    failed = df[df["raw"].str.startswith("[error] http-400", na=False)]
    refused = df[df["raw"].str.startswith("[refusal]", na=False)]
    # one call at a time in plan order: the failures hit (s0, s1) and (s0, s2)
    assert list(zip(failed["first_id"], failed["second_id"], strict=True)) == [
        ("s0", "s1"),
        ("s0", "s2"),
    ]
    assert failed["p_first"].isna().all()
    assert len(refused) == 3 and refused["p_first"].isna().all()  # the other pairs with s2
    calls = fake_openai.n_chat_calls
    again_run = run_c2(ds, backend=backend_for(fake_openai), **kw)
    again = again_run.table
    assert fake_openai.n_chat_calls - calls == 2 + 1  # the two failures and a probe
    assert not again["raw"].str.startswith("[error]", na=False).any()
    assert again["raw"].str.startswith("[refusal]", na=False).sum() == 4


def test_cancel_then_resume(fake_openai, tmp_path):
    ds = tiny_dataset(2, 4)
    cancel = threading.Event()
    store = tmp_path / "s.sqlite"

    def progress(done, total):
        if done >= 5:
            cancel.set()

    kw = dict(store=store)
    part_run = run_c2(
        ds,
        backend=backend_for(fake_openai, max_concurrency=2),
        progress=progress,
        cancel=cancel,
        **kw,
    )
    part = part_run.table
    assert part_run.cancelled and 5 <= len(part) < 24
    assert part_run.n_missing == 24 - len(part)
    asked = len(fake_openai.work_prompts)
    assert asked == len(part)  # in-flight answers were kept, nothing else was sent
    full_run = run_c2(ds, backend=backend_for(fake_openai), **kw)
    full = full_run.table
    assert len(full) == 24 and not full_run.cancelled
    assert len(fake_openai.work_prompts) == 24  # each prompt asked once over both runs
    assert len(set(fake_openai.work_prompts)) == 24


def test_backend_without_streaming_is_chunked(tmp_path):
    ds = tiny_dataset(2, 4)
    backend = ChunkedBackend()
    result = run_c2(ds, backend=backend, store=tmp_path / "s.sqlite", chunk_size=10)
    df = result.table
    assert backend.calls == [10, 10, 4]
    assert np.allclose(df["p_first"], 0.25) and set(df["judge"]) == {"chunky/liusie-c2"}
    run_c2(ds, backend=backend, store=tmp_path / "s.sqlite")
    assert backend.calls == [10, 10, 4]  # all cached


# ---------------------------------------------------------------------------------------
# absolute
# ---------------------------------------------------------------------------------------
def test_absolute_samples_and_reparse(fake_openai, tmp_path):
    ds = tiny_dataset(1, 3)
    store = RunStore(tmp_path / "s.sqlite")
    tpl = TEMPLATES["liusie-s1"]
    result = run_absolute(
        ds,
        attribute="coherence",
        template=tpl,
        backend=ChunkedBackend(),
        n_samples=2,
        decoding=Decoding(temperature=1.0, top_p=0.9),
        store=store,
    )
    df = result.table
    assert list(df.columns) == [*RATING_COLUMNS, "raw"]
    assert len(df) == 3 * 2 and set(df["prompt_id"]) == {"liusie-s1"}
    assert set(df["judge"]) == {"chunky/t1-p0.9"}
    # template rule "strict": "3 out of 5" -> 3 (scale 1-10: 5 is on the scale but "out of 5"
    # is a scale mention), "Score: 4" -> 4
    assert df["score"].tolist() == [tpl.parse_answer(r).value for r in df["raw"]]
    # the stored raw answers read with the first-number rule, no model involved
    first = store.export_ratings(result.run_id, parse_rule="first")
    assert first["raw"].tolist() == df["raw"].tolist()
    assert first["score"].tolist() == [3.0, 4.0] * 3
    store.close()


def _absolute_on(server, ds, tpl, attribute, store, **options):
    """``run_absolute`` of ``tpl`` on a fake server: its table, and the prompt the run showed
    for each candidate of the one context of ``ds`` (rendered here, apart from the run)."""
    result = run_absolute(
        ds,
        attribute=attribute,
        template=tpl,
        backend=backend_for(server),
        store=store,
        **options,
    )
    spec = tpl.for_attribute(attribute, options.get("domain") or "summary")
    context = ds.contexts["text"][0]
    prompts = {
        c: spec.render(context=context, candidate=t)
        for c, t in zip(ds.candidates["candidate_id"], ds.candidates["text"], strict=True)
    }
    return result.table, prompts


def test_absolute_on_fake_server_samples(fake_openai, tmp_path):
    ds = tiny_dataset(1, 2)
    tpl = TEMPLATES["chiang-lee-story"]
    df, prompts = _absolute_on(
        fake_openai, ds, tpl, "grammaticality", tmp_path / "s.sqlite", n_samples=3, domain="story"
    )
    assert len(df) == 6
    for row in df.itertuples():
        raw = sampled_answer(prompts[row.candidate_id], 0, row.sample)
        assert row.raw == raw
        want = tpl.parse_answer(raw).value
        assert (math.isnan(row.score) and want is None) or row.score == want


def test_geval_expected_score(fake_openai, tmp_path):
    ds = tiny_dataset(1, 3)
    tpl = TEMPLATES["geval"]
    df, prompts = _absolute_on(
        fake_openai, ds, tpl, "coherence", tmp_path / "s.sqlite", mode="expected"
    )
    assert len(df) == 3 and set(df["judge"]) == {"fake-model/expected"}
    for row in df.itertuples():
        assert row.score == pytest.approx(expected_score(prompts[row.candidate_id]), abs=1e-9)
    with FakeOpenAI(offer_logprobs=False) as fake:
        with pytest.raises(BackendError, match="no token probabilities"):
            _absolute_on(fake, ds, tpl, "coherence", tmp_path / "t.sqlite", mode="expected")


# ---------------------------------------------------------------------------------------
# bad input: caught before any model call
# ---------------------------------------------------------------------------------------


def test_endpoint_down_is_caught_before_work(tmp_path):
    with FakeOpenAI() as fake:
        url = fake.base_url
    backend = OpenAIBackend("fake-model", base_url=url)
    with RunStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(BackendError, match="cannot reach the endpoint"):
            run_c2(tiny_dataset(1, 3), backend=backend, store=store)
        assert store.count() == 0


def test_cached_run_works_offline(tmp_path):
    ds = tiny_dataset(1, 3)
    with FakeOpenAI() as fake:
        first_run = run_c2(ds, backend=backend_for(fake), store=tmp_path / "s.sqlite")
        first = first_run.table
        url = fake.base_url
    offline = OpenAIBackend("fake-model", base_url=url)  # nothing listens there any more
    again_run = run_c2(ds, backend=offline, store=tmp_path / "s.sqlite")
    again = again_run.table
    pd.testing.assert_frame_equal(first, again)


# ---------------------------------------------------------------------------------------
# the key never reaches disk
# ---------------------------------------------------------------------------------------
def test_api_key_never_written(tmp_path, monkeypatch):
    ds = tiny_dataset(1, 3)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    store_path = tmp_path / "runs.sqlite"
    with FakeOpenAI(api_key=SENTINEL) as fake:
        # a server error that echoes the key must not carry it into the store either
        fake.fail_next(400, 1, message=f"Incorrect API key provided: {SENTINEL}")
        backend = OpenAIBackend("fake-model", base_url=fake.base_url, max_concurrency=1)
        with RunStore(store_path) as store:
            result = run_c2(ds, backend=backend, store=store, mode="samples", n_samples=2)
            df = result.table
            ratings_run = run_absolute(
                ds,
                attribute="coherence",
                template=TEMPLATES["geval"],
                backend=backend,
                store=store,
                n_samples=1,
            )
            ratings = ratings_run.table
            exported = store.export_comparisons(result.run_id)
            assert exported["raw"].str.contains("redacted", na=False).sum() >= 1
        assert fake.n_answered > 0  # the key did reach the server
    outputs = []
    for name, table in (("comparisons", df), ("ratings", ratings)):
        for ext in ("csv", "json", "parquet"):
            outputs.append(write_table(table, tmp_path / f"{name}.{ext}"))
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert any(p.name.startswith("runs.sqlite") for p in files)
    for path in files + outputs:
        blob = path.read_bytes()
        assert SENTINEL.encode() not in blob, path
        assert b"SENTINEL" not in blob, path
    for table, run in ((df, result), (ratings, ratings_run)):
        assert not table.astype(str).apply(lambda col: col.str.contains("SENTINEL")).any().any()
        assert "SENTINEL" not in repr(table.attrs)
        assert "SENTINEL" not in repr(run) and "SENTINEL" not in repr(run.summary())


# ---------------------------------------------------------------------------------------
# kill -9 mid-run, then resume: zero repeated calls, zero lost results
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_sigkill_mid_run_then_resume(tmp_path):
    ds = tiny_dataset(3, 5)  # 3 x 20 = 60 ordered pairs
    folder = save_dataset(ds, tmp_path / "data")
    store_path = tmp_path / "runs.sqlite"
    out = tmp_path / "comparisons.csv"
    env = {**os.environ, "JUDGESCOPE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("OPENAI_API_KEY", None)
    n_before_kill = 23
    with FakeOpenAI(stall_after=n_before_kill) as fake:
        args = cli_args(folder, fake.base_url, store_path, out)
        proc = cli(args, env)
        deadline = time.monotonic() + 120
        with RunStore(store_path) as watcher:
            # wait until the server holds requests beyond the first 23 and the client has
            # stored all 23 answers it got (while those requests are still in flight)
            while fake.n_stalled < 1 or watcher.count() < n_before_kill:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "run never reached the stall point"
                time.sleep(0.05)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL
            assert watcher.count() == n_before_kill  # nothing answered was lost
        assert not out.exists()
        fake.abandon_stalled()
        assert len(fake.answered_prompts) == n_before_kill
        first_run = list(fake.answered_prompts)

        proc = cli(args, env)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        second_run = fake.answered_prompts[n_before_kill:]
    # zero repeated model calls: the second run asked only what the first did not get
    assert len(second_run) == 60 - n_before_kill
    assert not set(first_run) & set(second_run)
    assert len(set(first_run + second_run)) == 60
    # zero lost results: a full table, every p_first from the server's log-probabilities
    df = read_table(out, "comparisons")
    assert len(df) == 60 and df["p_first"].notna().all()
    for row in df.itertuples():
        want = expected_p_first(c2_prompt(ds, row.context_id, row.first_id, row.second_id))
        assert row.p_first == pytest.approx(want, abs=1e-9)
    assert "37 new" in stderr and "23 from the store" in stderr


# ---------------------------------------------------------------------------------------
# the transformers backend through the runner (tiny random models, offline)
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from tests.judge.tiny_models import tiny_model_dirs

    return tiny_model_dirs(tmp_path_factory)


@pytest.mark.parametrize("name", ["llama", "t5"])
def test_pairwise_with_transformers_backend(tiny_models, name, tmp_path):
    from judge.backends.base import LabelRequest
    from judge.backends.hf import HFBackend

    ds = tiny_dataset(2, 3)
    # both on CPU in float32: the reference check below is tight (device="auto" is bf16 on CUDA)
    backend = HFBackend(
        str(tiny_models[name]),
        answer_prefix=C2.answer_prefix,
        batch_size=4,
        device="cpu",
        dtype="float32",
    )
    store = RunStore(tmp_path / "s.sqlite")
    result = run_c2(ds, backend=backend, store=store, chunk_size=5)
    df = result.table
    assert len(df) == 12 and df["p_first"].between(0, 1).all()
    assert result.n_called == 12
    # one prompt at a time, whole prompt, no prefix sharing: the same probabilities
    ref = HFBackend(
        str(tiny_models[name]),
        answer_prefix=C2.answer_prefix,
        share_prefix=False,
        batch_size=1,
        device="cpu",
        dtype="float32",
    )
    for row in df.itertuples():
        req = LabelRequest(
            prompt=c2_prompt(ds, row.context_id, row.first_id, row.second_id),
            labels=("A", "B"),
            decoder_prefix=C2.decoder_prefix,
        )
        assert row.p_first == pytest.approx(ref.label_probs([req])[0].probs["A"], abs=1e-4)
    again_run = run_c2(ds, backend=backend, store=store)
    again = again_run.table
    assert again_run.n_called == 0
    pd.testing.assert_frame_equal(df, again)
    store.close()


def test_tables_pass_validation_and_feed_arrays(fake_openai, tmp_path):
    from data.arrays import comparisons_to_P
    from data.validate import validate_dataset, validate_table

    ds = tiny_dataset(2, 3)
    store = tmp_path / "s.sqlite"
    probs_run = run_c2(ds, backend=backend_for(fake_openai), store=store)
    probs = probs_run.table
    samples_run = run_c2(
        ds, backend=backend_for(fake_openai), store=store, mode="samples", n_samples=3
    )
    samples = samples_run.table
    ratings_run = run_absolute(
        ds,
        attribute="coherence",
        template=TEMPLATES["liusie-s2"],
        backend=backend_for(fake_openai),
        store=store,
        n_samples=2,
    )
    ratings = ratings_run.table
    for table, name in ((probs, "comparisons"), (samples, "comparisons"), (ratings, "ratings")):
        checked = validate_table(table, name)
        assert len(checked) == len(table)
    full = Dataset(
        name="tiny",
        contexts=ds.contexts,
        candidates=ds.candidates,
        comparisons=pd.concat([probs, samples], ignore_index=True),
        ratings=ratings,
    )
    validate_dataset(full)
    # samples: the matrix entry is the share of A over the samples, ties half
    pm = comparisons_to_P(samples, candidates=ds.candidates)
    row = samples[
        (samples["context_id"] == "doc0")
        & (samples["first_id"] == "s0")
        & (samples["second_id"] == "s1")
    ]
    c = pm.context_ids.index("doc0")
    i, j = pm.candidate_ids[c].index("s0"), pm.candidate_ids[c].index("s1")
    valid = row["p_first"].dropna()
    if len(valid):
        assert pm.P[c, i, j] == pytest.approx(valid.mean())
    else:
        assert math.isnan(pm.P[c, i, j])
