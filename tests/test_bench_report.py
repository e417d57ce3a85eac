"""The benchmark harness's arithmetic and report (the timings themselves are the harness's, not tests')."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

from bench.harness import Breakdown, Row, Stats, git_commit
from bench.report import analysis, merge, render
from decisiontrail.graphdb import loading
from decisiontrail.services import analysis as services_analysis


def test_stats_give_median_p95_and_throughput() -> None:
    stats = Stats(tuple(float(ms) for ms in range(1, 101)), ops_per_sample=10)

    assert stats.p50_ms == 50.5
    assert stats.p95_ms == 95
    assert round(stats.ops_per_second) == round(10 / 0.0505)
    assert Stats((5.0,), throughput=123.0).ops_per_second == 123.0


def test_ratios_compare_latency_or_throughput_the_right_way_round() -> None:
    slow, fast = Stats((20.0,)), Stats((10.0,))

    assert Row("s", "c", slow, fast, "raw").ratio == 2.0
    assert (
        Row("s", "c", Stats((20.0,), ops_per_sample=100), Stats((10.0,), ops_per_sample=100), "raw", compare="throughput").ratio
        == 0.5
    )


MACHINE = {"cpu": "cpu", "cores": 2, "memory_gb": 24, "os": "linux"}


def test_the_report_shows_every_row_and_says_which_targets_were_missed() -> None:
    missed = Row(
        "correction",
        "downstream of 100",
        Stats((30.0, 40.0)),
        Stats((10.0, 12.0)),
        "hand-written Cypher",
        target="<= 1.5x",
        met=False,
        interval=(2.5, 4.0),
        extra={"db_hits": {"ours": 1234, "baseline": 200}},
    )
    met = Row("nested tree", "1,000 decisions", Stats((5.0,)), Stats((9.0,)), "@neo4j/graphql", target="<= 1.0x", met=True)
    close = Row(
        "lineage", "a walk", Stats((10.0,)), Stats((9.0,)), "an endpoint", target="<= 1.2x", met=None, interval=(0.9, 1.4)
    )
    run = {
        "sizes": "quick",
        "date": "2026-11-30 07:00 UTC",
        "workload": "10 decisions",
        "seconds": 12.0,
        "machine": {"cpu": "cpu", "cores": 2, "memory_gb": 24, "os": "linux"},
        "versions": {"neo4j": "5.26"},
        "rows": [missed.as_json(), met.as_json(), close.as_json()],
        "misses": ["correction, downstream of 100: 3.18x"],
    }

    text = render([run])

    # Two samples, or one, give a median but no p95: the row says how many there were. The
    # ratio's interval and both sides' db hits stand beside it.
    assert (
        "| correction | downstream of 100 | 35.0 ms / n=2, no p95 | hand-written Cypher | 11.0 ms / n=2, no p95 | 3.18x "
        "(2.50-4.00) | 1,234 / 200 | <= 1.5x | **no** |" in text
    )
    assert (
        "| nested tree | 1,000 decisions | 5.0 ms / n=1, no p95 | @neo4j/graphql | 9.0 ms / n=1, no p95 | 0.56x |  | "
        "<= 1.0x | yes |" in text
    )
    # A verdict the interval does not give is not given.
    assert "| 1.11x (0.90-1.40) |  | <= 1.2x | too close to call |" in text
    assert "### Targets missed, and why" in text and "3.18x" in text
    assert "Commit: `not recorded`" in text  # a run from before the harness kept its commit


def test_a_run_in_parts_names_the_machine_of_each_part_run_elsewhere() -> None:
    # Rows merged from runs on different machines must not all be shown under the latest one's.
    older = {**MACHINE, "cpu": "AMD EPYC"}
    newer = {**MACHINE, "cpu": "Intel Xeon"}
    run = {"sizes": "full", "date": "d1", "scenarios": ["lineage"], "workload": "w1", "seconds": 10.0, "commit": "aaa"}
    first = {**run, "machine": older, "versions": {}, "rows": [{"scenario": "lineage"}], "misses": []}
    second = {**run, "date": "d2", "scenarios": ["correction"], "commit": "bbb", "machine": newer, "versions": {}}
    merged = merge(first, {**second, "rows": [], "misses": []})

    text = render([{**merged, "rows": []}])

    assert "Machine of the latest part: Intel Xeon, 2 cores" in text
    assert "lineage on d1 at `aaa` on AMD EPYC, 2 cores, 24 GB, linux (10 s" in text
    assert "correction on d2 at `bbb` (10 s" in text  # the latest part's machine is the one named above


def test_a_p95_comes_from_twenty_samples_or_more() -> None:
    twenty = Stats(tuple(float(ms) for ms in range(1, 21)))
    row = Row("lineage", "x", twenty, twenty, "raw").as_json()

    assert (row["ours"]["runs"], row["ours"]["p95_ms"]) == (20, 19.0)
    assert Row("lineage", "x", Stats(twenty.samples_ms[:19]), twenty, "raw").as_json()["ours"]["p95_ms"] is None


def test_the_analysis_cites_the_saved_results_and_says_what_was_not_measured() -> None:
    run = {
        "sizes": "quick",
        "rows": [
            Row("correction", "downstream of 1", Stats((30.0,)), Stats((10.0,)), "raw", target="<= 1.5x", met=False).as_json()
        ],
    }

    text = render([{**run, "date": "d", "workload": "w", "seconds": 1.0, "machine": MACHINE, "versions": {}, "misses": []}])

    assert "3.00x (30.0 ms against 10.0 ms p50, quick.json)" in text
    assert "(not in the saved quick results)" in text  # a row this run did not have


def test_a_checkout_is_dirty_for_its_code_not_for_the_results_a_run_wrote(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "docs" / "reliability").mkdir(parents=True)
    results = ("docs/benchmarks.md", "docs/benchmarks/full.json", "docs/reliability.md", "docs/reliability/results.json")
    for name in (*results, "code.py"):
        (tmp_path / name).write_text("before\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    head = git_commit(str(tmp_path))

    for name in results:  # a part's results, and the reliability run's made in the same checkout
        (tmp_path / name).write_text("{}\n")
    clean_with_results = git_commit(str(tmp_path))
    (tmp_path / "code.py").write_text("changed\n")

    assert len(head) == 40 and clean_with_results == head
    assert git_commit(str(tmp_path)) == head + "+dirty"


def test_the_analysis_types_no_measurement_of_its_own() -> None:
    # With no results saved, every measured figure is a citation saying it is missing; what is
    # left are the targets, the workload's shapes and the service's own constants.
    text = analysis([])
    figures = set(re.findall(r"\d[\d,.]*\s?(?:ms|s\b|MB|GB|x\b|%|decisions|levels|plans)", text))

    assert figures == {
        "150 ms",  # the target for lineage on the 1M-decision database
        "200 ms",  # the target's 5,000 decisions a second, as a batch of 1,000
        "5,000 decisions",
        "2x",  # the offline target
        "200 plans",  # a load's most plans
        "20,000 decisions",  # the fewest that start offline worker processes
        "50 levels",  # the walk shapes
        "1,000 levels",  # the deep correction's shape
    }
    assert "(not in the saved quick results)" in text and "(no breakdown in the saved quick results)" in text
    assert f"{loading.PLANS_PER_LOAD} plans a load" in text
    assert f"{services_analysis.WORKERS_FROM:,} decisions" in text


def test_where_the_time_went_is_shown_and_cited_from_the_breakdown_a_run_recorded() -> None:
    spent = Breakdown()
    for served in (4.0, 5.0, 6.0):
        spent.served(
            httpx.Response(
                200,
                headers={
                    "server-timing": f'app;dur={served}, db;dur=3.0;desc="1 transaction and 2 statements", neo4j;dur=1, commit;dur=0.5'
                },
            )
        )
    spent.raw(_eager(available=1, consumed=0))
    spent.raw(_eager(available=2, consumed=1))
    ours, raw = Stats((6.0, 7.0)), Stats((2.0, 3.0))
    row = Row(
        "recording", "recordDecision over HTTP, sequential", ours, raw, "raw", extra={"breakdown": spent.as_json(ours, raw)}
    )
    run = {"sizes": "quick", "date": "d", "workload": "w", "seconds": 1.0, "machine": MACHINE, "versions": {}, "misses": []}

    text = render([{**run, "rows": [row.as_json()]}])

    # The warm-up run (the first) is left out: the medians are of the last two.
    assert (
        "| recording | recordDecision over HTTP, sequential | 6.5 ms | 5.5 ms | 3.0 ms | 1 / 2 | 1 ms | 0.5 ms | 2.5 ms | 2 ms |"
        in text
    )
    assert (
        "of its 6.5 ms p50, 5.5 in the service, 3.0 in the unit of work (1 transaction, 2 statements, 1 ms by Neo4j's count; "
        "the commit 0.5), the baseline's statement 2 ms by Neo4j's count (medians, quick.json)" in text
    )
    assert '"breakdown"' not in text  # shown as the table, not as JSON among the notes


def _eager(*, available: int, consumed: int) -> Any:
    """What the driver's ``execute_query`` answers, as far as a breakdown reads it."""
    summary = type("Summary", (), {"result_available_after": available, "result_consumed_after": consumed})()
    return type("EagerResult", (), {"summary": summary})()
