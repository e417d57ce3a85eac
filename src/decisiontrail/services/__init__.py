"""Use-cases: the one place each operation is defined; GraphQL, the LangGraph tool and the CLI call them.

Each write use-case takes the ``Trail`` and, where who asks matters, the caller's ``Principal``;
opens one transaction, reads the facts, judges them with ``domain``, writes, and publishes its
events after the commit. Reads that only show data are in ``reading``.
"""

from __future__ import annotations

from decisiontrail.services.trail import Trail

__all__ = ["Trail"]
