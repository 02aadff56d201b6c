"""The SQLite run store: keys, round trips, failure status, re-parsing and export."""

from __future__ import annotations

import math
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest

from judge.backends.base import GenerateResult, LabelResult
from judge.store import (
    RunItem,
    RunStore,
    StoredResult,
    default_store_path,
    make_key,
    prompt_hash,
    result_row,
    status_of,
)

BACKEND = {"kind": "openai", "model": "m", "base_url": "http://h/v1"}
TEMPLATE = {"id": "liusie-c2", "version": "1", "key": "abc"}


def key(**over):
    kw = dict(
        backend=BACKEND,
        template=TEMPLATE,
        kind="generate",
        prompt_sha=prompt_hash("p"),
        labels=None,
        decoding={"temperature": 1.0, "top_p": 1.0},
        sample=0,
    )
    kw.update(over)
    return make_key(**kw)


def test_key_changes_with_what_changes_answers():
    base = key()
    assert key() == base  # deterministic
    changed = [
        key(backend={**BACKEND, "model": "m2"}),
        key(backend={**BACKEND, "base_url": "http://other/v1"}),
        key(backend={**BACKEND, "kind": "hf"}),
        key(template={**TEMPLATE, "version": "2"}),
        key(template={**TEMPLATE, "key": "abd"}),
        key(template={**TEMPLATE, "id": "liusie-c1"}),
        key(decoding={"temperature": 0.7, "top_p": 1.0}),
        key(prompt_sha=prompt_hash("p ")),
        key(prompt_sha=prompt_hash("p", system="be fair")),
        key(prompt_sha=prompt_hash("p", decoder_prefix="Summary")),
        key(labels=["A", "B"]),
        key(sample=1),
        key(kind="label"),
    ]
    assert len({base, *changed}) == len(changed) + 1


def test_key_ignores_throughput_settings_and_secrets():
    noisy = {**BACKEND, "timeout": 5, "batch_size": 64, "max_concurrency": 3, "api_key": "sk-x"}
    assert key(backend=noisy) == key()


def test_prefix_and_prompt_hash_as_one_text():
    assert prompt_hash("b", prefix="a") == prompt_hash("ab")


def test_status_of():
    assert status_of(None) == "ok"
    assert status_of("refusal: no") == "answer-error"
    assert status_of("content_filter: x") == "answer-error"
    assert status_of("no-label: none of A, B") == "answer-error"
    assert status_of("http-500: boom") == "failed"
    assert status_of("timeout: no answer") == "failed"


def test_round_trip_and_wal(tmp_path):
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        rows = [
            StoredResult(
                key="k1",
                kind="label",
                probs={"A": 0.25, "B": 0.75},
                logprobs={"A": -2.0, "B": -0.9},
                raw='{"token": "B"}',
                n_prompt_tokens=12,
                n_completion_tokens=1,
                model_id="m",
            ),
            StoredResult(key="k2", kind="generate", raw="Summary A", n_prompt_tokens=40),
            StoredResult(key="k3", kind="generate", status="failed", error="http-500: boom"),
            StoredResult(key="k4", kind="generate", status="answer-error", error="refusal: no"),
        ]
        assert store.put_many(rows) == 4
        got = store.get_many(["k1", "k2", "k3", "k4", "missing"])
        assert set(got) == {"k1", "k2", "k4"}  # failed rows are asked again
        assert got["k1"].probs == {"A": 0.25, "B": 0.75}
        assert got["k1"].logprobs == {"A": -2.0, "B": -0.9}
        assert got["k1"].n_prompt_tokens == 12 and got["k1"].model_id == "m"
        assert got["k2"].raw == "Summary A" and got["k2"].created_at > 0
        assert "k3" in store.get_many(["k3"], include_failed=True)
        # a retried call replaces the failure
        store.put_many([StoredResult(key="k3", kind="generate", raw="B")])
        assert store.get_many(["k3"])["k3"].raw == "B"
        assert store.count() == 4 and store.count("failed") == 0
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # a second process/object sees the committed rows
    with RunStore(path) as again:
        assert again.get_many(["k1"])["k1"].probs["A"] == 0.25


def test_many_keys_are_chunked(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        store.put_many(StoredResult(key=f"k{i}", kind="generate", raw=str(i)) for i in range(1234))
        got = store.get_many([f"k{i}" for i in range(1234)] + ["nope"])
        assert len(got) == 1234 and got["k1233"].raw == "1233"


def test_bad_rows_are_rejected(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError, match="kind"):
            store.put_many([StoredResult(key="x", kind="other")])
        with pytest.raises(ValueError, match="status"):
            store.put_many([StoredResult(key="x", kind="label", status="maybe")])
        assert store.count() == 0


def test_default_path_follows_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    assert default_store_path() == tmp_path / "cache" / "runs.sqlite"
    with RunStore() as store:
        store.put_many([StoredResult(key="a", kind="generate", raw="x")])
    assert (tmp_path / "cache" / "runs.sqlite").exists()


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


def _pairwise_run(store):
    items = [RunItem(f"s{k}", "c1", k, "x", "y") for k in range(4)] + [
        RunItem("gone", "c1", 0, "y", "x")
    ]
    answers = ["A", "Summary B is more coherent.", "C", "I cannot decide."]
    store.put_many(StoredResult(key=f"s{k}", kind="generate", raw=a) for k, a in enumerate(answers))
    settings = {
        "kind": "pairwise",
        "mode": "samples",
        "judge": "m/t",
        "attribute": "coherence",
        "labels": ["A", "B"],
        "tie_labels": [],
    }
    store.start_run("run1", settings, items)
    return items


def test_export_comparisons_and_reparse(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        _pairwise_run(store)
        df = store.export_comparisons("run1")
        assert list(df.columns) == [
            "context_id",
            "attribute",
            "judge",
            "first_id",
            "second_id",
            "p_first",
            "verdict",
            "sample",
            "raw",
        ]
        assert len(df) == 4  # "gone" has no stored answer
        assert df["verdict"].tolist() == ["A", "B", None, None]
        assert df["p_first"].tolist()[:2] == [1.0, 0.0]
        assert math.isnan(df["p_first"].iloc[2]) and math.isnan(df["p_first"].iloc[3])
        assert df["raw"].tolist()[2] == "C"
        assert df["sample"].dtype == "int64" and df["p_first"].dtype == "float64"
        # re-read the same raw answers with "C" as a tie label: no model involved
        again = store.export_comparisons("run1", tie_labels=["C"])
        assert again["verdict"].tolist()[2] == "tie" and again["p_first"].iloc[2] == 0.5
        runs = store.runs()
        assert runs.loc[0, "run_id"] == "run1" and runs.loc[0, "n_items"] == 5
        assert runs.loc[0, "n_done"] == 4
        with pytest.raises(ValueError, match="is pairwise; use export_comparisons"):
            store.export_ratings("run1")
        with pytest.raises(KeyError, match="no run 'nope'"):
            store.export_comparisons("nope")


def test_export_probs_with_tie_and_failures(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        items = [RunItem("p1", "c", 0, "a", "b"), RunItem("p2", "c", 0, "b", "a")]
        store.put_many(
            [
                StoredResult(key="p1", kind="label", probs={"A": 0.5, "B": 0.3, "C": 0.2}),
                StoredResult(key="p2", kind="label", status="failed", error="http-500: down"),
            ]
        )
        settings = {
            "kind": "pairwise",
            "mode": "probs",
            "judge": "m/abc",
            "attribute": "coh",
            "labels": ["A", "B"],
            "tie_labels": ["C"],
        }
        store.start_run("r", settings, items)
        df = store.export_comparisons("r")
        assert df["p_first"].iloc[0] == pytest.approx(0.6)
        assert math.isnan(df["p_first"].iloc[1])
        assert df["raw"].iloc[1] == "[error] http-500: down"


def test_export_ratings_with_another_rule(tmp_path):
    with RunStore(tmp_path / "s.sqlite") as store:
        items = [
            RunItem("r0", "c", 0, candidate_id="x"),
            RunItem("r1", "c", 1, candidate_id="x"),
            RunItem("r2", "c", 2, candidate_id="x"),
        ]
        store.put_many(
            [
                StoredResult(key="r0", kind="generate", raw="3 out of 5, maybe 4"),
                StoredResult(key="r1", kind="generate", raw="no idea"),
                StoredResult(key="r2", kind="generate", status="answer-error", error="refusal: no"),
            ]
        )
        settings = {
            "kind": "absolute",
            "mode": "samples",
            "judge": "m/t1-p0.9",
            "attribute": "coh",
            "prompt_id": "chiang-lee-story",
            "scale": [1, 5],
            "parse_rule": "chiang_lee",
        }
        store.start_run("abs", settings, items)
        df = store.export_ratings("abs")
        assert list(df.columns) == [
            "context_id",
            "candidate_id",
            "attribute",
            "judge",
            "prompt_id",
            "sample",
            "score",
            "raw",
        ]
        assert df["score"].iloc[0] == 3.0 and df["sample"].tolist() == [0, 1, 2]
        assert math.isnan(df["score"].iloc[1]) and df["raw"].iloc[1] == "no idea"
        assert df["raw"].iloc[2] == "[refusal] refusal: no"
        strict = store.export_ratings("abs", parse_rule="strict")
        assert strict["score"].iloc[0] == 4.0
        pd.testing.assert_series_equal(df["raw"], strict["raw"])


# ---------------------------------------------------------------------------------------
# claims: two runners on one store never ask the same call at once
# ---------------------------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _set_runner(path, owner, **cols):
    conn = sqlite3.connect(path)
    sets = ", ".join(f"{c} = ?" for c in cols)
    conn.execute(f"UPDATE runners SET {sets} WHERE owner = ?", (*cols.values(), owner))
    conn.commit()
    conn.close()


def test_claims_split_keys_between_runners(tmp_path):
    keys = [f"k{i}" for i in range(5)]
    with RunStore(tmp_path / "s.sqlite") as a, RunStore(tmp_path / "s.sqlite") as b:
        a.put_many([StoredResult(key="k0", kind="generate", raw="A")])  # answered before
        first = a.register_runner(60, now=100.0)
        second = b.register_runner(60, now=100.0)
        got = a.claim(keys[:3], first, since=100.0, now=100.0)
        assert (got.mine, got.done, got.held) == (["k1", "k2"], ["k0"], [])
        # the second runner gets only what nobody holds
        got = b.claim(keys, second, since=100.0, now=101.0)
        assert (got.mine, got.done, got.held) == (["k3", "k4"], ["k0"], ["k1", "k2"])
        # claiming again is idempotent for the holder
        assert a.claim(["k1"], first, since=100.0, now=102.0).mine == ["k1"]
        # storing an answer ends its claim in the same transaction: the waiter sees it done
        a.put_many([StoredResult(key="k1", kind="generate", raw="B")])
        got = b.claim(["k1", "k2"], second, since=100.0, now=103.0)
        assert (got.mine, got.done, got.held) == ([], ["k1"], ["k2"])
        # a runner that gives a key back (cancelled before asking) lets the other take it
        a.release(first, ["k2"])
        assert b.claim(["k2"], second, since=100.0, now=104.0).mine == ["k2"]
        assert b.in_progress().set_index("owner")["n_claimed"].to_dict() == {first: 0, second: 3}
        # ending a runner releases everything it still held
        b.end_runner(second)
        assert a.claim(["k2", "k3", "k4"], first, since=100.0, now=105.0).mine == [
            "k2",
            "k3",
            "k4",
        ]
        assert list(a.in_progress()["owner"]) == [first]


def test_failures_are_asked_again_only_by_a_later_run(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        store.put_many([StoredResult(key="old", kind="generate", status="failed", error="x: y")])
        conn = sqlite3.connect(path)
        conn.execute("UPDATE results SET updated_at = 1000.0")  # failed long ago
        conn.commit()
        conn.close()
        owner = store.register_runner(60)
        since = 2000.0  # a run that started after the failure: asks it again
        assert store.claim(["old"], owner, since=since).mine == ["old"]
        store.put_many([StoredResult(key="old", kind="generate", status="failed", error="x: y")])
        # failed again during this run: not asked again by this run (nor by a twin started
        # before the failure), only by the next one
        assert store.claim(["old"], owner, since=since).done == ["old"]


def test_lease_of_a_dead_runner_expires(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        gone = store.register_runner(30, now=1000.0)
        _set_runner(path, gone, host="another-machine")  # we cannot see its process
        store.claim(["k"], gone, since=1000.0, now=1000.0)
        me = store.register_runner(30, now=1010.0)
        assert store.claim(["k"], me, since=1010.0, now=1029.0).held == ["k"]
        # renewing keeps the claim alive past the first expiry
        assert store.renew_runner(gone, 30, now=1020.0)
        assert store.claim(["k"], me, since=1010.0, now=1049.0).held == ["k"]
        # no renewal for a whole lease: the claim is released and the runner forgotten
        assert store.claim(["k"], me, since=1010.0, now=1051.0).mine == ["k"]
        assert gone not in set(store.in_progress()["owner"])
        assert not store.renew_runner(gone, 30)  # it finds out when it comes back


def test_claims_of_a_dead_process_on_this_host_are_released_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        dead = store.register_runner(3600)
        store.claim(["k1", "k2"], dead, since=0.0)
        _set_runner(path, dead, pid=_dead_pid())
        alive = store.register_runner(3600)
        store.claim(["k3"], alive, since=0.0)  # this process: alive, keeps its claim
        me = store.register_runner(3600)
        got = store.claim(["k1", "k2", "k3"], me, since=0.0)
        assert (got.mine, got.held) == (["k1", "k2"], ["k3"])
        # a recycled pid (same number, another start time) is not the runner's process
        _set_runner(path, alive, proc="not-its-start-time")
        assert store.claim(["k3"], me, since=0.0).mine == ["k3"]


def test_old_stores_learn_that_no_choices_is_a_failure(tmp_path):
    path = tmp_path / "old.sqlite"
    with RunStore(path) as store:
        store.put_many(
            [
                StoredResult(
                    key="a",
                    kind="generate",
                    status="answer-error",
                    error="empty: the server returned no choices",
                ),
                StoredResult(
                    key="b",
                    kind="generate",
                    status="answer-error",
                    error="empty: the model answered with nothing",
                ),
            ]
        )
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 0")  # as written by the version before claims
    conn.execute("UPDATE results SET status = 'answer-error'")
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        got = store.get_many(["a", "b"], include_failed=True)
        assert got["a"].status == "failed"  # a server fault: asked again
        assert got["b"].status == "answer-error"  # the model's empty answer: kept
