"""What CI runs on every landing (``python -m reliability --quick``): small sizes, its report kept
out of docs/, and UNAVAILABLE excused only inside a fault's window. No Neo4j."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reliability import report
from reliability.__main__ import FULL, QUICK, QUICK_REPORT, options
from reliability.faults import outside_windows

WINDOW = (1000.0, 1010.0)  # a fault injected at 1000, the service answering again at 1010


def answered(code: str, at: float, ms: float) -> dict[str, Any]:
    return {"type": "error", "op": "record", "code": code, "at": at, "ms": ms, "client": 0}


def test_an_unavailable_outside_every_fault_window_is_counted_and_inside_is_excused() -> None:
    journal = [
        {"type": "ack", "op": "record", "at": 995.0, "ms": 12.0},
        answered("UNAVAILABLE", 998.0, 20),  # before the fault: Neo4j was up
        answered("UNAVAILABLE", 1000.01, 2500),  # in flight as the fault came
        answered("UNAVAILABLE", 1004.0, 3),  # while Neo4j was down
        answered("UNAVAILABLE", 1014.0, 5000),  # sent while Neo4j was still coming back
        answered("UNAVAILABLE", 1010.5, 3),  # within the grace
        answered("UNAVAILABLE", 1030.0, 3),  # long after the service answered again
        answered("CONFLICT", 1040.0, 3),  # not an outage: judged elsewhere
    ]

    stray = outside_windows(journal, [WINDOW], grace=1.0)

    assert [e["at"] for e in stray] == [998.0, 1030.0]


def test_each_fault_has_its_own_window() -> None:
    journal = [answered("UNAVAILABLE", 1005.0, 3), answered("UNAVAILABLE", 1020.0, 3), answered("UNAVAILABLE", 1055.0, 3)]

    assert [e["at"] for e in outside_windows(journal, [WINDOW, (1050.0, 1060.0)], grace=1.0)] == [1020.0]
    assert [e["at"] for e in outside_windows(journal, [], grace=1.0)] == [1005.0, 1020.0, 1055.0]


def test_a_quick_run_is_every_scenario_small_and_writes_outside_docs(tmp_path: Path) -> None:
    quick, full = options(["--quick"]), options([])
    assert quick.out == QUICK_REPORT and full.out is None  # None: docs/reliability*
    assert quick.only is None  # every scenario
    assert (quick.examples, quick.seconds, quick.clients) == (QUICK.examples, QUICK.seconds, QUICK.clients)
    assert QUICK.examples < FULL.examples and QUICK.seconds < FULL.seconds and QUICK.clients <= FULL.clients
    assert options(["--quick", "--out", str(tmp_path)]).out == tmp_path

    saved = report.RESULTS.read_text(encoding="utf-8"), report.MARKDOWN.read_text(encoding="utf-8")
    run = json.loads(saved[0])
    run = {**run, "quick": True, "commit": "abc123", "outcomes": run["outcomes"][:1]}

    page, results = report.write(run, tmp_path)

    assert (page, results) == (tmp_path / "reliability.md", tmp_path / "results.json")
    assert (report.RESULTS.read_text(encoding="utf-8"), report.MARKDOWN.read_text(encoding="utf-8")) == saved
    assert json.loads(results.read_text(encoding="utf-8"))["outcomes"] == run["outcomes"]  # the run alone, not merged
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Reliability: a quick run") and "Quick run of" in text
    assert "`results.json` beside this page" in text and "docs/reliability/results.json" not in text
