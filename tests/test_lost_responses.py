"""A response lost between Neo4j and the service ends its request UNAVAILABLE, and its transaction's locks with it.

``make reliability`` found requests unanswered for minutes under load: Neo4j had sent a statement's
summary, this machine's loopback had acknowledged it and never delivered it, and the driver, which
has no read timeout of its own, waited for good while the transaction held its plan's lock and
every writer behind it timed out. The embedded Neo4j now sends keep-alive NOOPs during every
request and hints the driver (``connection.recv_timeout_seconds``) to give up a connection that
stays silent past that. These tests lose the responses on purpose, in a TCP proxy between the
driver and the session's Neo4j.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlparse

import neo4j
import pytest

from decisiontrail.exceptions import TimedOut, Unavailable
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.connection import create_driver
from decisiontrail.graphdb.database import SILENT_CONNECTION, Database, Transaction

SILENCE_LIMIT = 10.0
"""What the embedded Neo4j hints: keep-alive every 5 s, two missed."""

# The suite's server is the embedded one unless DECISIONTRAIL_TEST_NEO4J_URI names another (conftest.py's
# `graph`); NEO4J_URI, the service's setting, does not change which server the suite uses.
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("DECISIONTRAIL_TEST_NEO4J_URI")),
    reason="the keep-alive settings are the embedded Neo4j's; DECISIONTRAIL_TEST_NEO4J_URI names a server with its own",
)


class LossyProxy:
    """Forwards TCP between the driver and Neo4j; once ``lose`` is set, what Neo4j sends is dropped."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.lose = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, server, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, client, self.lose), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, lose: threading.Event | None) -> None:
        try:
            while data := source.recv(65536):
                if lose is None or not lose.is_set():
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            # One side gone: so is the other (Neo4j rolls back the transaction of a closed connection).
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def through_proxy(graph: Graph) -> Iterator[tuple[LossyProxy, Database]]:
    bolt = urlparse(graph.uri)
    assert bolt.hostname is not None and bolt.port is not None
    proxy = LossyProxy(bolt.hostname, bolt.port)
    driver = create_driver(f"bolt://127.0.0.1:{proxy.port}", None, None)
    try:
        yield proxy, Database(Graph(driver=driver, database=graph.database, uri=graph.uri, query_timeout=30.0))
    finally:
        driver.close()
        proxy.close()
        graph.driver.execute_query("MATCH (n:LostResponseProbe) DELETE n", database_=graph.database)


def _in_thread(work: object, seconds: float) -> BaseException | object:
    """Runs ``work()`` in a thread for at most ``seconds``; what it returned or raised."""
    outcome: list[BaseException | object] = []

    def run() -> None:
        try:
            outcome.append(work())  # type: ignore[operator]
        except BaseException as e:  # noqa: BLE001 - the test inspects it
            outcome.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still waiting after {seconds:g}s: a lost response held the request"
    return outcome[0]


def test_a_lost_response_is_answered_unavailable_and_the_transaction_lets_its_locks_go(
    graph: Graph, through_proxy: tuple[LossyProxy, Database], caplog: pytest.LogCaptureFixture
) -> None:
    proxy, database = through_proxy

    def work(tx: Transaction) -> None:
        # The write lock on the probe, as a recording holds its plan's lock; then its answer is lost.
        tx.run("MERGE (n:LostResponseProbe {key: 'held'}) SET n.writes = coalesce(n.writes, 0) + 1").consume()
        proxy.lose.set()
        tx.run("RETURN 1").consume()

    started = time.monotonic()
    outcome = _in_thread(lambda: database.write(work), SILENCE_LIMIT + 15)
    took = time.monotonic() - started

    assert isinstance(outcome, Unavailable), outcome
    assert took < SILENCE_LIMIT + 5, f"gave up only after {took:.1f}s"
    # Logged as a silent connection, which the reliability harness tells from other outages by.
    assert [r for r in caplog.records if getattr(r, SILENT_CONNECTION, False)], [r.getMessage() for r in caplog.records]
    # The transaction is gone with its connection: another writer takes the lock at once, and the
    # first write was rolled back (writes counts only this one).
    records, _, _ = graph.driver.execute_query(
        neo4j.Query(
            "MERGE (n:LostResponseProbe {key: 'held'}) SET n.writes = coalesce(n.writes, 0) + 1 RETURN n.writes AS writes",
            timeout=5,
        ),
        database_=graph.database,
    )
    assert records[0]["writes"] == 1


def test_a_long_statement_is_kept_alive_past_the_silence_limit(through_proxy: tuple[LossyProxy, Database]) -> None:
    """The other side of the limit: a statement that runs longer than it is not taken for a lost answer."""
    _, database = through_proxy
    limited = Database(
        Graph(
            driver=database.graph.driver,
            database=database.graph.database,
            uri=database.graph.uri,
            query_timeout=SILENCE_LIMIT + 2,
        )
    )

    def slow(tx: Transaction) -> None:
        tx.run("UNWIND range(1, 10000000000) AS i WITH i WHERE i = -1 RETURN count(i) AS n").consume()

    outcome = _in_thread(lambda: limited.read(slow), SILENCE_LIMIT + 20)

    # Stopped by its own time limit (TIMEOUT), not given up as silent (UNAVAILABLE) at the silence limit.
    assert isinstance(outcome, TimedOut), outcome
