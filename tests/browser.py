"""Whether the browser tests can run here: Debian's Chromium and Playwright for Python, or a skip (a failure under CI).

The explorer's browser tests (tests/test_explorer*.py) call ``require_chromium()`` at the top of
their module, before importing Playwright: without Chromium (``DECISIONTRAIL_CHROMIUM`` names
another) or Playwright they are skipped on a workstation and fail under CI (``CI`` set), where
``.ci/run`` installs Chromium. They drive the same Chromium the same way the benchmark does.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from bench.explorer import CHROMIUM, FLAGS

__all__ = ["CHROMIUM", "FLAGS", "close_settled", "require_chromium", "unavailable"]


def unavailable() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set DECISIONTRAIL_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


def require_chromium() -> None:
    """Skips the calling test module when the browser is missing; fails it under CI instead."""
    if (missing := unavailable()) is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests cannot run in CI: {missing}", pytrace=False)
        pytest.skip(missing, allow_module_level=True)


def close_settled(context: Any) -> None:
    """Close a Playwright browser context once its pages have no request in flight: a request cut
    off by the closing tab is cancelled on the server mid-execution, and the GraphQL resolvers it
    had not awaited yet are collected later as "coroutine ... was never awaited" warnings, which
    the suite turns into an error of whichever test runs then (seen: 80 of them, from a summary
    card's count requests, failing the setup of an unrelated test)."""
    for tab in context.pages:
        try:
            tab.wait_for_load_state("networkidle", timeout=15_000)
        except Exception:  # noqa: BLE001 - a tab that never settles is closed all the same
            pass
    context.close()
