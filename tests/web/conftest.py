"""One headless Chromium for the whole run: Debian's, driven by Playwright.

Playwright's own browser downloads are not used; without /usr/bin/chromium the browser tests
are skipped locally and fail under CI (``CI`` set), like the PostgreSQL ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.conftest import LiveServer

CHROMIUM = Path(os.environ.get("ERRATA_TEST_CHROMIUM", "/usr/bin/chromium"))
# Chromium logs every 4xx answer as a console error; a test that sends bad input expects one.
CLIENT_ERROR_LOADED = re.compile(
    r"Failed to load resource: the server responded with a status of 4\d\d"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"Chromium is required under CI and is missing at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _page(
    browser: Browser, live_server: LiveServer, *, javascript: bool, **options: Any
) -> Iterator[Page]:
    context: BrowserContext = browser.new_context(
        base_url=live_server.base_url, java_script_enabled=javascript, **options
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            message.type == "error"
            and not CLIENT_ERROR_LOADED.match(message.text)
            and errors.append(message.text)
        ),
    )
    yield page
    context.close()
    assert not errors, f"the page reported errors: {errors}"


@pytest.fixture
def page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    """A fresh tab with JavaScript; console errors (a CSP violation, say) fail the test."""
    yield from _page(browser, live_server, javascript=True)


@pytest.fixture
def plain_page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    """A fresh tab with JavaScript off, as some readers browse."""
    yield from _page(browser, live_server, javascript=False)


@pytest.fixture
def phone_page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    """A tab as wide as a phone held upright (390 CSS pixels), as a reader on the move."""
    yield from _page(browser, live_server, javascript=True, viewport={"width": 390, "height": 844})


@pytest.fixture
def dark_page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    """A tab whose reader's system asks for dark colours."""
    yield from _page(browser, live_server, javascript=True, color_scheme="dark")
