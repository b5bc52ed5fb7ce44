"""The viewer in a real browser: headless Chromium (Debian's) driven by Selenium against a `bench view` process.

Opt-in: needs `apt-get install chromium chromium-driver` and `pip install 'bench-view[browser]'`
(`bash scripts/dev.sh test-extras` does both). Screenshots go to test-artefacts/view/ at the repo root
(or $BENCH_ARTEFACTS), never into git.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewdb import FAILING

INSTALL = "apt-get install -y chromium chromium-driver && pip install 'bench-view[browser]' (bash scripts/dev.sh test-extras)"
webdriver = pytest.importorskip("selenium.webdriver", reason=f"browser tests need Selenium: {INSTALL}")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    pytest.skip(f"browser tests need Debian's Chromium and its driver: {INSTALL}", allow_module_level=True)

ARTEFACTS = Path(os.environ.get("BENCH_ARTEFACTS") or Path(__file__).resolve().parents[3] / "test-artefacts") / "view"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: Any, name: str) -> Path:
    """Save a full-window screenshot as a test artefact (PNG, well under 1 MB)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    assert 10_000 < path.stat().st_size < 1_000_000
    return path


def wait_for(driver: Any, css: str) -> Any:
    return WebDriverWait(driver, 20).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def test_click_from_the_run_list_to_a_failing_conversation(browser: Any, viewer: str) -> None:
    browser.get(f"{viewer}/-/bench")
    wait_for(browser, "#runs")
    browser.find_element(By.LINK_TEXT, "llm").click()
    wait_for(browser, "#figures")
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Run llm")
    screenshot(browser, "run-page")
    failing = browser.find_elements(By.CSS_SELECTOR, "a.conversation-link.failed")
    assert len(failing) == 2
    failing[0].click()
    verdict = wait_for(browser, "#verdict")
    assert verdict.text == "failed"
    assert FAILING in browser.find_element(By.ID, "summary").text
    call = browser.find_element(By.CSS_SELECTOR, ".toolcall.error")
    assert "find_customer_by_email" in call.text and "tool error" in call.text and "nobody@example.net" in call.text
    # The error is highlighted: a red border on the call (computed style, not just a class name).
    assert browser.execute_script("return getComputedStyle(arguments[0]).borderLeftColor", call) == "rgb(198, 40, 40)"
    heard = browser.find_element(By.CSS_SELECTOR, '.event[data-kind="channel.transcript"] .heard')
    assert heard.text == "Which plan is the fattest?"
    checks = browser.find_elements(By.CSS_SELECTOR, "table.checks tr.failed")
    assert any("Fiber 1000" in row.text for row in checks)
    assert browser.find_element(By.ID, "prompt-tokens").text == "20"
    screenshot(browser, "failing-conversation")


def test_a_figure_leads_to_its_conversations_and_the_comparison_page(browser: Any, viewer: str) -> None:
    browser.get(f"{viewer}/-/bench/run?id=idle")
    wait_for(browser, "#terminations")
    browser.find_element(By.CSS_SELECTOR, "#terminations + table a").click()
    wait_for(browser, "table.rows-and-columns")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")
    assert len(rows) == 24
    rows[0].find_element(By.CSS_SELECTOR, "td.col-conversation_id a").click()
    assert wait_for(browser, "#verdict").text == "failed"
    browser.get(f"{viewer}/-/bench/compare?a=plain&b=idle")
    assert "12 lost" in wait_for(browser, "#flips").text
    screenshot(browser, "comparison")
