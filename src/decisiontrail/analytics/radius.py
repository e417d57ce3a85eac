"""Blast radius: how many decisions correcting a decision would invalidate, the one count every view gives.

A correction supersedes the decision it corrects and that decision's whole downstream, across
child plans (ADR-007, docs/correction.md). So the blast radius of a current decision is the
decision itself plus its downstream closure (``checks.closure.downstream``): what
``services.correction.preview`` lists (``decisiontrail impact``, GraphQL ``impact``), what
``correct`` reports it invalidated, what ``analyze`` ranks the most critical decisions by, and
what GEXF writes as ``blast_radius``. A superseded decision has none: it cannot be corrected.
"""

from __future__ import annotations

import networkx as nx

from decisiontrail.checks.closure import downstream_sizes
from decisiontrail.checks.model import decisions

__all__ = ["blast_radius"]


def blast_radius(G: nx.MultiDiGraph[str]) -> dict[str, int]:
    """How many in-scope decisions correcting each current decision would invalidate: itself and its downstream.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "I", plan_id="P", decision_type="implementation_choice", sequence_number=2, parent="S")
    >>> blast_radius(G)
    {'R': 3, 'S': 2, 'I': 1}
    """
    recorded = dict(decisions(G))
    current = [d for d, data in recorded.items() if data.get("status") == "current"]
    # The decision itself is superseded with its downstream, which ``downstream_sizes`` counts without it.
    return {d: 1 + below for d, below in downstream_sizes(G, current, counted=recorded.keys()).items()}
