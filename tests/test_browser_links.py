"""Shared links on a fresh server (issue 26): the first request a new server ever gets is a
deep link with settings in its URL, as a collaborator's click on a shared link is.

Each link opens its page inside the full app: its title, the settings the URL names, the
sidebar's dataset switcher, analysis scope and workspace, the navigation of every page and
no dialog. A first request that names a module of ``pages/`` (``/warmup``, ``/state``, ...)
runs no module bare and does not stop the server: the app answers with its default page.
"""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest

from tests import _browser as b
from tests._routes import routed_pages

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
#: The navigation app.py builds, in its order (the titles of its PAGES table).
NAV = [title for _, title, _, _, _ in routed_pages()]


def _shots(tmp_path: Path) -> Path:
    shots = Path(os.environ.get("JUDGESCOPE_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def _full_shell(driver, where: str) -> None:
    """The page stands in the whole app: every page in the navigation, the sidebar's
    dataset switcher, its analysis scope and workspace, and no dialog over it."""
    from selenium.webdriver.common.by import By

    nav = [
        a.text.strip().splitlines()[-1]
        for a in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"] a')
    ]
    assert nav == NAV, f"{where}: the navigation lists {nav}"
    assert b.selected(driver, "Dataset", scope=b.SIDEBAR) == "demo", where
    sidebar = driver.find_element(By.CSS_SELECTOR, b.SIDEBAR).text
    assert "Workspace" in sidebar, f"{where}: no workspace section in the sidebar"
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stDialog"]'), where
    b.assert_no_error(driver, where)


LINKS = [
    # (first request, title, check of the settings the URL names)
    ("/rankings?dataset=demo&attribute=fluency&debias=tau&tau=0.62", "Rankings", "rankings"),
    ("/bias?dataset=demo&attribute=fluency&debias=tau&tau=0.58", "Position bias", "bias"),
    ("/agreement?dataset=demo&exclude=hallucinator,keywords", "Human agreement", "agreement"),
]


@pytest.mark.parametrize(("link", "title", "name"), LINKS, ids=[n for *_, n in LINKS])
def test_a_fresh_servers_first_request_is_a_deep_link(link, title, name, tmp_path):
    from selenium.webdriver.common.by import By

    with b.streamlit_server(tmp_path, {"JUDGESCOPE_CACHE": str(tmp_path / "cache")}) as url:
        with b.chromium() as driver:
            driver.get(url + link)
            b.wait_title(driver, title)
            _full_shell(driver, link)
            main = driver.find_element(By.CSS_SELECTOR, b.MAIN).text
            if name == "rankings":
                assert b.selected(driver, "Attribute") == "fluency"
                assert "Debiasing: tau = 0.62" in main, main[:2000]
            elif name == "bias":
                assert b.selected(driver, "Attribute") == "fluency"
                assert b.slider_value(driver, "tau: the first candidate wins") == 0.58
            else:
                chosen = driver.find_element(
                    By.CSS_SELECTOR, f'{b.SIDEBAR} [data-testid="stMultiSelect"]'
                ).text
                assert "hallucinator" in chosen and "keywords" in chosen, chosen
                assert "Left out: hallucinator, keywords" in main
            assert "tau=" in driver.current_url or name == "agreement"
            driver.save_screenshot(str(_shots(tmp_path) / f"link-{name}.png"))


def _module_names() -> list[str]:
    """Every module name under pages/ (``page``, ``state``, ``warmup``, ``views``, ...)."""
    names = {p.stem for p in (REPO / "pages").rglob("*.py")} | {
        p.name for p in (REPO / "pages").iterdir() if p.is_dir() and p.name != "__pycache__"
    }
    return sorted(names - {"__init__"})


def test_a_first_request_to_a_module_name_runs_no_module_and_keeps_the_server(tmp_path):
    from selenium.webdriver.common.by import By

    names = _module_names()
    assert {"warmup", "state", "page", "shell", "services"} <= set(names)
    routed = {url_path for _, _, _, url_path, _ in routed_pages()}
    with b.streamlit_server(tmp_path, {"JUDGESCOPE_CACHE": str(tmp_path / "cache")}) as url:
        with b.chromium() as driver:
            # "warmup" first: its module once ran in the server and ended the process
            for name in ["warmup", *[n for n in names if n != "warmup"]]:
                driver.get(f"{url}/{name}")
                b.wait_idle(driver)
                heads = b.wait_heading(driver)
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
                    assert r.status == 200, f"/{name} stopped the server"
                if name in routed:  # a page folder whose url is its name: that page
                    continue
                # not a page: the app's default page (Data) in the full shell, said not found
                assert heads[:1] == ["JudgeScope"], f"/{name} ran something else: {heads}"
                nav = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"] a')
                assert len(nav) == len(NAV), f"/{name}: {len(nav)} entries in the navigation"
                dialogs = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stDialog"]')
                assert dialogs and "not found" in dialogs[0].text.lower(), f"/{name}: no notice"
