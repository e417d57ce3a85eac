"""The Neo4j driver's lifecycle: connecting (starting the embedded server when asked), migrating, closing.

Work reaches the driver only through ``graphdb.database.Database``, the unit of work.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import neo4j
from neo4j.exceptions import AuthError, DriverError, Neo4jError

from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, Progress
from decisiontrail.graphdb.migrations import apply_migrations
from decisiontrail.settings import Neo4jSettings

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

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id the caller knows the request by: the HTTP request's (its X-Request-ID, or the one the service
gave it), a WebSocket operation's; what the audit trail records of each write (``services.trail.Audit``)."""

REQUEST_METADATA_KEY = "decisiontrail_request"

# The driver does not retry: with a retry time of 0 it gives up after the first failure (it
# retries only when no time at all has passed since, which a monotonic clock never shows). A stopped
# or unreachable server is so answered UNAVAILABLE at once (a refused connection in milliseconds, an
# unanswered one after CONNECTION_TIMEOUT), and the client retries with its idempotency key.
# Contention between writers is retried where it is worth it: Database.write.
MAX_TRANSACTION_RETRY_TIME = 0.0
CONNECTION_TIMEOUT = 3.0
"""Seconds to open a connection (TCP, TLS, handshake): the longest an unanswering server holds a request."""
CONNECTION_ACQUISITION_TIMEOUT = 10.0


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
