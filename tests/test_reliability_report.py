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


def test_the_reliability_page_says_ci_runs_the_quick_scenarios_and_where_its_figures_are_from() -> None:
    run = json.loads((ROOT / "docs" / "reliability" / "results.json").read_text(encoding="utf-8"))
    page = report.render(run)
    intro = page.split("\n## ", 1)[0]

    assert "`make reliability-quick`" in intro and "fails CI" in intro
    assert "make reliability-quick" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for outcome in run["outcomes"]:  # every scenario names the commit its figures were measured at
        assert f"Run on {outcome['date']} at `{outcome['commit']}`." in page
