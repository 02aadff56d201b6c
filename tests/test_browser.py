"""End to end in a real headless Chromium: start the app, visit every page, save screenshots.

Chromium and its driver come from the OS packages (.ci/run installs them). Screenshots go to
a temporary folder; ``JUDGESCOPE_SCREENSHOTS=docs/screenshots python -m pytest tests/test_browser.py``
refreshes the ones the README shows. The whole user loop is in ``test_e2e_loop.py``.
"""

from __future__ import annotations

import pytest

from tests import _browser as b
from tests._routes import routed_pages

#: Every page app.py routes to, by url path and title; the default page (Data, headed
#: JudgeScope) lives at the root.
PAGES = {"": "JudgeScope", **{path: title for _, title, _, path, _ in routed_pages()[1:]}}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with b.served(tmp_path_factory) as (url, driver, _work):
        yield url, driver


def test_every_page_renders_without_error(app, tmp_path):
    url, driver = app
    shots = b.screenshots(tmp_path)
    for path, title in PAGES.items():
        driver.get(f"{url}/{path}")
        b.wait_title(driver, title)
        b.assert_no_error(driver, f"/{path}")
        shot = shots / f"{path or 'data'}.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000


def test_hanna_opens_at_the_papers_settings(app, tmp_path):
    """A link to HANNA opens with its human story left out (the sidebar says so), the Human
    agreement page draws, and the Reproduce page shows the paper's numbers beside ours."""
    url, driver = app
    shots = b.screenshots(tmp_path)
    b.visit(driver, f"{url}/agreement?dataset=hanna", "Human agreement", "Left out: Human")
    b.assert_no_error(driver, "/agreement?dataset=hanna")
    driver.save_screenshot(str(shots / "agreement-hanna.png"))
    b.nav(driver, "Reproduce")
    b.wait_title(driver, "Reproduce")
    b.wait_text(driver, "Figure 4")
    b.assert_no_error(driver, "/reproduce?dataset=hanna")
    driver.save_screenshot(str(shots / "reproduce-hanna.png"))


def test_judge_bias_finds_the_known_truth_and_reads_summeval(app, tmp_path):
    """The Judge bias page loads the simulated judge with known biases and recovers them
    (every check ticked), then reads ChatGPT's both-order verdicts on SummEval."""
    from selenium.webdriver.common.by import By

    url, driver = app
    shots = b.screenshots(tmp_path)
    b.visit(driver, f"{url}/judge-bias", "Judge bias")
    driver.find_element(
        By.XPATH, "//summary[contains(., 'Try it on a judge with known biases')]"
    ).click()
    b.wait_idle(driver)
    b.click(driver, "Load the simulated judge")
    b.wait_text(driver, "7 of 7 checks pass")
    b.assert_no_error(driver, "/judge-bias (simulated biases)")
    b.tall_screenshot(driver, shots / "judge-bias-known-truth.png")

    b.visit(driver, f"{url}/judge-bias?dataset=summeval", "Judge bias", "Position consistency")
    b.assert_no_error(driver, "/judge-bias?dataset=summeval")
    b.tall_screenshot(driver, shots / "judge-bias-summeval.png")
