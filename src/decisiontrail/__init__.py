"""decisiontrail: decision lineage for AI actors, stored in Neo4j."""

from __future__ import annotations

__version__ = "0.1.0"
