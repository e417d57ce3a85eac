"""The requests the service is serving, as Neo4j sees them (and, timed, where their time went in it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from decisiontrail.graphdb.connection import request_tag
from decisiontrail.graphdb.timing import Timing, timing
from decisiontrail.services.trail import Trail

__all__ = ["Timing", "serving", "stop_request", "timing"]


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
