"""End to end in a real headless Chromium: start the app, visit every page, save screenshots.

Chromium and its driver come from the OS packages (.ci/run installs them). Screenshots go to
a temporary folder; ``JUDGESCOPE_SCREENSHOTS=docs/screenshots python -m pytest tests/test_browser.py``
refreshes the ones the README shows.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = {
    "": "JudgeScope",  # the default page (Data) lives at the root
    "judge": "Judge",
    "rankings": "Rankings",
    "leaderboard": "Leaderboard",
    "examples": "Examples",
    "bias": "Position bias",
    "budgets": "Comparison budgets",
    "agreement": "Human agreement",
    "prompts": "Prompt sensitivity",
    "report": "Report",
}

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    env = {**os.environ, "JUDGESCOPE_CACHE": str(tmp_path_factory.mktemp("cache"))}
    log_path = tmp_path_factory.mktemp("server") / "streamlit.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ],
        cwd=REPO,
        env=env,
        stdout=log,  # a file, not a pipe nobody reads: a full pipe blocks the server
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        log.close()
        pytest.fail("streamlit did not start:\n" + log_path.read_text(errors="replace"))
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "install the OS packages chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,2000",
    ):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    yield driver
    driver.quit()


def _wait_rendered(driver, title: str, timeout: float = 120) -> None:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        heads = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "h1")]
        running = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        if any(title in h for h in heads) and not running:
            time.sleep(1.5)  # let plotly finish drawing
            return
        time.sleep(0.5)
    raise AssertionError(f"page never showed its title {title!r}; headings: {heads}")


def test_every_page_renders_without_error(server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    shots = Path(os.environ.get("JUDGESCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for path, title in PAGES.items():
        browser.get(f"{server}/{path}")
        _wait_rendered(browser, title)
        exceptions = browser.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
        assert not exceptions, f"/{path} shows an exception: {exceptions[0].text[:500]}"
        body = browser.find_element(By.TAG_NAME, "body").text
        assert "Traceback" not in body, f"/{path} shows a traceback"
        assert "Page not found" not in body, f"/{path} is not routed"
        shot = shots / f"{path or 'data'}.png"
        browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
