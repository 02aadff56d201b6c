"""Rankings you can defend, in headless Chromium: rank intervals and tie models on Rankings, the
PPI++ section on Human agreement, a jury built on the Judge page and then ranked; and the
Rationales page on ChatGPT's SummEval answers.

``JUDGESCOPE_SCREENSHOTS=docs/screenshots python -m pytest tests/test_browser_defend.py`` keeps
the (tall) screenshots.
"""

import pytest

from tests import _browser as b

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with b.served(tmp_path_factory) as (url, driver, _work):
        # a fresh server answers its first URL through Streamlit's v1 discovery of pages/
        # (the known issue of tests/test_browser.py): open the app at its root first
        driver.get(url)
        b.wait_title(driver, "JudgeScope")
        yield url, driver


def test_rank_intervals_ties_ppi_and_a_jury(app, tmp_path):
    url, driver = app
    shots = b.screenshots(tmp_path)

    b.visit(driver, f"{url}/rankings?dataset=summeval", "Rankings", "Separability")
    b.choose(driver, "Intervals", "Bootstrap over contexts")
    b.wait_text(driver, "Separability")
    b.assert_no_error(driver, "/rankings?dataset=summeval")
    b.tall_screenshot(driver, shots / "rankings-intervals-summeval.png", 7000)

    b.visit(driver, f"{url}/rankings?dataset=llmfao", "Rankings", "Davidson")
    b.assert_no_error(driver, "/rankings?dataset=llmfao")
    b.tall_screenshot(driver, shots / "rankings-ties-llmfao.png", 7000)

    b.visit(driver, f"{url}/agreement?dataset=summeval", "Human agreement")
    b.tab(driver, "Human labels needed")  # one tab per question, only the open one runs
    b.wait_text(driver, "How many human labels do I need?")
    b.assert_no_error(driver, "/agreement?dataset=summeval")
    b.tall_screenshot(driver, shots / "agreement-ppi-summeval.png", 11000)

    b.visit(driver, f"{url}/judge?dataset=pandalm", "Judge")
    b.tab(driver, "Build a jury")
    b.pick(driver, "Judges", ["gpt-3.5-turbo", "pandalm-7b"])
    b.radio(driver, "Method", "Dawid")
    b.wait_text(driver, "Add the jury as a judge")
    b.assert_no_error(driver, "/judge?dataset=pandalm (jury)")
    b.tall_screenshot(driver, shots / "judge-jury-pandalm.png", 3500)
    b.click(driver, "Add the jury as a judge")
    b.wait_text(driver, "is now a judge of")
    b.nav(driver, "Rankings")
    b.wait_text(driver, "Systems")
    b.assert_no_error(driver, "/rankings (jury)")


def test_rationales_of_chatgpt_on_summeval(app, tmp_path):
    """The Rationales page on ChatGPT's SummEval answers: keywords, the map, citations."""
    url, driver = app
    shots = b.screenshots(tmp_path)
    b.visit(driver, f"{url}/rationales?dataset=summeval", "Rationales", "Unsupported citations")
    b.choose(driver, "Judge", "gpt-3.5-turbo-0301/stareval")  # star ratings with reasons
    b.wait_text(driver, "Unsupported citations")
    b.assert_no_error(driver, "/rationales?dataset=summeval")
    b.tall_screenshot(driver, shots / "rationales-summeval.png", 5000)
