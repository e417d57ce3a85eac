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

import pytest

from bench import scenarios
from bench.harness import Row, served_api
from bench.scenarios import BATCHES, CLIENTS, QUICK
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail

# One sample of each kind a row measures: a recording per concurrent client, one batch of each size,
# and two corrections each way (with a warm-up) of a downstream of one and of a hundred.
SMALLEST = replace(QUICK, name="smallest", records=CLIENTS, batches=1, corrections=(1, 100), correction_repeat=2)


@pytest.fixture
def bench_api(store: Trail, graph: Graph) -> Iterator[str]:
    """``decisiontrail serve --server-timing`` on the session's Neo4j, as ``make bench`` starts it."""
    with served_api(graph.uri, graph.database) as url:
        yield url


def _measured(row: Row) -> None:
    assert row.ours.samples_ms and all(s > 0 for s in row.ours.samples_ms), row.case
    assert row.baseline is not None and row.baseline.samples_ms, row.case


def test_recording_over_the_served_api_stores_what_each_side_sent(graph: Graph, store: Trail, bench_api: str) -> None:
    rows = scenarios.recording(graph, bench_api, SMALLEST, progress=lambda _: None)

    assert [r.case for r in rows] == [
        "recordDecision over HTTP, sequential",
        f"recordDecision over HTTP, {CLIENTS} concurrent clients (one plan each)",
        *(f"recordDecisions over HTTP, batches of {batch:,}" for batch in BATCHES),
    ]
    for row in rows:
        _measured(row)
    for row in (rows[0], *rows[2:]):  # each served write said where its time went, commit included
        served = row.extra["breakdown"]["ours"]
        assert served["transactions"] >= 1 and served["commit_ms"] > 0, (row.case, served)


def test_corrections_supersede_exactly_their_closure_ours_and_the_baseline(graph: Graph, store: Trail, bench_api: str) -> None:
    rows = scenarios.correction(graph, bench_api, SMALLEST, progress=lambda _: None)

    assert [r.case for r in rows] == [
        "downstream of 1",
        "downstream of 1: networkx closure in memory",
        "downstream of 100",
        "downstream of 100: networkx closure in memory",
    ]
    for row in rows:
        _measured(row)
    assert [len(r.ours.samples_ms) for r in rows[::2]] == [2, 2]
    # The networkx rows are a read against a read: the same closure in Cypher, not the correction's write.
    assert {r.baseline_name for r in rows[1::2]} == {"the same closure read in Cypher (correction/downstream)"}
    assert all(r.baseline is not None and len(r.baseline.samples_ms) == 2 for r in rows[1::2])


def test_lineage_and_impact_over_the_served_api_answer_what_the_statement_does(
    graph: Graph, store: Trail, bench_api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bench's walk shapes, small: 3 levels of plans and a 10-decision chain. Each row first
    # compares the GraphQL answer with the statement's, decisions and plans in full.
    monkeypatch.setattr(scenarios, "WALK_LEVELS", 3)
    monkeypatch.setattr(scenarios, "WALK_CHAIN", 10)
    shapes = scenarios.walk_shapes(store)
    rows = [
        scenarios._walk_row(graph, bench_api, SMALLEST, name, text, statement, decision_id, what)
        for name, text, statement, what, decision_id in scenarios.walk_cases(shapes)
    ]

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

    stats, connected = delivery(bench_api, corrections=2, subscribers=5)

    assert connected == 5
    assert len(stats.samples_ms) == 2 * 5 and all(s >= 0 for s in stats.samples_ms)
