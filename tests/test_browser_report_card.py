"""The Judge report card in a real headless Chromium (issue 24): on LLMBar (its 22 published
judges: the sorted dot plot, the judges x subsets heatmap, both orders) and on a file a user
uploads through the Data page with a gold column and 30 judges giving probabilities (the dot
plot readable with 30 judges, the reliability diagram). Screenshots go to
``JUDGESCOPE_SCREENSHOTS`` (the README's) or a temporary folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests import _browser as b
from tests.pages._analysis_apptest import need

pytestmark = pytest.mark.browser

DOT_PLOT = "Accuracy of each judge against the known answers"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with b.served(tmp_path_factory) as served:
        yield served


def _open(driver, summary: str) -> None:
    """Open a lazy section (an expander whose content is computed when it opens)."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.XPATH, f"//summary[contains(., '{summary}')]").click()
    b.wait_idle(driver)


def _figure_titles(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [
        t.text
        for t in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"] .gtitle')
    ]


@need("llmbar")
def test_report_card_on_llmbar(app, tmp_path):
    url, driver, _ = app
    driver.get(f"{url}/report-card?dataset=llmbar")
    b.wait_title(driver, "Judge report card")
    b.wait_text(driver, DOT_PLOT)
    b.assert_no_error(driver, "/report-card?dataset=llmbar")
    titles = _figure_titles(driver)
    assert DOT_PLOT in titles, titles
    assert any(t.startswith("Accuracy per judge and") for t in titles), titles
    b.tall_screenshot(driver, b.screenshots(tmp_path) / "report-card-llmbar.png")


def _gold_upload(folder: Path) -> Path:
    """A pairwise file as a user has it: instruction, both outputs, the gold label (1 or 2),
    30 judges' probabilities that the first output is better, each pair in both orders."""
    rng = np.random.default_rng(7)
    rows = []
    for j in range(30):
        skill = 0.55 + 0.4 * j / 29
        for i in range(24):
            good, bad = f"A careful answer to question {i}.", f"Wrong {i}."
            for first_is_good in (True, False):
                right = rng.random() < skill
                p_good = rng.uniform(0.55, 0.99) if right else rng.uniform(0.01, 0.45)
                rows.append(
                    dict(
                        instruction=f"Question {i}: what is {i} + {i}?",
                        output_1=good if first_is_good else bad,
                        output_2=bad if first_is_good else good,
                        label=1 if first_is_good else 2,
                        judge=f"judge-{j:02d}-with-a-long-model-name-of-some-provider",
                        probability=round(p_good if first_is_good else 1 - p_good, 4),
                    )
                )
    path = folder / "gold_pairs.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_report_card_on_a_gold_upload_with_thirty_judges(app, tmp_path):
    url, driver, work = app
    path = _gold_upload(work)
    b.upload_on_data_page(driver, url, path, "pairwise")
    assert b.selected(driver, "Human verdict column") == "label"
    assert b.selected(driver, "Probability column") == "probability"
    assert b.selected(driver, "Judge column") == "judge"
    b.click(driver, "Add to JudgeScope")
    b.wait_text(driver, "Loaded: gold_pairs.csv")
    b.assert_no_error(driver, "Data page after the gold upload")

    b.nav(driver, "Judge report card")
    b.wait_title(driver, "Judge report card")
    b.wait_text(driver, DOT_PLOT)
    _open(driver, "Calibration")
    b.wait_text(driver, "ECE of p(first wins)")
    b.assert_no_error(driver, "/report-card on the gold upload")
    titles = _figure_titles(driver)
    assert DOT_PLOT in titles, titles
    assert any(t.startswith("Reliability diagram") for t in titles), titles
    b.tall_screenshot(
        driver, b.screenshots(tmp_path) / "report-card-upload-30-judges.png", height=9000
    )
