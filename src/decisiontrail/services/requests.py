"""The requests the service is serving, as Neo4j sees them."""

from __future__ import annotations

from decisiontrail.services.trail import Trail


def stop_request(trail: Trail, tag: str) -> list[str]:
    """Stop every transaction still running for the request ``tag`` (its client went away); their ids."""
    return trail.database.terminate_request(tag)
