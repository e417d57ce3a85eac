"""A decision graph as it stood at a past moment: the same question ``Plan.tree(asOf)`` answers.

Everything in the store keeps the time it happened: a decision its ``created_at`` and, once a
correction supersedes it, ``superseded_at`` (and the ``SUPERSEDED_BY`` edge its ``at``); a plan
its ``created_at`` and ``invalidated_at``; a review its ``created_at`` and ``resolved_at``; a
correction attempt its ``at``. So the past is a function of the present graph: drop what did not
exist yet, and undo what had not happened yet.

What the store does not date is taken as it is now: a plan's phase (its history is in
``Plan.phaseHistory``, not in the graph), a dependency added after its decision, artifacts
attached later, and a correction attempt's replay outcome.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import networkx as nx

from decisiontrail.checks.model import Label, Rel

__all__ = ["as_of"]

# Per label: the attribute saying when the node came to exist.
_BORN = {
    Label.DECISION.value: "created_at",
    Label.PLAN.value: "created_at",
    Label.REVIEW.value: "created_at",
    Label.CORRECTION_ATTEMPT.value: "at",
}


def as_of(G: nx.MultiDiGraph[str], moment: datetime) -> nx.MultiDiGraph[str]:
    """A copy of ``G`` as it was at ``moment`` (an aware datetime); ``G`` is not changed.

    >>> from datetime import UTC, datetime, timedelta
    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> t0 = datetime(2026, 1, 1, tzinfo=UTC)
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0,
    ...                  created_at=t0, superseded_at=t0 + timedelta(hours=2), superseded_by="D1")
    >>> _ = add_decision(G, "D1", plan_id="P1", decision_type="prompt_definition", sequence_number=1,
    ...                  created_at=t0 + timedelta(hours=2))
    >>> add_edge(G, "D0", "D1", "SUPERSEDED_BY", at=t0 + timedelta(hours=2))
    >>> then = as_of(G, t0 + timedelta(hours=1))
    >>> sorted(then.nodes), then.nodes["D0"]["status"], "superseded_by" in then.nodes["D0"]
    (['D0', 'P1'], 'current', False)
    >>> G.nodes["D0"]["status"]  # the present is untouched
    'superseded'
    """
    if moment.tzinfo is None:
        raise ValueError("as_of: give an aware datetime (UTC), not a naive one")
    later = [n for n, data in G.nodes(data=True) if _after(data.get(_BORN.get(data.get("label", ""), "")), moment)]
    past: nx.MultiDiGraph[str] = nx.MultiDiGraph(G)
    past.remove_nodes_from(later)
    undone = [
        (source, target, key)
        for source, target, key, data in past.edges(keys=True, data=True)
        if key == Rel.SUPERSEDED_BY.value and _after(data.get("at"), moment)
    ]
    past.remove_edges_from(undone)
    for _, data in past.nodes(data=True):
        label = data.get("label")
        if label == Label.DECISION.value and _after(data.get("superseded_at"), moment):
            _forget(data, "superseded_at", "superseded_by")
            data["status"] = "current"
        elif label == Label.PLAN.value and _after(data.get("invalidated_at"), moment):
            _forget(data, "invalidated_at")
            data["status"] = "active"
        elif label == Label.REVIEW.value and _after(data.get("lapsed_at"), moment):
            data["status"] = data.get("lapsed_from", data.get("status"))
            _forget(data, "lapsed_at", "lapsed_by", "lapsed_from", "reopened_by")
        if label == Label.REVIEW.value and _after(data.get("resolved_at"), moment):
            _forget(data, "resolved_at", "resolved_by", "resolved_option", "cancelled_by", "approved_digest")
            data["status"] = "pending"
    return past


def _after(when: Any, moment: datetime) -> bool:
    return isinstance(when, datetime) and when > moment


def _forget(data: dict[str, Any], *names: str) -> None:
    for name in names:
        data.pop(name, None)
