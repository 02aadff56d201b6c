"""The SQLite run store: round trips, WAL, chunked look-ups, bad rows, the default path,
transactions that fail leave nothing, and stores written by older versions."""

from __future__ import annotations

import sqlite3

import pytest

from judge.store import RunItem, RunStore, StoredResult, default_store_path


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


def test_a_write_that_fails_half_way_leaves_nothing(tmp_path):
    """start_run writes the run and then its items in one transaction: an item that cannot be
    stored (no key) rolls the run back too, and the store stays usable."""
    with RunStore(tmp_path / "s.sqlite") as store:
        settings = {"kind": "pairwise", "judge": "m/t", "attribute": "coh"}
        items = [RunItem("k1", "c", 0, "a", "b"), RunItem(None, "c", 0, "b", "a")]
        with pytest.raises(sqlite3.IntegrityError):
            store.start_run("r", settings, items)
        assert store.runs().empty
        store.start_run("r", settings, items[:1])
        assert store.runs()["n_items"].tolist() == [1]


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
