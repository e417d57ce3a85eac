"""A transaction too large for Neo4j's memory: a correction of a vast downstream is refused whole.

Neo4j Community cannot change ``db.memory.transaction.max`` while it runs (``dbms.setConfigValue``
is Enterprise only), so this module starts its own embedded server with a small limit, and then
again on the same store with the default limit, instead of using the session's server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import neo4j
import pytest

from bench.workload import subtree_fixture
from decisiontrail.app import create_app
from decisiontrail.checks import run_checks
from decisiontrail.checks.closure import downstream
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.exceptions import TooLarge
from decisiontrail.graphdb import Graph, open_graph
from decisiontrail.graphdb.admin import GraphCounts, count_graph, delete_all_data
from decisiontrail.graphdb.database import CONTENTION_RETRY_TIME
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services import Trail
from decisiontrail.services.correction import correct
from decisiontrail.settings import Neo4jSettings
from decisiontrail.access import LOCAL
from serving import served

LIMIT_MB = 8
DOWNSTREAM = 1_500
"""A correction holds about 12 KB a decision it supersedes: some 18 MB here, over twice the limit."""

CORRECT = """mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id } invalidated { id } }
}"""
SUPERSEDED = "MATCH (d:Decision) WHERE d.superseded_at IS NOT NULL OR (d)-[:SUPERSEDED_BY]->() RETURN d.decision_id AS id"


@dataclass(frozen=True)
class Stored:
    counts: GraphCounts
    superseded: frozenset[str]


def stored(graph: Graph) -> Stored:
    records, _, _ = graph.driver.execute_query(SUPERSEDED, database_=graph.database)
    return Stored(count_graph(graph), frozenset(r["id"] for r in records))


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Neo4jSettings:
    """An embedded server of this module's own, on a fresh store, allowing one transaction ``LIMIT_MB``."""
    data_dir: Path = tmp_path_factory.mktemp("neo4j-small-transactions")
    return Neo4jSettings(
        data_dir=data_dir,
        cache_dir=Neo4jSettings.from_env().cache_dir,
        bolt_port=0,
        heap_mb=1024,
        pagecache_mb=64,
        tx_memory_mb=LIMIT_MB,
        query_timeout=120.0,  # memory is what this is about: a slow shared machine must not stop it first
    )


@pytest.fixture
def retries(caplog: pytest.LogCaptureFixture) -> Iterator[list[logging.LogRecord]]:
    """The unit of work's contention retries logged meanwhile (one record before each retry)."""
    with caplog.at_level(logging.INFO, logger="decisiontrail.graphdb.database"):
        yield caplog.records


def test_a_correction_past_the_transaction_memory_is_refused_whole_and_succeeds_under_a_larger_limit(
    settings: Neo4jSettings, retries: list[logging.LogRecord]
) -> None:
    with open_graph(settings) as graph:
        [target] = subtree_fixture(graph, DOWNSTREAM, batch_size=250)  # small writes, each well under the limit
        expected = downstream(load_graph(graph, LoadScope.ALL, progress=False), target).decision_ids | {target}
        assert len(expected) == DOWNSTREAM
        before = stored(graph)

        started = time.monotonic()
        with pytest.raises(TooLarge) as refused:
            correct(Trail.on(graph), target, "revert", "a smaller step", "too large at once", principal=LOCAL)
        took = time.monotonic() - started

        with served(create_app(graph=graph)) as url, httpx.Client(base_url=url, timeout=60) as client:
            response = client.post(
                "/graphql",
                json={"query": CORRECT, "variables": {"input": {"decisionId": target, "mode": "REVERT", "guidance": "again"}}},
            )
        assert response.status_code == 200, response.text
        body = response.json()
        after = stored(graph)

    # What was too large, the limit it met, that nothing was written, and what to do.
    message = refused.value.message
    assert refused.value.code == "TOO_LARGE"
    assert refused.value.limit == f"{LIMIT_MB:.1f} MiB, db.memory.transaction.max"
    assert f"correcting decision {target} supersedes its whole downstream" in message
    assert "nothing was written" in message
    assert "further down" in message and "DECISIONTRAIL_NEO4J_TX_MEMORY_MB" in message

    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"] == {"code": "TOO_LARGE"}  # a client error, not masked
    assert error["message"] == message

    assert after == before  # nothing written: not a decision, an edge, an event or a supersession
    # Refused at once: never retried as contention is, so never for the whole retry budget.
    assert not [r for r in retries if "trying again" in r.getMessage()]
    assert took < CONTENTION_RETRY_TIME

    # Under the default limit, on the same store, the same correction supersedes exactly the downstream.
    with open_graph(replace(settings, tx_memory_mb=Neo4jSettings.tx_memory_mb)) as graph:
        result = correct(Trail.on(graph), target, "revert", "a smaller step", "too large at once", principal=LOCAL)
        assert set(result.invalidated) == expected
        assert stored(graph).superseded == before.superseded | expected
        report = run_checks(load_graph(graph, LoadScope.ALL, progress=False))
        assert report.ok, report.render()


DENSE = 100_000
"""IN_PLAN edges to one plan: deleting them in one transaction is past ``LIMIT_MB``."""


def test_a_wipe_empties_a_plan_with_more_decisions_than_one_transaction_can_delete(settings: Neo4jSettings) -> None:
    """``delete_all_data`` (the tests' and the bench's wipe) deletes the relationships in batches
    before the nodes: a node deleted with every relationship it has took a plan's IN_PLAN edges,
    all of them, into one transaction."""
    with open_graph(settings) as graph:
        delete_all_data(graph)
        ledger = count_ledger(graph)
        graph.driver.execute_query("CREATE (:Plan {plan_id: 'dense'})", database_=graph.database)
        for _ in range(DENSE // 2_000):  # written in transactions under the limit
            graph.driver.execute_query(
                "MATCH (p:Plan {plan_id: 'dense'}) UNWIND range(1, 2000) AS i CREATE (:Decision)-[:IN_PLAN]->(p)",
                database_=graph.database,
            )
        assert count_graph(graph) == GraphCounts(nodes=DENSE + 1, relationships=DENSE)

        # The plan deleted with its edges, as a batch of nodes took it: past the limit, nothing deleted.
        with pytest.raises(neo4j.exceptions.Neo4jError) as refused:
            graph.driver.execute_query("MATCH (p:Plan {plan_id: 'dense'}) DETACH DELETE p", database_=graph.database)
        assert refused.value.code == "Neo.TransientError.General.MemoryPoolOutOfMemoryError"
        assert count_graph(graph) == GraphCounts(nodes=DENSE + 1, relationships=DENSE)

        delete_all_data(graph)
        assert count_graph(graph) == GraphCounts(nodes=0, relationships=0)
        assert count_ledger(graph) == ledger  # the migration ledger kept


def count_ledger(graph: Graph) -> int:
    records, _, _ = graph.driver.execute_query("MATCH (m:SchemaMigration) RETURN count(m) AS n", database_=graph.database)
    count: int = records[0]["n"]
    return count
