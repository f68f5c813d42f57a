"""What the browser walks (browser-test.py: the preview page, console-test.py: the operator console)
share: pass/fail bookkeeping, polling, headless Chromium with its logs, the viewport, the requests
the browser sent, and the screenshot of a failure."""
import json
import os
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

failures = []
passes = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"), flush=True)
    (passes if condition else failures).append(name)


def wait_for_timed(description, predicate, timeout=5.0):
    """Polls predicate until it returns something truthy; returns (value, seconds waited)."""
    started = time.monotonic()
    last_error = None
    while time.monotonic() - started < timeout:
        try:
            value = predicate()
            if value:
                return value, time.monotonic() - started
        except Exception as error:  # a node replaced while reading it: try again
            last_error = error
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {description} ({last_error})")


def chromium():
    """Debian's headless Chromium through chromedriver, keeping the performance and console logs."""
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--force-device-scale-factor=1", "--disable-gpu", "--no-first-run"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def set_viewport(driver, width, height, mobile=False):
    """The page's viewport exactly (a headless window's size includes browser chrome)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def sent_requests(driver):
    """(url, headers) of every request the browser sent since the last call, from the performance log."""
    sent = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            request = message["params"]["request"]
            sent.append((request["url"], request.get("headers", {})))
    return sent


def failed_walk(driver, shots, what, error):
    """A walk that raised: one failed check naming the error, and a screenshot of where it stopped."""
    check(f"the {what} completes", False, repr(error))
    try:
        driver.save_screenshot(os.path.join(shots, "failure.png"))
        print("screenshot of the failure: " + os.path.join(shots, "failure.png"))
    except Exception:
        pass


def summary(name, suffix=""):
    """The last line (`name: N passed, M failed`) and the exit code."""
    print(f"{name}: {len(passes)} passed, {len(failures)} failed{suffix}" + (f" ({', '.join(failures)})" if failures else ""))
    return 1 if failures else 0
