"""The Judge page: template preview, custom-template messages, a full run against a local fake
OpenAI-compatible server (progress, results merged, resume from the run store), the API key
kept out of every file and export, imports of judge outputs, and the real benchmarks."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from data.paths import data_dirs
from pages.report import export
from pages.shell import ui
from tests.judge.fake_openai import FakeOpenAI
from tests.judge.judge_runs import cache_fixture  # noqa: F401  (the cache fixture)

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 300
SECRET = "sk-judgescope-page-test-5f4dcc3b5aa765d61d8327deb882cf99"


def _judge_page(benchmark: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    if benchmark is not None:
        at.selectbox(key="data.benchmark").set_value(benchmark).run()
        at.button(key="data.load").click().run()
    at.switch_page("pages/judge/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _raw_judge(at: AppTest):
    """The Raw outputs tab's judge picker (its key changes with every run taken in)."""
    (pick,) = [s for s in at.selectbox if (s.key or "").startswith("judge.raw_judge")]
    return pick


def _wait_for_run(at: AppTest, timeout: float = 120.0) -> None:
    """Rerun the page until the background run has been taken in (success or warning)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        if at.success or at.error or any("Cancelled" in w.value for w in at.warning):
            return
        time.sleep(0.3)
    raise AssertionError("the judge run did not finish in time")


def _on_fake_server(fake, api_key: str | None = None) -> AppTest:
    """The Judge page on the demo, pointed at the fake server's model "fake-judge" (with
    ``api_key`` typed in, if any) for one context."""
    at = _judge_page()
    at.text_input(key="judge.model").input("fake-judge")
    at.text_input(key="judge.base_url").input(fake.base_url)
    if api_key is not None:
        at.text_input(key="judge.api_key").input(api_key)
    at.number_input(key="judge.n_contexts").set_value(1).run()
    return at


def _run(at: AppTest) -> str:
    """Click Run, wait for the run to be taken in; the success messages, joined."""
    at.button(key="judge.run").click().run()
    _wait_for_run(at)
    return " ".join(s.value for s in at.success)


def test_opens_on_demo_with_preview_and_estimate(cache):
    at = _judge_page()
    assert at.title[0].value == "Judge"
    preview = at.code[0].value
    assert "Summary A:" in preview and "Summary B:" in preview
    metrics = _metrics(at)
    # 3 contexts x 6 candidates x 5 ordered partners: every ordered pair
    assert metrics["Model calls"] == "90"
    assert metrics["Cached"] == "0"
    assert not at.error


def test_template_selector_changes_preview(cache):
    at = _judge_page()
    before = at.code[0].value
    assert not before.startswith("Passage:")
    at.selectbox(key="judge.template").set_value("liusie-c2").run()
    after = at.code[0].value
    assert after != before and after.startswith("Passage:")
    assert "relative to the passage" in after
    # an absolute mode offers absolute templates and previews one candidate
    at.selectbox(key="judge.mode").set_value("absolute: Likert score (samples)").run()
    assert "liusie-c1" not in at.selectbox(key="judge.template").options
    assert "Summary B:" not in at.code[0].value


def test_bad_custom_template_shows_its_message(cache):
    at = _judge_page()
    at.radio(key="judge.tsource").set_value("custom (YAML / JSON)").run()
    assert not at.error, [e.value for e in at.error]  # the example template is valid
    assert "Response A:" in at.code[0].value
    bad = "id: mine\nversion: '1'\nkind: comparative\ntext: '{context} {a} {b} {colour}'\n"
    at.text_area(key="judge.ttext").input(bad).run()
    assert not at.exception
    messages = " ".join(ui.unsafe(e.value) for e in at.error)  # as read (escaped)
    assert "unknown field {colour}" in messages and "'mine'" in messages
    assert at.button(key="judge.run").disabled


def test_template_that_cannot_be_filled_says_why(cache):
    at = _judge_page()
    at.selectbox(key="judge.mode").set_value("absolute: Likert score (samples)").run()
    at.selectbox(key="judge.template").set_value("hanna-ep1").run()
    messages = " ".join(w.value for w in at.warning)  # a warning: another template will do
    assert "cannot be filled" in messages and "consistency" in messages
    assert at.button(key="judge.run").disabled


def test_pairwise_preview_skips_a_first_context_with_one_candidate(cache):
    """A first context with one candidate is skipped by the runner, so the preview shows the
    first context that has two and says so; the run stays possible (issue 9, item 14)."""
    import dataclasses

    import data as data_pkg

    ds = data_pkg.demo_dataset()
    cands = ds.candidates
    ids = cands["context_id"].astype(str)
    first, second = ids.drop_duplicates().iloc[:2]
    lonely = pd.concat([cands[ids == first].head(1), cands[ids != first]], ignore_index=True)
    ds = dataclasses.replace(ds, name="lonely first", candidates=lonely)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["app.datasets"] = {"demo": data_pkg.demo_dataset(), ds.name: ds}
    at.session_state["app.active"] = ds.name
    at.run()
    at.switch_page("pages/judge/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    preview = at.code[0].value
    assert "Summary A:" in preview and "Summary B:" in preview
    captions = " ".join(ui.unsafe(c.value) for c in at.caption)  # as read (escaped)
    assert f"context '{second}'" in captions and "at least two candidates" in captions
    assert f"'{first}'" in captions  # the skipped one is named too
    assert not at.button(key="judge.run").disabled
    # 3 contexts: the lonely one is skipped, 6 x 5 ordered pairs in each of the other two
    assert _metrics(at)["Model calls"] == "60"


def test_run_against_fake_server_then_resume_from_cache(cache):
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        at = _on_fake_server(fake, SECRET)
        assert _metrics(at)["Model calls"] == "30"

        done = _run(at)
        assert "30 model calls — 0 cached" in done and "30 new" in done, done
        assert len(fake.answered_prompts) == 30
        new_name = "demo (judged)"
        assert at.sidebar.selectbox[0].value == new_name
        datasets = at.session_state["app.datasets"]
        added = datasets[new_name].comparisons
        added = added[added["judge"] == "fake-judge/liusie-c1"]
        assert len(added) == 30 and added["p_first"].between(0, 1).all()
        assert len(datasets["demo"].comparisons) == 720  # the demo itself is untouched
        # the raw outputs of the run are shown
        assert _metrics(at)["Outputs"] == "30"
        assert _raw_judge(at).value == "fake-judge/liusie-c1"

        # the second run is answered from the run store: nothing is sent again
        assert _metrics(at)["Cached"] == "30"
        again = _run(at)
        assert "30 model calls — 30 cached" in again and "0 new" in again, again
        assert len(fake.answered_prompts) == 30
        assert at.sidebar.selectbox[0].value == new_name  # replaced, not "+ judge + judge"
        assert len(at.session_state["app.datasets"][new_name].comparisons) == 750

    # the key typed in the page reached the server but no file, table or export
    secret = SECRET.encode()
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert any(p.name.startswith("runs.sqlite") for p in files)
    for path in files:
        assert secret not in path.read_bytes(), path
    views = at.session_state[ui.REPORT]
    report = export.report_html(views, at.session_state[ui.REPORT + ".settings"], dataset=new_name)
    assert "fake-judge" in report and "Last judge run" in report and SECRET not in report
    assert secret not in export.tables_zip(views)
    for ds in at.session_state["app.datasets"].values():
        for table in ("comparisons", "ratings"):
            assert SECRET not in ds.table(table).to_csv()


def test_cancel_keeps_what_is_done_and_a_rerun_resumes(cache):
    with FakeOpenAI(models=("fake-judge",), stall_after=6) as fake:
        at = _on_fake_server(fake)  # a local server: no key
        at.button(key="judge.run").click().run()
        end = time.monotonic() + 60
        while fake.n_stalled < 1:  # the server holds every request after the sixth
            assert time.monotonic() < end, "the run never reached the stall point"
            time.sleep(0.1)
        at.run()
        assert at.get("progress"), "a progress bar shows while the run is going"
        at.button(key="judge.cancel").click().run()
        fake.release()  # requests already sent are answered (and kept); no new ones go out
        _wait_for_run(at)
        n_done = len(fake.answered_prompts)
        assert 6 <= n_done < 30
        warning = " ".join(w.value for w in at.warning)
        assert "Cancelled" in warning and f"{n_done} new" in warning, warning
        name = "demo (judged)"
        assert len(at.session_state["app.datasets"][name].comparisons) == 720 + n_done

        done = _run(at)
        assert f"30 model calls — {n_done} cached" in done and f"{30 - n_done} new" in done
        assert len(fake.answered_prompts) == 30  # nothing was asked twice
        assert len(at.session_state["app.datasets"][name].comparisons) == 750


def test_summary_shows_failed_calls_and_calls_answered_by_another_run(cache):
    """Another run on the same store (another session, a terminal) is asking 12 of the
    page's 30 calls; the page's run asks the other 18, of which the server refuses the 10
    that show one candidate. The summary names both: the failures by reason, and the calls
    waited for instead of paid twice."""
    import threading

    import data as data_pkg
    from judge.backends.openai_compat import OpenAIBackend
    from judge.runs.runners import run_pairwise
    from judge.templates import builtin_templates

    demo = data_pkg.demo_dataset()
    cands = demo.candidates[demo.candidates["context_id"] == "news01"]
    broken = cands.loc[cands["candidate_id"] == "keywords", "text"].iloc[0]
    other = dataclasses.replace(
        demo,
        name="another session",
        candidates=cands[cands["candidate_id"].isin(["large", "lead", "small", "hallucinator"])],
    )
    with FakeOpenAI(models=("fake-judge",), stall_after=0) as fake:
        fake.fault(broken, "status", status=400, message="the prompt is too long")
        at = _on_fake_server(fake)
        assert _metrics(at)["Model calls"] == "30"
        done: dict = {}

        def another_run():
            done["result"] = run_pairwise(
                other,
                attribute=at.selectbox(key="app.attribute").value,
                template=builtin_templates()[at.selectbox(key="judge.template").value],
                domain=at.selectbox(key="judge.domain|demo").value,
                backend=OpenAIBackend("fake-judge", base_url=fake.base_url, max_concurrency=12),
            )

        thread = threading.Thread(target=another_run, daemon=True)
        thread.start()
        _wait_until(lambda: fake.n_stalled >= 12, "the other run holds its 12 calls")
        at.button(key="judge.run").click().run()
        # the page's run sends its own 18 calls (8 at a time) and waits for the other 12
        _wait_until(lambda: fake.n_stalled >= 12 + 8, "the page's run sends its calls")
        fake.release()
        _wait_for_run(at)
        thread.join(60)
        answers = fake.answers_by_prompt
    assert done["result"].n_called == 12 and done["result"].n_failed == 0
    summary = " ".join(s.value for s in at.success)
    assert "30 model calls — 0 cached" in summary and "18 new" in summary, summary
    assert "12 answered by another run on the same store" in summary, summary
    failed = " ".join(w.value for w in at.warning)
    assert "10 model calls failed (http-400: 10)" in failed, failed
    assert len(answers) == 20 and set(answers.values()) == {1}  # nothing paid twice
    rows = at.session_state["app.datasets"]["demo (judged)"].comparisons
    rows = rows[rows["judge"] == "fake-judge/liusie-c1"]
    assert len(rows) == 30 and rows["p_first"].isna().sum() == 10
    last = at.session_state["judge.last"]
    assert (last["n_by_others"], last["n_failed"], last["failures"]) == (12, 10, {"http-400": 10})


def _wait_until(condition, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out waiting until {what}"
        time.sleep(0.05)


def test_key_from_streamlit_secrets_is_passed_down_by_the_page(cache, monkeypatch):
    """The page reads OPENAI_API_KEY from st.secrets and hands it to the backend (the judge
    layer imports no streamlit and reads no secrets)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.secrets["OPENAI_API_KEY"] = SECRET
        at.run()
        at.switch_page("pages/judge/page.py").run()
        at.text_input(key="judge.model").input("fake-judge")
        at.text_input(key="judge.base_url").input(fake.base_url)
        at.number_input(key="judge.n_contexts").set_value(1).run()
        assert any("secrets.toml" in c.value for c in at.caption)
        at.button(key="judge.run").click().run()
        _wait_for_run(at)
        assert not at.error, [e.value for e in at.error]
        done = " ".join(s.value for s in at.success)
        assert "30 model calls — 0 cached" in done, done
        assert len(fake.answered_prompts) == 30
    assert "api_key" not in at.session_state[ui.REPORT + ".settings"]["judge"]
    for path in (p for p in cache.rglob("*") if p.is_file()):
        assert SECRET.encode() not in path.read_bytes(), path


def test_secret_api_key_survives_missing_and_malformed_secrets(tmp_path, monkeypatch):
    import streamlit as st
    from streamlit.runtime import secrets as st_secrets

    from pages.services import judge as judge_svc

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    real_option = st_secrets.config.get_option

    def secrets_from(path):
        monkeypatch.setattr(
            st_secrets.config,
            "get_option",
            lambda name: [str(path)] if name == "secrets.files" else real_option(name),
        )
        monkeypatch.setattr(st, "secrets", st_secrets.Secrets())

    secrets_from(tmp_path / "absent" / "secrets.toml")
    assert judge_svc.secret_api_key() is None
    bad = tmp_path / "secrets.toml"
    bad.write_text('OPENAI_API_KEY = "sk-unterminated\n[[broken\n')
    secrets_from(bad)
    assert judge_svc.secret_api_key() is None  # logged and ignored, never raised

    class Exploding(dict):
        def __contains__(self, key):
            raise RuntimeError("secrets backend down")

    monkeypatch.setattr(st, "secrets", Exploding())
    assert judge_svc.secret_api_key() is None
    monkeypatch.setattr(st, "secrets", {"OPENAI_API_KEY": 12345})
    assert judge_svc.secret_api_key() is None  # not text: ignored
    monkeypatch.setattr(st, "secrets", {"OPENAI_API_KEY": " sk-ok \n"})
    assert judge_svc.secret_api_key() == "sk-ok"


def test_run_with_wrong_key_reports_a_readable_error(cache):
    with FakeOpenAI(models=("fake-judge",), api_key=SECRET) as fake:
        at = _on_fake_server(fake, "sk-wrong-key-000000000000")
        at.button(key="judge.run").click().run()
        _wait_for_run(at)
        message = " ".join(e.value for e in at.error)
        assert "refused the API key" in message
        assert "sk-wrong-key-000000000000" not in message
        assert at.sidebar.selectbox[0].value == "demo"


def test_unavailable_model_shows_a_message(cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = _judge_page()
    at.radio(key="judge.backend").set_value("hf").run()
    at.text_input(key="judge.hf_model").input("/nonexistent/judgescope-model").run()
    at.button(key="judge.hf_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    message = " ".join(ui.unsafe(e.value) for e in at.error)  # as read (escaped)
    assert "cannot load" in message and "/nonexistent/judgescope-model" in message
    assert at.button(key="judge.run").disabled


@pytest.mark.slow
def test_run_with_a_local_transformers_model(cache, monkeypatch, tmp_path_factory):
    from tests.judge.tiny_models import tiny_model_dirs

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = str(tiny_model_dirs(tmp_path_factory)["t5"])
    at = _judge_page()
    at.radio(key="judge.backend").set_value("hf").run()
    at.text_input(key="judge.hf_model").input(folder).run()
    assert any("Load the model" in i.value for i in at.info)
    assert at.button(key="judge.run").disabled
    at.button(key="judge.hf_load").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.number_input(key="judge.n_contexts").set_value(1).run()
    metrics = _metrics(at)
    assert metrics["Model calls"] == "30" and metrics["Price"] == "–"
    done = _run(at)
    assert "30 model calls — 0 cached" in done, done
    name = at.sidebar.selectbox[0].value
    assert name == "demo (judged)"
    added = at.session_state["app.datasets"][name].comparisons
    added = added[added["judge"] == "tiny-t5/liusie-c1"]
    assert len(added) == 30 and added["p_first"].between(0, 1).all()


def _import_ratings(rows: bytes) -> AppTest:
    """The Judge page on the demo after importing a file of judge ratings named outs.csv:
    the ratings table's header, then ``rows``."""
    csv = b"context_id,candidate_id,attribute,judge,prompt_id,sample,score\n" + rows
    at = _judge_page()
    at.radio(key="judge.import_kind").set_value("ratings").run()
    at.file_uploader(key="judge.import_file").upload("outs.csv", csv, "text/csv").run()
    at.button(key="judge.import").click().run()
    return at


def test_import_ratings_file_merges_into_a_copy(cache):
    at = _import_ratings(
        b"news01,large,fluency,my-judge,mine,0,4\nnews01,lead,fluency,my-judge,mine,0,3\n"
    )
    assert not at.exception, [e.value for e in at.exception]
    # merged into a copy that keeps the dataset's name (no "demo + outs.csv" names)
    assert at.session_state["app.active"] == "demo"
    assert "+2 ratings rows" in " ".join(s.value for s in at.success)
    import data as data_pkg

    merged = at.session_state["app.datasets"]["demo"]
    assert len(merged.ratings) == len(data_pkg.demo_dataset().ratings) + 2
    from pages.shell import state as app_state

    shared = app_state.demo()  # the server's demo, shared by every session: untouched
    assert merged is not shared and len(shared.ratings) == len(data_pkg.demo_dataset().ratings)


def test_import_of_unknown_candidates_names_the_row(cache):
    at = _import_ratings(b"news01,nobody,fluency,my-judge,mine,0,4\n")
    assert not at.exception
    text = ui.unsafe(" ".join(e.value for e in at.error) + " ".join(m.value for m in at.markdown))
    assert "outs.csv" in text and "nobody" in text and "row 1" in text
    assert at.sidebar.selectbox[0].value == "demo"


@pytest.mark.slow
@pytest.mark.parametrize(
    "benchmark, folder",
    [
        ("summeval", "summeval_llm_eval"),
        ("hanna", "hanna"),
        ("topicalchat", "topicalchat_usr"),
        ("pandalm", "pandalm_testset"),
    ],
)
def test_real_benchmarks(cache, benchmark, folder):
    if not (data_dirs()[0] / folder).is_dir():
        pytest.skip(f"{folder} not in {data_dirs()[0]} (real data absent)")
    at = _judge_page(benchmark)
    metrics = _metrics(at)
    assert int(metrics["Model calls"].replace(",", "")) > 0
    assert int(metrics["Outputs"].replace(",", "")) > 0  # the published outputs, raw
    assert at.code[0].value.strip()
    published = " ".join(m.value for m in at.markdown)
    assert "Already inside" in published


def test_custom_template_text_never_opens_a_server_file(tmp_path):
    from judge.templates import TemplateError
    from pages.services import judge as judge_svc

    secret_file = tmp_path / "t.yaml"
    secret_file.write_text(
        "id: x\nversion: '1'\nkind: absolute\ntext: '{candidate}'\nscale: [1, 5]\n"
    )
    with pytest.raises(TemplateError, match="expected a list of templates"):
        judge_svc.read_custom_templates(str(secret_file))
    assert list(judge_svc.read_custom_templates(secret_file.read_text())) == ["x"]


def test_settings_for_the_report_hide_url_credentials():
    from pages.services import judge as judge_svc

    s = judge_svc.JudgeSettings(
        backend="openai", model="m", base_url="http://user:pw@localhost:8000/v1?x=1"
    )
    assert s.public()["base_url"] == "http://localhost:8000/v1"
    assert "api_key" not in s.public()


class _EchoBackend:
    """An in-process backend (the documented hook: ``JudgeJob(..., backend=obj)``): P(A) is
    0.2 when ``marker`` is the second candidate (in the part of the prompt after the shared
    prefix of context and first candidate), else 0.7, so the answers are known in advance."""

    model_id = "echo"

    def __init__(self, marker: str = "\x00"):
        self.marker = marker
        self.n_calls = 0

    def describe(self) -> dict:
        return {"kind": "echo", "model": self.model_id}

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def label_probs(self, requests, progress=None):
        from judge.backends.base import LabelResult

        self.n_calls += len(requests)
        out = []
        for req in requests:
            p = 0.2 if self.marker in req.prompt else 0.7
            out.append(LabelResult(probs={"A": p, "B": 1 - p}))
        return out

    def generate(self, requests, progress=None):  # pragma: no cover - not used here
        raise NotImplementedError


def test_judge_job_with_an_injected_backend(tmp_path):
    import data as data_pkg
    from judge.templates import builtin_templates
    from pages.services import judge as judge_svc

    ds = data_pkg.demo_dataset()
    settings = judge_svc.JudgeSettings(
        backend="openai", model="unused", n_contexts=2, attribute="fluency"
    )
    template = builtin_templates()["liusie-c1"]
    cands = ds.candidates
    lead = cands[(cands["context_id"] == "news01") & (cands["candidate_id"] == "lead")]
    backend = _EchoBackend(marker=lead["text"].iloc[0])
    store = str(tmp_path / "runs.sqlite")
    job = judge_svc.JudgeJob(
        ds, settings, template, backend=backend, store=store, source_name="demo"
    )
    assert job.wait(60) and job.error is None
    name, merged, summary = job.take_result()
    assert name == "demo (judged)"
    assert summary["n_calls"] == 60 and summary["n_cached"] == 0 and backend.n_calls == 60
    rows = merged.comparisons[merged.comparisons["judge"] == "echo/liusie-c1"]
    assert len(rows) == 60
    firsts = rows.set_index(["context_id", "first_id", "second_id"])["p_first"]
    assert firsts.loc[("news01", "large", "lead")] == pytest.approx(0.2)
    assert firsts.loc[("news01", "lead", "large")] == pytest.approx(0.7)
    assert len(ds.comparisons) == 720  # the source is never changed
    # the same run on the merged dataset is answered from the store, under the same name
    again = judge_svc.JudgeJob(
        merged, settings, template, backend=backend, store=store, source_name=name
    )
    assert again.wait(60)
    name2, merged2, summary2 = again.take_result()
    assert name2 == name and summary2["n_cached"] == 60 and backend.n_calls == 60
    assert len(merged2.comparisons) == 720 + 60


def test_runs_of_two_judges_add_up_under_one_short_name(tmp_path):
    import data as data_pkg
    from judge.templates import builtin_templates
    from pages.services import judge as judge_svc

    ds = data_pkg.demo_dataset()
    settings = judge_svc.JudgeSettings(
        backend="openai", model="unused", n_contexts=1, attribute="fluency"
    )
    store = str(tmp_path / "runs.sqlite")
    lead = ds.candidates[ds.candidates["candidate_id"] == "lead"]["text"].iloc[0]

    def job(template: str) -> judge_svc.JudgeJob:
        tpl = builtin_templates()[template]
        backend = _EchoBackend(marker=lead)
        return judge_svc.JudgeJob(
            ds, settings, tpl, backend=backend, store=store, source_name="demo"
        )

    first = job("liusie-c1")
    assert first.wait(60)
    name, judged, _ = first.take_result()
    # a second judge run on the demo goes into the judged copy the session already has
    second = job("liusie-c2")
    assert second.wait(60)
    name2, both, _ = second.take_result(into=judged)
    assert name == name2 == "demo (judged)"
    judges = set(both.comparisons["judge"])
    assert {"echo/liusie-c1", "echo/liusie-c2"} <= judges
    assert len(both.comparisons) == 720 + 30 + 30


def test_judge_job_reports_a_backend_error(tmp_path):
    import data as data_pkg
    from judge.backends.base import BackendError
    from judge.templates import builtin_templates
    from pages.services import judge as judge_svc

    class Broken(_EchoBackend):
        def check(self):
            raise BackendError("cannot reach the endpoint http://nowhere/v1")

    job = judge_svc.JudgeJob(
        data_pkg.demo_dataset(),
        judge_svc.JudgeSettings(backend="openai", model="m", n_contexts=1, attribute="fluency"),
        builtin_templates()["liusie-c1"],
        backend=Broken(),
        store=str(tmp_path / "s.sqlite"),
    )
    assert job.wait(60)
    name, merged, summary = job.take_result()
    assert merged is None and "cannot reach the endpoint" in summary["error"]


def test_page_reads_judge_names_with_the_judge_decoder():
    """The rating judge names the runner writes, small temperatures included (``t1e-05``,
    which the page's own regex used to leave inside the model name), group by model."""
    from judge.backends.base import Decoding
    from judge.names import judge_name
    from pages.services.common import judge_model

    for temperature in (1e-05, 0.7, 1.0):
        name = judge_name("org/model", None, "samples", Decoding(temperature, 0.9))
        assert judge_model(name, "hanna-ep1") == ("org/model", temperature)
    assert judge_model(judge_name("org/model", None, "expected"), "geval") == ("org/model", None)
