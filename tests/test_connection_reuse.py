"""A write that fails never touches a connection the driver has given back to the pool.

Why it could (the driver's rollback checks a connection its session already released, racing the
thread that took it next): ``graphdb.database._in_transaction`` and docs/embedded-neo4j.md. These
tests watch every use of a connection's socket and require that none happens while the connection
is back in the pool (``Bolt.in_use`` false).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator

import neo4j
import pytest
from neo4j._sync.io._bolt._base import Bolt
from neo4j.exceptions import Neo4jError

from decisiontrail.exceptions import Conflict
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.database import Database, Transaction
from decisiontrail.services import Trail

# What reads or writes a connection's socket (``defunct`` reads a byte to tell whether it was closed).
SOCKET_USES = ("defunct", "send_all", "fetch_message", "fetch_all", "reset")


@pytest.fixture
def released_uses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each use of a pooled connection's socket made while the connection was back in the pool."""
    uses: list[str] = []

    def watched(name: str) -> None:
        original = getattr(Bolt, name)

        def use(self: Bolt, *args: object, **kwargs: object) -> object:
            if self.pool is not None and not self.in_use:  # (a connection being opened has no pool yet)
                uses.append(f"{name}() on a released connection, from:\n{''.join(traceback.format_stack(limit=6)[:-1])}")
            return original(self, *args, **kwargs)

        monkeypatch.setattr(Bolt, name, use)

    for name in SOCKET_USES:
        watched(name)
    yield uses


@pytest.fixture
def one_connection(graph: Graph) -> Iterator[Database]:
    """The unit of work over a driver of a single connection: one never given back would stop the next write."""
    driver = neo4j.GraphDatabase.driver(graph.uri, max_connection_pool_size=1, connection_acquisition_timeout=2.0)
    try:
        yield Database(Graph(driver=driver, database=graph.database, uri=graph.uri, query_timeout=10.0))
    finally:
        driver.close()


def _probes(database: Database) -> int:
    return database.read(lambda tx: tx.run("MATCH (p:ReleasedConnectionProbe) RETURN count(p) AS n").single(strict=True)["n"])


def test_a_statement_neo4j_refuses_leaves_its_connection_alone_once_released(
    store: Trail, one_connection: Database, released_uses: list[str]
) -> None:
    def failing(tx: Transaction) -> None:
        tx.run("CREATE (:ReleasedConnectionProbe)").consume()
        tx.run("RETURN 1 / 0 AS n").consume()  # Neo4j fails the statement: the driver releases the connection

    with pytest.raises(Neo4jError, match="/ by zero"):
        one_connection.write(failing)

    assert released_uses == [], released_uses[0]
    # Rolled back, and the pool's one connection is free for the next write.
    one_connection.write(lambda tx: tx.run("CREATE (:ReleasedConnectionProbe)").consume())
    assert _probes(one_connection) == 1
    assert released_uses == []


def test_a_write_refused_by_a_constraint_leaves_its_connection_alone_once_released(
    store: Trail, one_connection: Database, released_uses: list[str]
) -> None:
    create = "CREATE (:Decision {decision_id: '01KBQZ0000000000000000TEST'}), (:ReleasedConnectionProbe)"
    one_connection.write(lambda tx: tx.run(create).consume())

    with pytest.raises(Conflict):
        one_connection.write(lambda tx: tx.run(create).consume())

    assert released_uses == [], released_uses[0]
    assert _probes(one_connection) == 1


def test_a_write_its_own_code_refuses_is_rolled_back_on_its_connection(
    store: Trail, one_connection: Database, released_uses: list[str]
) -> None:
    """The connection is still the transaction's (nothing failed in Neo4j): closing the session rolls it back."""

    def refused(tx: Transaction) -> None:
        tx.run("CREATE (:ReleasedConnectionProbe)").consume()
        raise ValueError("judged and refused after a statement")

    with pytest.raises(ValueError, match="judged and refused"):
        one_connection.write(refused)

    assert released_uses == []
    assert _probes(one_connection) == 0
    one_connection.write(lambda tx: tx.run("CREATE (:ReleasedConnectionProbe)").consume())
    assert _probes(one_connection) == 1
