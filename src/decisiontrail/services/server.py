"""The embedded Neo4j as an operator runs it by hand: ``decisiontrail neo4j build`` and ``neo4j start``."""

from __future__ import annotations

import threading
from pathlib import Path

from decisiontrail.graphdb.embedded import EmbeddedNeo4j, Progress, build_launcher
from decisiontrail.settings import Neo4jSettings


def build(settings: Neo4jSettings, progress: Progress) -> Path:
    """Build (or find built) the launcher of the embedded server; its path."""
    return build_launcher(settings.cache_dir, settings.neo4j_version, progress)


def run_until(stop: threading.Event, settings: Neo4jSettings, progress: Progress, *, started: Progress) -> None:
    """Run the embedded server until ``stop`` is set; ``started`` is told its URI once it serves."""
    with EmbeddedNeo4j.from_settings(settings, progress) as server:
        started(f"Neo4j is serving {server.uri} (no authentication, loopback only); Ctrl-C stops it")
        stop.wait()
