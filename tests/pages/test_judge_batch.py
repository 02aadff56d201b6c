"""The Judge page's batch mode against the local test server (/v1/files, /v1/batches): submit,
progress, import into the dataset like a live run, nothing asked twice, the batch file for
running elsewhere, and the API key kept out of every file."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from judge import batch as jb
from judge.store import RunStore
from tests.judge.fake_openai import FakeOpenAI
from tests.judge.judge_runs import cache_fixture  # noqa: F401  (the cache fixture)

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 300
SECRET = "sk-judgescope-batch-test-0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e"


def _batch_page(fake) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/judge/page.py").run()
    at.text_input(key="judge.model").input("fake-judge")
    at.text_input(key="judge.base_url").input(fake.base_url)
    at.text_input(key="judge.api_key").input(SECRET)
    at.number_input(key="judge.n_contexts").set_value(1).run()
    at.radio(key="judge.run_as").set_value("batch").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_submit_progress_import_and_nothing_twice(cache):
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        fake.batch_delay = 0.01
        # the endpoint works through the batch only when the test lets it: on a busy
        # machine a batch that ends before the page redraws would be imported at once
        fake.batch_hold, fake.batch_hold_after = threading.Event(), 10
        at = _batch_page(fake)
        m = _metrics(at)
        assert (m["Model calls"], m["Answered"], m["To ask"]) == ("30", "0", "30")
        at.button(key="judge.batch.submit").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert _metrics(at)["In open batches"] == "30" and _metrics(at)["To ask"] == "0"
        assert at.get("progress"), "no progress bar for the submitted batch"
        (bid,) = [b.key.rsplit(".", 1)[1] for b in at.button if ".check." in (b.key or "")]
        fake.batch_hold.set()
        end = time.monotonic() + 120
        while not at.success:
            assert time.monotonic() < end, "the batch was never imported"
            time.sleep(0.2)
            at.button(key=f"judge.batch.check.{bid}").click().run()
            assert not at.exception, [e.value for e in at.exception]
            assert not at.error, [e.value for e in at.error]
        done = " ".join(s.value for s in at.success)
        assert "30 model calls — 0 cached" in done and "30 new" in done, done
        new_name = "demo (judged)"
        added = at.session_state["app.datasets"][new_name].comparisons
        added = added[added["judge"] == "fake-judge/liusie-c1"]
        assert len(added) == 30 and added["p_first"].between(0, 1).all()
        m = _metrics(at)
        assert (m["Answered"], m["To ask"]) == ("30", "0")
        # a live run of the same settings pays nothing: same keys in the same store
        at.radio(key="judge.run_as").set_value("live").run()
        assert _metrics(at)["Cached"] == "30"
        assert len(fake.answers_by_prompt) == 30 and set(fake.answers_by_prompt.values()) == {1}
    for path in (p for p in cache.rglob("*") if p.is_file()):
        assert SECRET.encode() not in path.read_bytes(), path


def test_write_file_for_elsewhere_then_import_it(cache):
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        at = _batch_page(fake)
        at.button(key="judge.batch.write").click().run()
        assert not at.exception, [e.value for e in at.exception]
        bid, text = at.session_state["judge.batch.file"]
        lines = [json.loads(x) for x in text.splitlines()]
        assert len(lines) == 30 and SECRET not in text
        assert _metrics(at)["In open batches"] == "30"
        assert at.get("download_button"), "no download button for the batch file"
        # the upload widget cannot be driven by AppTest: import through the same function
        with RunStore(cache / "runs.sqlite") as store:
            rec = jb.load_batch(store, bid)
            assert rec.status == "written" and rec.is_open
        at.button(key=f"judge.batch.drop.{bid}").click().run()
        assert _metrics(at)["To ask"] == "30"  # given up: pending again
