"""The Data page: opens offline on the demo, shows validation messages, never loses what was loaded."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from pages.shell.text import unsafe

APP = str(Path(__file__).resolve().parents[2] / "app.py")

TIMEOUT = 180


def _app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_opens_on_demo_with_counts():
    at = _app()
    assert at.title[0].value == "JudgeScope"
    metrics = _metrics(at)
    assert metrics["Contexts"] == "12"
    assert int(metrics["Comparisons"].replace(",", "")) > 0
    assert "Demo (simulated judge, offline)" in at.selectbox(key="data.benchmark").options


def test_bad_upload_shows_message_and_keeps_demo():
    at = _app()
    before = _metrics(at)
    bad = b"context_id,candidate_id,attribute,annotator,score\nc1,x,quality,ann1,abc\n"
    at.file_uploader(key="data.file").upload("scores.csv", bad, "text/csv").run()
    at.button(key="data.add").click().run()
    assert not at.exception
    errors = unsafe(" ".join(e.value for e in at.error) + " ".join(m.value for m in at.markdown))
    assert "scores.csv" in errors  # the file name as shown (escaped: never Markdown)
    assert "row 1" in errors and "score" in errors
    assert _metrics(at) == before  # nothing already loaded was lost
    assert at.sidebar.selectbox[0].value == "demo"


def test_good_upload_becomes_active():
    at = _app()
    good = (
        b"context_id,candidate_id,attribute,annotator,score\n"
        b"c1,x,quality,ann1,4\nc1,y,quality,ann1,2\nc2,x,quality,ann1,5\n"
    )
    at.file_uploader(key="data.file").upload("mine.csv", good, "text/csv").run()
    at.button(key="data.add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox[0].value == "mine.csv"
    assert _metrics(at)["Human scores"] == "3"
    assert "demo" in at.sidebar.selectbox[0].options
