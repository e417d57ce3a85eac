"""The requests the service is serving, as Neo4j sees them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from decisiontrail.graphdb.connection import request_tag
from decisiontrail.services.trail import Trail


@contextmanager
def serving(tag: str) -> Iterator[None]:
    """Within it, every transaction opened (also by tasks started within it) carries ``tag``."""
    token = request_tag.set(tag)
    try:
        yield
    finally:
        request_tag.reset(token)


def stop_request(trail: Trail, tag: str) -> list[str]:
    """Stop every transaction still running for the request ``tag`` (its client went away); their ids."""
    return trail.database.terminate_request(tag)
