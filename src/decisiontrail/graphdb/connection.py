"""The Neo4j driver's lifecycle: one driver per process, opened and closed around the work."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TypeVar

import neo4j
from neo4j.exceptions import (
    AuthError,
    DatabaseUnavailable,
    DriverError,
    ForbiddenOnReadOnlyDatabase,
    Neo4jError,
    NotALeader,
    ResultFailedError,
    ServiceUnavailable,
    TransientError,
)

from decisiontrail.exceptions import Unavailable
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


def write_transaction(
    driver: neo4j.Driver, database: str, work: Callable[[neo4j.ManagedTransaction], T], *, contention_seconds: float
) -> T:
    """Run ``work`` as one managed write transaction, retrying contention but not unavailability.

    Deadlocks and lock timeouts between concurrent writers (``TransientError``) are retried with
    short, jittered, doubling delays until ``contention_seconds`` have passed. A server that is
    stopped, unreachable, shutting down or not the leader raises ``ServiceUnavailable`` at once:
    waiting for it would hold the request for as long as the outage lasts.
    """
    deadline = time.monotonic() + contention_seconds
    delay = CONTENTION_FIRST_DELAY
    while True:
        try:
            with driver.session(database=database) as session:
                return session.execute_write(work)
        except (DatabaseUnavailable, NotALeader, ForbiddenOnReadOnlyDatabase) as e:
            # Transient to the server, but an outage to the client: answered like a refused connection.
            raise ServiceUnavailable(f"Neo4j cannot take the write now: {e.message}") from e
        except (TransientError, ResultFailedError) as e:
            # The driver (6.4) sometimes reports a transient failure while rolling back as a
            # ResultFailedError around it; that one is as retryable as the failure it wraps.
            if not isinstance(e, TransientError) and not isinstance(e.__cause__, TransientError):
                raise
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
        graph = Graph(driver=driver, database=settings.database, uri=uri)
        applied = apply_migrations(graph)
        if applied:
            progress(f"applied {len(applied)} schema migration(s): {', '.join(applied)}")
        yield graph
