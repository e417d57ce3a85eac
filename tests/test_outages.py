"""A Neo4j that stops under a running request answers that request UNAVAILABLE, never an error without a code.

While Neo4j stops, it ends the transactions still running (a query mid-flight, a write waiting
for a lock) before it closes its connections; each path must reach the client as UNAVAILABLE,
which it retries. These tests stop a Neo4j of their own under each kind of request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import neo4j
import pytest

from decisiontrail.domain import DecisionType
from decisiontrail.exceptions import DecisionTrailError, Unavailable
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.connection import create_driver
from decisiontrail.graphdb.database import Database, Transaction
from decisiontrail.graphdb.embedded import EmbeddedNeo4j
from decisiontrail.graphdb.migrations import apply_migrations
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.settings import Neo4jSettings
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import decision

SLOW_READ = "UNWIND range(1, 10000000000) AS i WITH i WHERE i = -1 RETURN count(i) AS n"


def _slow_read(tx: Transaction) -> None:
    tx.run(SLOW_READ).consume()


@pytest.fixture
def stoppable(tmp_path: Path) -> Iterator[tuple[EmbeddedNeo4j, Graph]]:
    """A Neo4j of this test's own (the session's must keep running), with the service's settings."""
    defaults = Neo4jSettings.from_env()
    server = EmbeddedNeo4j(tmp_path / "neo4j", cache_dir=defaults.cache_dir, heap_mb=512, pagecache_mb=32, shutdown_timeout=1.0)
    uri = server.start()
    try:
        with create_driver(uri, None, None) as driver:
            graph = Graph(driver=driver, database="neo4j", uri=uri, query_timeout=60.0)
            apply_migrations(graph)
            yield server, graph
    finally:
        server.stop()


def _during_stop(
    server: EmbeddedNeo4j, graph: Graph, request: Callable[[], object], running: Callable[[], bool]
) -> BaseException:
    """Start ``request``, stop the server once ``running()`` says it is under way; what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            request()
        except BaseException as e:
            raised.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    deadline = time.monotonic() + 15
    while not running():
        assert time.monotonic() < deadline, "the request never got under way"
        time.sleep(0.1)
    server.stop()
    worker.join(30)
    assert not worker.is_alive(), "the request still hangs after the server stopped"
    assert raised, "the request succeeded although the server stopped under it"
    return raised[0]


def _transactions(graph: Graph, fragment: str) -> bool:
    records, _, _ = graph.driver.execute_query(
        "SHOW TRANSACTIONS YIELD currentQuery WHERE currentQuery CONTAINS $fragment RETURN count(*) AS n",
        fragment=fragment,
        database_=graph.database,
    )
    return bool(records[0]["n"])


def test_a_query_running_while_neo4j_stops_is_unavailable(stoppable: tuple[EmbeddedNeo4j, Graph]) -> None:
    server, graph = stoppable
    error = _during_stop(server, graph, lambda: Database(graph).read(_slow_read), lambda: _transactions(graph, "range(1, 1000"))  # type: ignore[arg-type]
    assert isinstance(error, Unavailable), repr(error)


def test_a_write_waiting_for_a_lock_while_neo4j_stops_is_unavailable(stoppable: tuple[EmbeddedNeo4j, Graph]) -> None:
    server, graph = stoppable
    store = Trail.on(graph)
    plan, root = instantiate_plan(store, "locked while stopping", principal=LOCAL)
    session = graph.driver.session(database=graph.database)
    holder = session.begin_transaction()
    holder.run("MATCH (lock:PlanLock {plan_id: $id}) SET lock.writes = lock.writes + 1", id=plan.plan_id).consume()
    try:
        error = _during_stop(
            server,
            graph,
            lambda: recording_service.record(
                store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
            ),
            lambda: _transactions(graph, "PlanLock"),
        )
    finally:
        try:
            holder.close()
            session.close()
        except Exception:  # the server is gone; the holder's connection with it
            pass
    assert isinstance(error, DecisionTrailError) and error.code == "UNAVAILABLE", repr(error)


def test_no_connection_free_within_the_acquisition_timeout_is_unavailable(graph: Graph) -> None:
    """Every connection busy (or found dead) for the driver's whole acquisition timeout: the request
    is answered UNAVAILABLE, which a client retries, never as an unexpected error."""
    driver = neo4j.GraphDatabase.driver(graph.uri, max_connection_pool_size=1, connection_acquisition_timeout=0.5)
    try:
        with driver.session(database=graph.database) as holder, holder.begin_transaction() as tx:
            tx.run("RETURN 1").consume()  # the pool's only connection, held open
            busy = Database(Graph(driver=driver, database=graph.database, uri=graph.uri, query_timeout=5.0))
            with pytest.raises(Unavailable):
                busy.read(lambda t: t.run("RETURN 1").consume())
    finally:
        driver.close()
