"""The judgments people actually have, in a real headless Chromium (issue 22, Done when).

An Arena-Hard-Auto run (model_judgment files as the benchmark writes them: graded verdicts,
one baseline, both games, the baseline's self-comparisons, question ids that are long
instructions with Markdown and a code fence) is uploaded through the Data page (the verdict
map shown), then Rankings and the Leaderboard show the win rates against the baseline and stay
readable with instruction-long ids. An LLMBar-style CSV (instruction, both outputs, the gold
label, a judge's verdicts in LLMBar's words, one of them garbage) is uploaded the same way;
every page then opens on it without an error. Screenshots go to ``JUDGESCOPE_SCREENSHOTS``
(the README's) or a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import _browser as b
from tests._routes import routed_pages
from tests.data.test_io_pairwise_tables import llmbar_like
from tests.pages import test_arena_baseline as arena

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with b.served(tmp_path_factory) as served:
        yield served


def _upload_many(driver, label: str, paths: list[Path]) -> None:
    """Give several files at once to the multi-file uploader ``label``."""
    from selenium.webdriver.common.by import By

    box = b.widget(driver, "stFileUploader", label)
    box.find_element(By.CSS_SELECTOR, 'input[type="file"]').send_keys(
        "\n".join(str(p) for p in paths)
    )
    b.wait_idle(driver)


def test_an_arena_hard_run_uploaded_ranked_against_its_baseline(app, tmp_path):
    url, d, work = app
    folder = work / "arena"
    folder.mkdir()
    paths = []
    for name, content in sorted(arena._files().items()):
        path = folder / Path(name).name
        path.write_bytes(content)
        paths.append(path)
    shots = b.screenshots(tmp_path)

    b.upload_on_data_page(d, url, paths[0])
    b.wait_text(d, "Recognised as Arena-Hard-Auto judgments")
    _upload_many(d, "More files (optional)", paths[1:])
    b.wait_text(d, "A>>B")
    b.assert_no_error(d, "Data page with an Arena-Hard run")
    b.tall_screenshot(d, shots / "upload-arena-hard-verdict-map.png")
    b.click(d, "Add to JudgeScope")
    b.wait_text(d, "Loaded:")
    b.assert_no_error(d, "Data page after the Arena-Hard run")

    b.nav(d, "Rankings")
    b.wait_title(d, "Rankings")
    b.wait_text(d, "Win rates against a baseline")
    b.assert_no_error(d, "/rankings on the Arena-Hard run")
    text = b.body_text(d)
    assert arena.BASELINE in text and "m-strong" in text
    b.tall_screenshot(d, shots / "upload-arena-hard-rankings.png")
    # each question ranked apart: its instruction-long id (Markdown, a code fence) stays one
    # short escaped line in the picker and the notes, the page no wider than the window
    from selenium.webdriver.common.by import By

    d.find_element(By.XPATH, "//label[contains(., 'Rank each context apart as well')]").click()
    b.wait_idle(d)
    b.assert_no_error(d, "/rankings per question on the Arena-Hard run")
    assert not d.find_elements(By.CSS_SELECTOR, '[data-testid="stMain"] pre code'), "a code block"
    width = d.execute_script("return document.documentElement.scrollWidth")
    assert width <= d.execute_script("return window.innerWidth"), width
    b.tall_screenshot(d, shots / "upload-arena-hard-rankings-per-question.png")

    b.nav(d, "Leaderboard")
    b.wait_title(d, "Leaderboard")
    b.wait_text(d, "against a baseline")
    b.assert_no_error(d, "/leaderboard on the Arena-Hard run")
    b.tall_screenshot(d, shots / "upload-arena-hard-leaderboard.png")


def test_an_llmbar_style_file_uploaded_opens_every_page(app, tmp_path):
    url, d, work = app
    path = work / "llmbar_style.csv"
    llmbar_like().to_csv(path, index=False)
    shots = b.screenshots(tmp_path)

    b.upload_on_data_page(d, url, path)
    b.wait_text(d, "garbage")
    assert b.selected(d, "Human verdict column") == "label"
    b.tall_screenshot(d, shots / "upload-llmbar-style-verdict-map.png")
    b.click(d, "Add to JudgeScope")
    b.wait_text(d, "Loaded: llmbar_style.csv")
    for _, title, _, path_, _ in routed_pages()[1:]:
        b.nav(d, title)
        b.wait_title(d, title)
        b.assert_no_error(d, f"/{path_} on the LLMBar-style upload")
        assert b.selected(d, "Dataset", scope=b.SIDEBAR) == "llmbar_style.csv", title
