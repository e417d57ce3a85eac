"""Downstream and lineage closures in memory, walking the same edges as the Cypher traversals.

``downstream`` is what ``cypher/correction/downstream.cypher`` computes (what a correction of
the decision would invalidate), ``lineage`` what ``cypher/decision/lineage.cypher`` computes
(where the decision comes from). Tests hold the two implementations to the same answers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import networkx as nx

from decisiontrail.checks.model import Label, Rel

# Every structural relationship points from the dependent end to what it hangs on.
_LINEAGE_TYPES = frozenset({Rel.PARENT.value, Rel.DEPENDS_ON.value, Rel.IN_PLAN.value, Rel.SPAWNED_BY.value})


@dataclass(frozen=True)
class Closure:
    """The decisions and plans a walk reached, the origin excluded."""

    decision_ids: frozenset[str]
    plan_ids: frozenset[str]

    def __len__(self) -> int:
        return len(self.decision_ids)

    @property
    def node_ids(self) -> frozenset[str]:
        return self.decision_ids | self.plan_ids


def downstream(G: nx.MultiDiGraph[str], decision_id: str) -> Closure:
    """What depends on ``decision_id``: its subtree, its dependents, its child plans and their
    decisions, transitively and mixed, through current decisions and active plans only.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "T", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent="R")
    >>> add_edge(G, "T", "S", "DEPENDS_ON")
    >>> sorted(downstream(G, "S").decision_ids), sorted(downstream(G, "R").decision_ids)
    (['T'], ['S', 'T'])
    """
    return _walk(G, decision_id, _current_upstream_neighbours(G))


def lineage(G: nx.MultiDiGraph[str], decision_id: str) -> Closure:
    """Where ``decision_id`` comes from: its ancestors, what it depends on, and upward through
    the decisions that spawned its plan, transitively; superseded decisions included.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> sorted(lineage(G, "S").decision_ids), sorted(lineage(G, "S").plan_ids)
    (['R'], ['P'])
    """

    def forward(node: str) -> Iterable[str]:
        return (target for _, target, key in G.out_edges(node, keys=True) if key in _LINEAGE_TYPES)

    return _walk(G, decision_id, forward)


def downstream_sizes(G: nx.MultiDiGraph[str], decision_ids: Iterable[str]) -> dict[str, int]:
    """The blast radius of each decision: how many decisions its correction would invalidate."""
    neighbours = _current_upstream_neighbours(G)
    return {d: len(_walk(G, d, neighbours)) for d in decision_ids}


def _current_upstream_neighbours(G: nx.MultiDiGraph[str]) -> Callable[[str], Iterable[str]]:
    def backward(node: str) -> Iterable[str]:
        for source, _, key in G.in_edges(node, keys=True):
            if key in _LINEAGE_TYPES and _is_live(G.nodes[source]):
                yield source

    return backward


def _is_live(data: dict[str, object]) -> bool:
    return data.get("superseded_at") is None and data.get("invalidated_at") is None


def _walk(G: nx.MultiDiGraph[str], origin: str, neighbours: Callable[[str], Iterable[str]]) -> Closure:
    if origin not in G:
        raise KeyError(f"no decision {origin} in the graph")
    seen = {origin}
    queue = deque([origin])
    while queue:
        for reached in neighbours(queue.popleft()):
            if reached not in seen:
                seen.add(reached)
                queue.append(reached)
    seen.discard(origin)
    labels = {node: G.nodes[node].get("label") for node in seen}
    return Closure(
        decision_ids=frozenset(n for n, label in labels.items() if label == Label.DECISION.value),
        plan_ids=frozenset(n for n, label in labels.items() if label == Label.PLAN.value),
    )
