"""The whole loop in a real headless Chromium, as a new user does it with their own files.

Upload a wide CSV made from HANNA (context text and system columns) and map it; add a
pairwise-verdict CSV with unparseable verdicts to the same dataset; run a pairwise judge
against a local OpenAI-compatible server; tune tau on Position bias; see the debiased
ranking on Rankings; reload and find the same state; open one example; export the report
and check it holds only this dataset's views with their settings.

``JUDGESCOPE_SCREENSHOTS=docs/screenshots python -m pytest tests/test_e2e_loop.py`` refreshes
the README's screenshots of each step (``loop-*.png``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import _browser as b
from tests import e2e_data
from tests.judge.fake_openai import FakeOpenAI

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    work = tmp_path_factory.mktemp("loop")
    env = {"JUDGESCOPE_CACHE": str(work / "cache"), "JUDGESCOPE_WARMUP": "0"}
    with FakeOpenAI() as fake, b.streamlit_server(work, env) as url, b.chromium() as driver:
        yield url, driver, fake, work


def _shot(driver, name: str, tmp: Path) -> None:
    driver.save_screenshot(str(b.screenshots(tmp) / f"loop-{name}.png"))


def _step_done(driver, name: str, where: str, tmp: Path) -> None:
    """The end of a step: its screenshot ``name``, then no error on the page (``where``)."""
    _shot(driver, name, tmp)
    b.assert_no_error(driver, where)


def test_own_data_end_to_end(app):
    url, d, fake, work = app
    wide = e2e_data.hanna_wide_csv(work)
    verdicts = e2e_data.verdicts_csv(work)

    # 1. a wide CSV: every field mapped, systems and context text guessed, a preview
    b.upload_on_data_page(d, url, wide, "wide")
    assert b.selected(d, "Context id column") == "prompt_id"
    assert b.selected(d, "Candidate id column") == "model"
    assert b.selected(d, "System column") == "model"
    assert b.selected(d, "Context text column") == "prompt"
    assert b.selected(d, "Candidate text column") == "story"
    assert b.selected(d, "Annotator column") == "annotator"
    _shot(d, "1-wide-mapping", work)
    b.click(d, "Add to JudgeScope")
    b.wait_text(d, "Loaded: hanna_stories.csv")
    assert b.selected(d, "Dataset", scope=b.SIDEBAR) == "hanna_stories.csv"
    b.assert_no_error(d, "Data page after the wide upload")

    # 2. pairwise verdicts with garbage in rows 5-7, added to the same dataset
    b.tab(d, "Upload a file")
    b.radio(d, "Format", "pairwise")
    b.upload(d, "File", verdicts)
    b.choose(d, "Attribute (for every row)", "coherence")
    b.type_text(d, "Judge (for every row)", "crowd")
    b.radio(d, "Load the file", "Add to the active dataset")
    b.click(d, "Add to JudgeScope")
    b.wait_text(d, "not understood")
    text = b.body_text(d)
    assert "'garbage'" in text and "rows 5–7" in text, text[:3000]
    assert b.selected(d, "Dataset", scope=b.SIDEBAR) == "hanna_stories.csv"
    _step_done(d, "2-verdicts-added", "Data page after the verdicts", work)

    # 3. a pairwise judge against the local OpenAI-compatible server
    b.nav(d, "Judge")
    b.radio(d, "Backend", "OpenAI-compatible")
    b.type_text(d, "Model", "fake-model")
    b.type_text(d, "Base URL", fake.base_url)
    b.choose(d, "Mode", "pairwise: label probabilities")
    b.choose(d, "Attribute", "coherence")
    b.wait_text(d, "Model calls")
    b.click(d, "Run")
    b.wait_text(d, "outputs added to", timeout=300)
    assert fake.n_answered > 0
    assert b.selected(d, "Dataset", scope=b.SIDEBAR) == "hanna_stories.csv (judged)"
    _step_done(d, "3-judge-run", "Judge page after the run", work)

    # 4. tune tau on Position bias
    b.nav(d, "Position bias")
    b.choose(d, "Attribute", "coherence")
    b.choose(d, "Judge", "fake-model")
    b.radio(d, "Debias position bias", "Threshold tau")
    b.slide_to(d, "tau", 0.66, 0.01)
    assert b.slider_value(d, "tau") == pytest.approx(0.66)
    _step_done(d, "4-position-bias", "Position bias", work)

    # 5. Rankings ranks with that tau, raw and debiased side by side
    b.nav(d, "Rankings")
    b.wait_text(d, "Debiasing: tau = 0.66")
    b.wait_text(d, "Systems: raw and debiased ranks")
    assert b.selected(d, "Judge").startswith("fake-model")
    _step_done(d, "5-rankings-debiased", "Rankings", work)

    # 6. a reload finds the same dataset, judge and threshold
    d.refresh()
    b.wait_title(d, "Rankings")
    b.wait_text(d, "Debiasing: tau = 0.66")
    assert b.selected(d, "Dataset", scope=b.SIDEBAR) == "hanna_stories.csv (judged)"
    assert b.selected(d, "Attribute") == "coherence"
    assert b.selected(d, "Judge").startswith("fake-model")
    _shot(d, "6-after-reload", work)

    # 7. one example up close: both orders, every answer, the human scores
    b.click(d, "Open this pair in Examples")
    b.wait_title(d, "Examples")
    b.wait_text(d, "Human scores")
    text = b.body_text(d)
    assert "first" in text and "Context" in text
    _step_done(d, "7-example", "Examples", work)

    # 8. the report: this dataset's views only, with their settings (views are collected
    # per browser session: the reload started a new one, so Position bias is opened again)
    b.nav(d, "Position bias")
    assert b.slider_value(d, "tau") == pytest.approx(0.66)
    b.nav(d, "Report")
    assert b.selected(d, "Dataset of the report") == "hanna_stories.csv (judged)"
    downloads = work / "downloads"
    b.downloads_to(d, downloads)
    _shot(d, "8-report", work)
    b.click(d, "⬇ Download the HTML report")
    html = b.wait_download(downloads, ".html").read_text(encoding="utf-8")
    assert "JudgeScope report — hanna_stories.csv (judged)" in html
    assert "0.66" in html  # the threshold the Rankings views were drawn with
    assert "demo-judge" not in html and "Dataset: <b>demo" not in html
    sections = re.findall(r"<h2[^>]*>(.*?)</h2>", html)
    assert "Rankings" in sections and "Position bias" in sections, sections
