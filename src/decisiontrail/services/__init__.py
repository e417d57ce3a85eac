"""Use-cases: the one place each operation is defined; GraphQL, the LangGraph tool and the CLI call them.

Each write use-case takes the ``Trail`` and, where who asks matters, the caller's ``Principal``;
opens one transaction, reads the facts, judges them with ``domain``, writes, and writes its
events to the outbox in that same transaction (``Trail.write``); each serving process's relay
publishes them after the commit. Reads that only show data are in ``reading``. ``open_trail`` connects
the process; ``Graph`` (a connected driver) is named here so entry points never reach storage.
"""

from __future__ import annotations

from decisiontrail.graphdb.connection import Graph
from decisiontrail.services.trail import Trail, open_trail

__all__ = ["Graph", "Trail", "open_trail"]
