"""docs/reliability.md is written by reliability/report.py from docs/reliability/results.json: nothing on it by hand."""

from __future__ import annotations

import json
from pathlib import Path

from reliability import report

ROOT = Path(__file__).resolve().parent.parent


def test_the_reliability_page_is_what_its_report_writes_from_its_results() -> None:
    # Was: "Tests that cannot hide" was written into the page by hand, and the next
    # `make reliability` would have rewritten the page without it.
    run = json.loads((ROOT / "docs" / "reliability" / "results.json").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")

    assert report.render(run).rstrip() == page.rstrip()
    assert "## Tests that cannot hide" in page
