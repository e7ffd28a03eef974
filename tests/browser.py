"""Headless Chromium for the viewer's tests: Debian's ``chromium`` and ``chromium-driver``, driven
through selenium. Without them the browser tests skip, saying why; with the environment variable
``ADTRACE_REQUIRE_BROWSER=1`` (set by CI) a missing browser is a failure instead."""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

REQUIRED = os.environ.get("ADTRACE_REQUIRE_BROWSER") == "1"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# The closed network refuses connections: without the background-networking flags Chromium
# keeps trying to reach its services and the page's own checks see noise.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,900")


class BrowserMissing(Exception):
    """No browser to drive: the reason, as a skip or a failure says it."""


def chromium_for_tests():
    """``start_chromium()``, or a skip with the reason (a failure under ADTRACE_REQUIRE_BROWSER=1)."""
    try:
        return start_chromium()
    except BrowserMissing as missing:
        if REQUIRED:
            pytest.fail(f"ADTRACE_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(str(missing))


def start_chromium():
    """A selenium driver for headless Chromium with a fresh profile; ``BrowserMissing`` without one."""
    try:
        from selenium import webdriver
    except ImportError:
        raise BrowserMissing("selenium is not installed (pip install -e '.[test]')") from None
    binary = next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        raise BrowserMissing("no Chromium and chromedriver found (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="adtrace-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # an explicit driver path: selenium's own driver manager would try the network
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.profile = profile
    return driver


def stop_chromium(driver):
    driver.quit()
    shutil.rmtree(driver.profile, ignore_errors=True)


class Page:
    """A viewer page in the browser, read and driven through its ``data-testid`` contract."""

    by_css = "css selector"

    def __init__(self, driver, path, fragment=""):
        driver.get(Path(path).resolve().as_uri() + fragment)
        self._attach(driver)

    @classmethod
    def attach(cls, driver):
        """The page the driver is on already (an iframe switched to, say)."""
        page = cls.__new__(cls)
        page._attach(driver)
        return page

    def _attach(self, driver):
        from selenium.webdriver.common.by import By

        self.driver, self.by = driver, By
        self.wait(lambda: driver.execute_script("return document.body.getAttribute('data-ready')") == "1")

    def wait(self, condition, timeout=20):
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise AssertionError("the page did not get there in time")
            time.sleep(0.02)

    def find(self, testid):
        return self.driver.find_element(self.by.CSS_SELECTOR, f'[data-testid="{testid}"]')

    def text(self, testid):
        return self.find(testid).text

    def click(self, testid):
        self.find(testid).click()

    def key(self, name):
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        ActionChains(self.driver).send_keys(getattr(Keys, name)).perform()

    def counter(self):
        return self.text("step-counter")

    def entries(self, testid="outgrads"):
        """``{label: text}`` of a dict panel, in its order on screen."""
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll(`[data-testid='${arguments[0]}'] [data-node]`))"
            ".map(e => [e.getAttribute('data-node'), e.textContent])", testid)

    def current_nodes(self):
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll('svg [data-node].current'))"
            ".map(e => e.getAttribute('data-node'))")

    def select_pass(self, pass_id):
        from selenium.webdriver.support.ui import Select

        Select(self.find("query")).select_by_value(pass_id)

    def console_errors(self):
        return [entry for entry in self.driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]

    def requests(self):
        """Every resource the page fetched after the document itself (resource timing)."""
        return self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
