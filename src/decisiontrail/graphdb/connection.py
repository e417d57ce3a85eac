"""The Neo4j driver's lifecycle: one driver per process, opened and closed around the work."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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


# The driver retries a failed transaction with backoff delays of about 1, 2, 4 s (±20 % jitter)
# until this much time has passed, and then once more after the next delay: a request to a stopped
# server is answered UNAVAILABLE within about 10 s, a leader switch or a brief restart is ridden out.
MAX_TRANSACTION_RETRY_TIME = 5.0


def create_driver(uri: str, user: str | None, password: str | None) -> neo4j.Driver:
    """A driver with bounded waits, so an unreachable server fails fast instead of hanging."""
    auth = neo4j.basic_auth(user or "neo4j", password) if password is not None else None
    return neo4j.GraphDatabase.driver(
        uri,
        auth=auth,
        connection_timeout=10.0,
        connection_acquisition_timeout=30.0,
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
        graph = Graph(driver=driver, database=settings.database, uri=uri)
        applied = apply_migrations(graph)
        if applied:
            progress(f"applied {len(applied)} schema migration(s): {', '.join(applied)}")
        yield graph
