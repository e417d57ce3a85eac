"""The benchmark's served scenarios run end to end at the smallest sizes: ``make bench`` serves the
API with ``--server-timing`` and writes through it, so a write that fails only when timed (as one
did: the watched transaction could not hold a plan-lock token) fails here, not in the first run
of ``make bench`` after it.

Nothing is timed against a target here; the scenarios check their own answers (every decision
stored as sent, each correction superseding exactly its closure, ours and the baseline's, each
walk answering the decisions and plans its statement does, each event reaching every
subscriber) and raise when they differ, and these tests check that every row was measured. The
nested tree against @neo4j/graphql (npm) and the explorer (Chromium) run only in ``make bench``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from bench import corrections, recording, walks
from bench.harness import Breakdown, Row, served_api
from bench.scenarios import BATCHES, CLIENTS, HTTP_ANCHOR, QUICK
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail

# One sample of each kind a row measures: a recording per concurrent client, one batch of each size,
# and two corrections each way (with a warm-up) of a downstream of one and of a hundred.
SMALLEST = replace(
    QUICK, name="smallest", records=CLIENTS, batches=1, corrections=(1, 100), correction_repeat=2, deep_levels=20, deep_repeat=1
)


@pytest.fixture
def bench_api(store: Trail, graph: Graph) -> Iterator[str]:
    """``decisiontrail serve --server-timing`` on the session's Neo4j, as ``make bench`` starts it."""
    with served_api(graph.uri, graph.database) as url:
        yield url


def _measured(row: Row) -> None:
    assert row.ours.samples_ms and all(s > 0 for s in row.ours.samples_ms), row.case
    assert row.baseline is not None and row.baseline.samples_ms, row.case


def test_recording_over_the_served_api_stores_what_each_side_sent(graph: Graph, store: Trail, bench_api: str) -> None:
    rows = recording.recording(graph, bench_api, SMALLEST, progress=lambda _: None)

    assert [r.case for r in rows] == [
        "recordDecision over HTTP, sequential",
        "recordDecision over HTTP, sequential: against the driver",
        f"recordDecision over HTTP, {CLIENTS} concurrent clients (one plan each)",
        *(f"recordDecisions over HTTP, batches of {batch:,}" for batch in BATCHES),
        f"OTLP import over HTTP, a trace of {recording.OTLP_SPANS:,} decision spans",
    ]
    for row in rows:
        _measured(row)
    # The single write against the same write behind the minimal HTTP endpoint (stored and checked
    # like the others), the batches against the raw UNWIND; each with both sides' db hits.
    assert rows[0].baseline_name.startswith("the same write behind a minimal HTTP endpoint") and rows[0].interval
    for row in (rows[0], *rows[3:-1]):
        assert row.extra["db_hits"]["ours"] > row.extra["db_hits"]["baseline"] > 0, row.extra["db_hits"]
    # The concurrent row: rounds each way, its verdict and the rounds' spread.
    assert rows[2].target == ">= 0.6x the raw throughput" and rows[2].interval is not None
    assert len(rows[2].ours.samples_ms) == recording.CONCURRENT_ROUNDS * CLIENTS
    for row in (rows[0], *rows[3:-1]):  # each served write said where its time went, commit included
        served = row.extra["breakdown"]["ours"]
        assert served["transactions"] >= 1 and served["commit_ms"] > 0, (row.case, served)


def test_corrections_supersede_exactly_their_closure_ours_and_the_baseline(graph: Graph, store: Trail, bench_api: str) -> None:
    rows = corrections.correction(graph, bench_api, SMALLEST, progress=lambda _: None)

    assert [r.case for r in rows[:-1]] == [
        "downstream of 1",
        "downstream of 1: against the driver",
        "downstream of 1: networkx closure in memory",
        "downstream of 100",
        "downstream of 100: against the driver",
        "downstream of 100: networkx closure in memory",
    ]
    assert rows[-1].case.startswith("across 20 levels of plans (")
    for row in rows:
        _measured(row)
    assert [len(r.ours.samples_ms) for r in rows[:6]] == [2] * 6
    # Ours over HTTP against the same statement behind the minimal HTTP endpoint, judged; and
    # against the driver, for reference; each with Neo4j's db hits of both sides.
    assert rows[0].baseline_name == HTTP_ANCHOR and rows[0].target == "<= 1.2x" and rows[0].interval
    assert rows[1].baseline_name == "the same statement through the driver" and not rows[1].target
    for row in rows[0], rows[3]:
        assert row.extra["db_hits"]["ours"] > 0 and row.extra["db_hits"]["baseline"] > 0, row.extra
        assert row.extra["breakdown"]["ours"]["served_ms"] > 0  # timed over HTTP: the Server-Timing header
    # The networkx rows are a read against a read: the same closure in Cypher, not the correction's write.
    assert {r.baseline_name for r in rows[2:6:3]} == {"the same closure read in Cypher (correction/downstream)"}
    # The deep correction against impact of the same decision, with begin_correction's memory.
    deep = rows[-1]
    assert (
        deep.target == "<= 2x"
        and deep.extra["downstream_rows"] > 20
        and deep.extra["db_hits"]["ours"] > deep.extra["db_hits"]["baseline"] > 0
        and deep.extra["begin_correction_memory_bytes"] > 0
    )


def test_the_raw_correction_writes_what_ours_writes(graph: Graph, store: Trail, bench_api: str) -> None:
    # The baseline is fair only if it writes what ours writes: the same nodes, links and properties.
    from bench.workload import subtree_fixture

    ours, raw = subtree_fixture(graph, 30, copies=2, seed=5)
    with httpx.Client(base_url=bench_api, timeout=60) as client:
        corrections._correct_served(client, {}, Breakdown(), ours)
    corrections._raw_correct(graph, Breakdown(), raw)

    wrote = corrections._footprint(graph, ours)
    assert wrote == corrections._footprint(graph, raw)
    assert wrote["superseded"] == wrote["listed"] == wrote["counted"] == 30 and wrote["audit"] and wrote["events"]


def test_lineage_and_impact_over_the_served_api_answer_what_the_statement_does(
    graph: Graph, store: Trail, bench_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bench's walk shapes, small: 3 levels of plans and a 10-decision chain. Each row first
    # compares the GraphQL answer with the statement's, decisions and plans in full.
    monkeypatch.setattr(walks, "WALK_LEVELS", 3)
    monkeypatch.setattr(walks, "WALK_CHAIN", 10)
    shapes = walks.walk_shapes(store)
    with walks.walkers(graph, bench_api, with_peer=False) as walking:
        all_rows = [
            walks._walk_rows(graph, walking, SMALLEST, name, text, statement, decision_id, what)
            for name, text, statement, what, decision_id in walks.walk_cases(shapes)
        ]
    # Each walk: against the minimal HTTP endpoint (the target), then the driver (for reference).
    assert all(len(walked) == 2 for walked in all_rows)
    assert {walked[0].baseline_name for walked in all_rows} == {HTTP_ANCHOR}
    assert all(walked[0].target == "<= 1.2x" and walked[0].interval for walked in all_rows)
    assert all(walked[0].extra["db_hits"]["ours"] >= walked[0].extra["db_hits"]["baseline"] > 0 for walked in all_rows)
    assert all(walked[1].case == walked[0].case + ": against the driver" for walked in all_rows)
    rows = [walked[0] for walked in all_rows]

    assert [r.case for r in rows] == [
        # the deepest spawn's ancestors: 3 a level, less itself
        "lineage of the deepest decision of 3 levels of plans (8 decisions, 3 plans)",
        # the top strategy and its spawn, and the two levels below
        "impact of the top strategy of 3 levels of plans (8 decisions, 2 plans)",
        # the chain's end's ancestors: the chain and its root
        "lineage of the last of a 10-decision chain (10 decisions, 1 plans)",
        "impact of the head of a 10-decision chain (10 decisions, 0 plans)",  # the chain, from its head
    ]
    for row in rows:
        _measured(row)
        assert len(row.ours.samples_ms) == SMALLEST.queries


def test_live_events_reach_every_subscriber(bench_api: str, store: Trail) -> None:
    from bench.events import delivery

    stats, connected, fan_out = delivery(bench_api, corrections=2, subscribers=5)
    assert 0 <= fan_out["first_subscriber_ms"] <= fan_out["last_subscriber_ms"]

    assert connected == 5
    assert len(stats.samples_ms) == 2 * 5 and all(s >= 0 for s in stats.samples_ms)


def test_an_otlp_import_is_timed_against_a_raw_write_of_the_same_rows(graph: Graph, store: Trail, bench_api: str) -> None:
    row = recording._otlp_import_row(graph, bench_api, replace(SMALLEST, batches=2), progress=lambda _: None)

    _measured(row)
    assert row.compare == "throughput" and row.ours.ops_per_sample == recording.OTLP_SPANS
    assert row.extra["db_hits"]["ours"] > row.extra["db_hits"]["baseline"] > 0
    assert row.extra["breakdown"]["ours"]["transactions"] == 1
    assert len(row.ours.samples_ms) == len(row.baseline.samples_ms) == 2  # type: ignore[union-attr]
    # Both sides stored the same rows: each plan (the rows' source, each side's profiled write, and
    # each side's warm-ups and samples) holds a decision per span and what the agent span became.
    held = graph.driver.execute_query(
        "MATCH (p:Plan) RETURN COUNT { (:Decision)-[:IN_PLAN]->(p) } AS n", database_=graph.database
    ).records
    assert len(held) == 3 + 2 * (2 + 2) and len({r["n"] for r in held}) == 1 and held[0]["n"] > recording.OTLP_SPANS
