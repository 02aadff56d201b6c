"""Driving the app in a real headless Chromium: the server, the browser and Streamlit widgets.

Shared by the browser tests. Widgets are found by their visible label, as a user finds them;
every action waits until the app has finished running before it returns.
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]


def fresh(fn):
    """Run a helper again when Streamlit re-rendered an element under it.

    Streamlit replaces widgets while a script runs (a rerun, a fragment, a late chart), so an
    element found a moment ago can be gone when it is clicked or read
    (``StaleElementReferenceException``). Every helper finds its elements anew on each try
    and acts only once it has them all, so trying again is safe.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from selenium.common.exceptions import StaleElementReferenceException

        for attempt in range(6):
            try:
                return fn(*args, **kwargs)
            except StaleElementReferenceException:
                if attempt == 5:
                    raise
                time.sleep(0.5)

    return wrapper


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(workdir: Path, env: dict | None = None):
    """``streamlit run app.py`` on a free port; yields its URL; the log goes to ``workdir``."""
    port = _free_port()
    log_path = workdir / "streamlit.log"
    with log_path.open("wb") as log:
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
            env={**os.environ, **(env or {})},
            stdout=log,  # a file, not a pipe nobody reads: a full pipe blocks the server
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    time.sleep(0.5)
            else:
                pytest.fail("streamlit did not start:\n" + log_path.read_text(errors="replace"))
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextmanager
def chromium(download_dir: Path | None = None):
    """A headless Chromium driven by selenium (the OS packages chromium and chromium-driver)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert binary and driver_path, "install the OS packages chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
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
    if download_dir is not None:
        opts.add_experimental_option(
            "prefs",
            {
                "download.default_directory": str(download_dir),
                "download.prompt_for_download": False,
            },
        )
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def wait_idle(driver, timeout: float = 120) -> None:
    """Wait until the app is not running (no status widget), then let plotly draw."""
    from selenium.webdriver.common.by import By

    time.sleep(0.6)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'):
            time.sleep(0.8)
            if not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]'):
                return
        time.sleep(0.3)
    raise AssertionError(f"the app kept running for {timeout:.0f} s")


@fresh
def wait_title(driver, title: str, timeout: float = 120) -> None:
    """Wait until the page shows the heading ``title`` and has finished running."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    heads: list[str] = []
    while time.monotonic() < deadline:
        heads = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "h1")]
        if any(title in h for h in heads):
            wait_idle(driver, timeout=max(5.0, deadline - time.monotonic()))
            return
        time.sleep(0.3)
    raise AssertionError(f"page never showed its title {title!r}; headings: {heads}")


@fresh
def wait_heading(driver, timeout: float = 120) -> list[str]:
    """The page's headings once it shows one and has finished running."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.find_elements(By.CSS_SELECTOR, "h1"):
            wait_idle(driver, timeout=max(5.0, deadline - time.monotonic()))
            return [h.text for h in driver.find_elements(By.CSS_SELECTOR, "h1")]
        time.sleep(0.3)
    raise AssertionError(f"no heading in {timeout:.0f} s:\n{body_text(driver)[:2000]}")


@fresh
def assert_no_error(driver, where: str) -> None:
    """No exception box, no error message (a section that failed), no traceback, no dialog
    (Streamlit's "Page not found" is one) on the page: a test fails on them, never closes them."""
    from selenium.webdriver.common.by import By

    dialogs = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stDialog"]')
    assert not dialogs, f"{where} shows a dialog: {dialogs[0].text[:400]}"
    exceptions = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]')
    assert not exceptions, f"{where} shows an exception: {exceptions[0].text[:800]}"
    errors = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAlertContentError"]')
    assert not errors, f"{where} shows an error: {errors[0].text[:800]}"
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "Traceback" not in body, f"{where} shows a traceback"
    assert "Page not found" not in body, f"{where} is not routed"


@fresh
def body_text(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.TAG_NAME, "body").text


MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'


@fresh
def widget(driver, testid: str, label: str, timeout: float = 30, scope: str = MAIN):
    """The widget container (``data-testid``) in ``scope`` whose label starts with ``label``."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        seen = []
        for el in driver.find_elements(By.CSS_SELECTOR, f'{scope} [data-testid="{testid}"]'):
            labels = el.find_elements(By.CSS_SELECTOR, '[data-testid="stWidgetLabel"]')
            # textContent: a collapsed label is still there, only hidden
            text = (labels[0].get_attribute("textContent") if labels else el.text).strip()
            seen.append(text)
            if text.startswith(label) and el.is_displayed():
                return el
        time.sleep(0.3)
    raise AssertionError(f"no {testid} labelled {label!r}; found {seen}")


def _click_first(driver, css: str, wanted, timeout: float, missing: str) -> None:
    """Click the first element the CSS selector ``css`` finds for which ``wanted(element)``
    holds (scrolled into view first), trying for ``timeout`` seconds, then wait until the app
    is idle; none in time: an AssertionError saying ``missing`` and the texts last seen."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        seen = [el.text.strip() for el in found]
        for el in found:
            if wanted(el):
                driver.execute_script("arguments[0].scrollIntoView({block:'center'})", el)
                el.click()
                wait_idle(driver)
                return
        time.sleep(0.3)
    raise AssertionError(f"{missing}: {[t for t in seen if t]}")


@fresh
def choose(driver, label: str, option: str, scope: str = MAIN) -> None:
    """Pick ``option`` (its visible text starts with it) in the selectbox ``label``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = widget(driver, "stSelectbox", label, scope=scope)
    field = box.find_element(By.CSS_SELECTOR, 'input[role="combobox"]')
    if field.get_attribute("value") == option:
        return
    driver.execute_script("arguments[0].scrollIntoView({block:'center'})", field)
    field.click()
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(option)
    _click_first(
        driver,
        '[role="option"]',
        lambda o: o.text.strip().startswith(option),
        15,
        f"{label!r} offers no {option!r}",
    )


@fresh
def selected(driver, label: str, scope: str = MAIN) -> str:
    """The option shown by the selectbox ``label``."""
    from selenium.webdriver.common.by import By

    box = widget(driver, "stSelectbox", label, scope=scope)
    return box.find_element(By.CSS_SELECTOR, 'input[role="combobox"]').get_attribute("value")


@fresh
def radio(driver, label: str, option: str) -> None:
    """Pick ``option`` in the radio group ``label``."""
    from selenium.webdriver.common.by import By

    group = widget(driver, "stRadio", label)
    for lab in group.find_elements(By.CSS_SELECTOR, "label"):
        if lab.text.strip().startswith(option):
            driver.execute_script("arguments[0].scrollIntoView({block:'center'})", lab)
            lab.click()
            wait_idle(driver)
            return
    raise AssertionError(f"radio {label!r} has no {option!r}")


@fresh
def type_text(driver, label: str, text: str) -> None:
    """Replace the text of the text input ``label`` and commit it (Enter)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = widget(driver, "stTextInput", label)
    field = box.find_element(By.CSS_SELECTOR, "input")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE)
    field.send_keys(text, Keys.ENTER)
    wait_idle(driver)


@fresh
def upload(driver, label: str, path: Path) -> None:
    """Give ``path`` to the file uploader ``label``."""
    from selenium.webdriver.common.by import By

    box = widget(driver, "stFileUploader", label)
    box.find_element(By.CSS_SELECTOR, 'input[type="file"]').send_keys(str(path))
    wait_idle(driver)


@fresh
def click(driver, text: str, timeout: float = 30) -> None:
    """Click the (download) button whose text starts with ``text``."""
    _click_first(
        driver,
        "button",
        lambda b: b.text.strip().startswith(text) and b.is_displayed() and b.is_enabled(),
        timeout,
        f"no button {text!r}; buttons",
    )


def wait_text(driver, text: str, timeout: float = 120) -> None:
    """Wait until ``text`` is on the page."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in body_text(driver):
            return
        time.sleep(0.5)
    raise AssertionError(f"{text!r} never appeared; the page says:\n{body_text(driver)[:3000]}")


def downloads_to(driver, folder: Path) -> None:
    """Let the headless browser save downloads into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
    )


def wait_download(folder: Path, suffix: str, timeout: float = 60) -> Path:
    """The first finished download ending in ``suffix``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.glob(f"*{suffix}") if not p.name.endswith(".crdownload")]
        if done:
            time.sleep(0.5)
            return done[0]
        time.sleep(0.3)
    raise AssertionError(f"no {suffix} download in {folder}: {list(folder.iterdir())}")


@fresh
def tab(driver, text: str) -> None:
    """Open the tab ``text``."""
    from selenium.webdriver.common.by import By

    for t in driver.find_elements(By.CSS_SELECTOR, '[role="tab"]'):
        if t.text.strip().startswith(text):
            driver.execute_script("arguments[0].scrollIntoView({block:'center'})", t)
            driver.execute_script("arguments[0].click()", t)
            time.sleep(0.5)
            return
    raise AssertionError(f"no tab {text!r}")


@fresh
def nav(driver, title: str) -> None:
    """Go to a page through the sidebar navigation (keeps the session)."""
    from selenium.webdriver.common.by import By

    for attempt in range(2):
        for a in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"] a'):
            if a.text.strip().splitlines()[-1:] == [title]:
                a.click()
                wait_title(driver, title)
                return
        # a long navigation shows its first pages and a "View N more" button
        more = [x for x in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"] button')
                if x.text.strip().startswith("View ") and "more" in x.text]  # fmt: skip
        if not more or attempt:
            break
        driver.execute_script("arguments[0].click()", more[0])
        time.sleep(0.5)
    raise AssertionError(f"no page {title!r} in the sidebar")


def _range_input(driver, label: str):
    from selenium.webdriver.common.by import By

    return widget(driver, "stSlider", label).find_element(By.CSS_SELECTOR, 'input[type="range"]')


@fresh
def slider_value(driver, label: str) -> float:
    """The value of the slider ``label``."""
    return float(_range_input(driver, label).get_attribute("value"))


@fresh
def slide_to(driver, label: str, value: float, step: float) -> None:
    """Move the slider ``label`` to ``value`` with the arrow keys (as a keyboard user does)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    field = _range_input(driver, label)
    n = round((value - float(field.get_attribute("value"))) / step)
    driver.execute_script("arguments[0].focus()", field)
    key = Keys.ARROW_RIGHT if n > 0 else Keys.ARROW_LEFT
    actions = ActionChains(driver)
    for _ in range(abs(n)):
        actions.send_keys(key)
    actions.perform()
    wait_idle(driver)


@fresh
def pick(driver, label: str, options: list[str], scope: str = MAIN) -> None:
    """Add ``options`` (their visible text starts with each) to the multiselect ``label``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = widget(driver, "stMultiSelect", label, scope=scope)
    for option in options:
        chosen = [
            t.text.strip() for t in box.find_elements(By.CSS_SELECTOR, '[data-baseweb="tag"]')
        ]
        if any(c.startswith(option) for c in chosen):  # chosen already (a try before this)
            continue
        field = box.find_element(By.CSS_SELECTOR, "input")
        driver.execute_script("arguments[0].scrollIntoView({block:'center'})", field)
        field.click()
        field.send_keys(option)
        deadline, opts = time.monotonic() + 15, []
        while time.monotonic() < deadline:
            opts = driver.find_elements(By.CSS_SELECTOR, '[role="option"]')
            hit = [o for o in opts if o.text.strip().startswith(option)]
            if hit:
                hit[0].click()
                wait_idle(driver)
                break
            time.sleep(0.3)
        else:
            raise AssertionError(f"{label!r} offers no {option!r}: {[o.text for o in opts]}")
        box = widget(driver, "stMultiSelect", label, scope=scope)
    box.find_element(By.CSS_SELECTOR, "input").send_keys(Keys.ESCAPE)  # close the list
    wait_idle(driver)


def tall_screenshot(driver, path: Path, height: int = 7000) -> None:
    """The whole of a long page in one picture: a tall window, then back to the usual size.
    Saved as a 256-colour PNG (charts and text lose nothing visible; a third of the bytes)."""
    from PIL import Image

    driver.set_window_size(1400, height)
    wait_idle(driver)
    driver.save_screenshot(str(path))
    driver.set_window_size(1400, 2000)
    with Image.open(path) as shot:
        rgb = shot.convert("RGB")
    # cut the blank window below the page's end (the main area: right of the sidebar)
    main = np.asarray(rgb)[:, 320:]
    inked = np.flatnonzero((main < 245).any(axis=(1, 2)))
    if inked.size:
        rgb = rgb.crop((0, 0, rgb.width, min(rgb.height, int(inked[-1]) + 60)))
    small = rgb.quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def visit(driver, address: str, title: str, text: str | None = None) -> None:
    """Open ``address`` and wait for the page titled ``title`` (and for ``text`` on it)."""
    driver.get(address)
    wait_title(driver, title)
    if text is not None:
        wait_text(driver, text)


def upload_on_data_page(driver, url: str, path: Path, file_format: str | None = None) -> None:
    """Open the Data page at the app's root and give ``path`` to its "Upload a file" tab's
    uploader, choosing ``file_format`` first (none: the format the page guesses)."""
    visit(driver, url + "/", "JudgeScope")
    tab(driver, "Upload a file")
    if file_format is not None:
        radio(driver, "Format", file_format)
    upload(driver, "File", path)


def screenshots(tmp_path: Path) -> Path:
    """Where a test saves its screenshots: ``JUDGESCOPE_SCREENSHOTS`` (the README's, e.g.
    docs/screenshots) or the test's temporary folder."""
    shots = Path(os.environ.get("JUDGESCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


@contextmanager
def served(tmp_path_factory):
    """A module's app on a fresh server with its own cache, and a Chromium: (url, driver,
    the server's work folder)."""
    work = tmp_path_factory.mktemp("server")
    with streamlit_server(work, {"JUDGESCOPE_CACHE": str(work / "cache")}) as url:
        with chromium() as driver:
            yield url, driver, work
