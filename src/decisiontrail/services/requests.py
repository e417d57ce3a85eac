"""The requests the service is serving, as Neo4j sees them (and, timed, where their time went in it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from decisiontrail.graphdb.connection import request_id, request_tag
from decisiontrail.graphdb.timing import Timing, timing
from decisiontrail.services.trail import Trail

__all__ = ["Timing", "known_as", "serving", "stop_request", "timing"]


@contextmanager
def serving(tag: str, known_as: str | None = None) -> Iterator[None]:
    """Within it, every transaction opened (also by tasks started within it) carries ``tag``, and
    every write's audit entry the request's id, ``known_as`` (by default the tag)."""
    token = request_tag.set(tag)
    named = request_id.set(known_as or tag)
    try:
        yield
    finally:
        request_id.reset(named)
        request_tag.reset(token)


@contextmanager
def known_as(name: str) -> Iterator[None]:
    """Within it, every write's audit entry names ``name`` as its request (a WebSocket's operation)."""
    named = request_id.set(name)
    try:
        yield
    finally:
        request_id.reset(named)


def stop_request(trail: Trail, tag: str) -> list[str]:
    """Stop every transaction still running for the request ``tag`` (its client went away); their ids."""
    return trail.database.terminate_request(tag)
