"""The Neo4j driver's lifecycle and the one way work reaches it: bounded reads and writes, errors translated.

Every statement the service sends carries a timeout (``Graph.query_timeout``), so a query that
runs too long is stopped by Neo4j and answered ``TIMEOUT``; and the request it serves, named in
the transaction's metadata, so a request whose client went away can stop its query
(``terminate_request``).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, LiteralString, TypeVar

import neo4j
from neo4j.exceptions import (
    AuthError,
    ConstraintError,
    DatabaseUnavailable,
    DriverError,
    ForbiddenOnReadOnlyDatabase,
    Neo4jError,
    NotALeader,
    ResultFailedError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from decisiontrail.cypher import query
from decisiontrail.exceptions import Conflict, TimedOut, Unavailable
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, Progress
from decisiontrail.graphdb.migrations import apply_migrations
from decisiontrail.settings import Neo4jSettings

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Graph:
    """A connected driver and the database every query names."""

    driver: neo4j.Driver
    database: str
    uri: str
    query_timeout: float | None = None
    """Seconds a transaction of the service may run before Neo4j stops it; None: the server's default."""


request_tag: ContextVar[str | None] = ContextVar("request_tag", default=None)
"""The HTTP request being served, if any: its transactions carry it in their metadata."""

REQUEST_METADATA_KEY = "decisiontrail_request"

TIMED_OUT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
TERMINATED_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.Terminated",
        "Neo.TransientError.Transaction.Terminated",
        # A transaction stopped while it waited for a lock: by its time limit, a terminate or a shutdown.
        "Neo.ClientError.Transaction.LockClientStopped",
        "Neo.TransientError.Transaction.LockClientStopped",
    }
)


def transaction_metadata() -> dict[str, Any] | None:
    """What a transaction says about itself in SHOW TRANSACTIONS: the request it serves."""
    tag = request_tag.get()
    return {REQUEST_METADATA_KEY: tag} if tag is not None else None


# The driver does not retry: with a retry time of 0 it gives up after the first failure (it
# retries only when no time at all has passed since, which a monotonic clock never shows). A stopped
# or unreachable server is so answered UNAVAILABLE at once (a refused connection in milliseconds, an
# unanswered one after CONNECTION_TIMEOUT), and the client retries with its idempotency key.
# Contention between writers is retried where it is worth it: write_transaction.
MAX_TRANSACTION_RETRY_TIME = 0.0
CONNECTION_TIMEOUT = 3.0
"""Seconds to open a connection (TCP, TLS, handshake): the longest an unanswering server holds a request."""
CONNECTION_ACQUISITION_TIMEOUT = 10.0

CONTENTION_FIRST_DELAY = 0.02
CONTENTION_MAX_DELAY = 1.0


def create_driver(uri: str, user: str | None, password: str | None) -> neo4j.Driver:
    """A driver with bounded waits, so an unreachable server fails fast instead of hanging."""
    auth = neo4j.basic_auth(user or "neo4j", password) if password is not None else None
    return neo4j.GraphDatabase.driver(
        uri,
        auth=auth,
        connection_timeout=CONNECTION_TIMEOUT,
        connection_acquisition_timeout=CONNECTION_ACQUISITION_TIMEOUT,
        max_transaction_retry_time=MAX_TRANSACTION_RETRY_TIME,
        # "label does not exist" and the like are expected on a new, empty database.
        notifications_disabled_classifications=[neo4j.NotificationDisabledClassification.UNRECOGNIZED],
    )


@contextmanager
def translated_errors(conflict: str = "the write conflicts with another", *, timeout: float | None = None) -> Iterator[None]:
    """Turn the driver's expected failures into the project's own; anything else is a bug and propagates.

    A transaction Neo4j ended (terminated, or stopped waiting for a lock) is ``TIMEOUT`` when it
    ran for its whole time limit; otherwise Neo4j ended it for its own reasons (it is stopping,
    or an operator terminated it) and that is an outage: ``UNAVAILABLE``, which a client retries.
    """
    started = time.monotonic()
    try:
        yield
    except ConstraintError as e:
        raise Conflict(f"{conflict} ({e.message})") from e
    # Before TransientError: these are transient to the server (stopping, starting, a leader switch) but outages to a client.
    except _OUTAGES as e:
        raise _unavailable(e) from e
    except Neo4jError as e:
        ran_out = timeout is not None and time.monotonic() - started >= timeout
        if e.code in TIMED_OUT_CODES or (e.code in TERMINATED_CODES and ran_out):
            limit = f" of {timeout:g}s" if timeout else ""
            raise TimedOut(f"the request ran past its time limit{limit} and was stopped; it wrote nothing") from e
        if e.code in TERMINATED_CODES:
            raise _unavailable(e) from e
        if isinstance(e, TransientError):
            raise Conflict(f"the write kept conflicting with concurrent writes and was given up: {e.message}") from e
        raise
    except ResultFailedError as e:
        # The driver reports a failure it met earlier in the same transaction this way; the
        # cause is what happened (a connection lost while Neo4j stops, say).
        if isinstance(e.__cause__, _OUTAGES):
            raise _unavailable(e.__cause__) from e
        raise


_OUTAGES = (ServiceUnavailable, SessionExpired, DatabaseUnavailable, NotALeader, ForbiddenOnReadOnlyDatabase)


def _unavailable(error: Exception) -> Unavailable:
    # The driver's message names hosts and ports: it goes to the log, not to clients.
    log.warning("Neo4j is unavailable: %s", error)
    return Unavailable("Neo4j is unavailable; the request wrote nothing and can be retried")


def read(graph: Graph, statement: LiteralString, params: dict[str, Any] | None = None) -> list[neo4j.Record]:
    """One read statement as its own transaction, under the graph's time limit, errors translated."""
    with translated_errors(timeout=graph.query_timeout):
        records, _, _ = graph.driver.execute_query(
            neo4j.Query(statement, metadata=transaction_metadata(), timeout=graph.query_timeout),
            params or {},
            database_=graph.database,
            routing_=neo4j.RoutingControl.READ,
        )
    return records


def terminate_request(graph: Graph, tag: str) -> list[str]:
    """Stop every transaction still running for the request ``tag`` (its client went away); their ids."""
    with translated_errors():
        records, _, _ = graph.driver.execute_query(
            query("admin/terminate_request"), {"key": REQUEST_METADATA_KEY, "tag": tag}, database_=graph.database
        )
    return [str(r["transaction_id"]) for r in records]


def write_transaction(
    driver: neo4j.Driver,
    database: str,
    work: Callable[[neo4j.ManagedTransaction], T],
    *,
    contention_seconds: float,
    timeout: float | None = None,
) -> T:
    """Run ``work`` as one managed write transaction, retrying contention but not unavailability.

    ``timeout`` bounds each attempt (Neo4j stops the transaction past it); the request's tag goes
    in the transaction's metadata. Deadlocks and lock timeouts between concurrent writers (``TransientError``) are retried with
    short, jittered, doubling delays until ``contention_seconds`` have passed. A server that is
    stopped, unreachable, shutting down or not the leader raises ``ServiceUnavailable`` at once:
    waiting for it would hold the request for as long as the outage lasts.
    """
    deadline = time.monotonic() + contention_seconds
    delay = CONTENTION_FIRST_DELAY
    bounded = neo4j.unit_of_work(metadata=transaction_metadata(), timeout=timeout)(work)
    while True:
        try:
            with driver.session(database=database) as session:
                return session.execute_write(bounded)
        except (DatabaseUnavailable, NotALeader, ForbiddenOnReadOnlyDatabase) as e:
            # Transient to the server, but an outage to the client: answered like a refused connection.
            raise ServiceUnavailable(f"Neo4j cannot take the write now: {e.message}") from e
        except (TransientError, ResultFailedError) as e:
            # The driver (6.4) sometimes reports a transient failure while rolling back as a
            # ResultFailedError around it; that one is as retryable as the failure it wraps.
            if not isinstance(e, TransientError) and not isinstance(e.__cause__, TransientError):
                raise
            if isinstance(e, Neo4jError) and e.code in TERMINATED_CODES | TIMED_OUT_CODES:
                raise  # stopped on purpose (a time limit, a client gone): running it again would not help
            if time.monotonic() >= deadline:
                raise
            log.info("a write met concurrent writes; trying again in %.2fs", delay)
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, CONTENTION_MAX_DELAY)


@contextmanager
def open_graph(settings: Neo4jSettings, *, progress: Progress = log.info) -> Iterator[Graph]:
    """Connect to Neo4j (starting the embedded server when no URI is set) and migrate its schema.

    Everything opened here is closed on exit, the embedded server last.
    """
    with ExitStack() as stack:
        if settings.uri is None:
            server = stack.enter_context(EmbeddedNeo4j.from_settings(settings, progress))
            assert server.uri is not None
            uri, user, password = server.uri, None, None
        else:
            uri, user, password = settings.uri, settings.user, settings.password
        driver = stack.enter_context(create_driver(uri, user, password))
        try:
            driver.verify_connectivity()
        except AuthError as e:
            raise Unavailable(f"Neo4j at {uri} refused the credentials in NEO4J_USER/NEO4J_PASSWORD: {e.message}") from e
        except (DriverError, Neo4jError) as e:
            raise Unavailable(f"cannot reach Neo4j at {uri}: {e}") from e
        graph = Graph(driver=driver, database=settings.database, uri=uri, query_timeout=settings.query_timeout)
        applied = apply_migrations(graph)
        if applied:
            progress(f"applied {len(applied)} schema migration(s): {', '.join(applied)}")
        yield graph
