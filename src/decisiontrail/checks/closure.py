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


def downstream_sizes(
    G: nx.MultiDiGraph[str], decision_ids: Iterable[str], *, counted: Iterable[str] | None = None
) -> dict[str, int]:
    """The size of each of ``decision_ids``' downstream: how many decisions (of ``counted``, by
    default all) ``downstream`` finds below it, for all of them at once. (Its correction
    invalidates one more, the decision itself: ``analytics.blast_radius`` counts it.)

    One pass over the graph, not one walk per decision: the downstream sets are built from the
    last decisions up, each a bit set that is dropped once everything upstream of it has used it,
    so a chain of thousands costs thousands of set unions rather than millions of steps.

    >>> from decisiontrail.checks.model import add_decision, add_edge, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "R", plan_id="P", decision_type="prompt_definition", sequence_number=0)
    >>> _ = add_decision(G, "S", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="R")
    >>> _ = add_decision(G, "T", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent="R")
    >>> add_edge(G, "T", "S", "DEPENDS_ON")
    >>> downstream_sizes(G, ["R", "S", "T"])
    {'R': 2, 'S': 1, 'T': 0}
    """
    wanted = list(decision_ids)
    neighbours = _current_upstream_neighbours(G)
    # H: an edge from each node to what lies directly downstream of it, as the walk steps.
    H: nx.DiGraph[str] = nx.DiGraph()
    H.add_nodes_from(G.nodes)
    H.add_edges_from((node, reached) for node in G.nodes for reached in neighbours(node))
    decision = Label.DECISION.value
    counted_set = set(counted) if counted is not None else {n for n in G.nodes if G.nodes[n].get("label") == decision}
    bit = {node: 1 << i for i, node in enumerate(sorted(counted_set))}
    C = nx.condensation(H)  # cycles (which the rules forbid) would make one component
    members: dict[int, list[str]] = {}
    for node, component in C.graph["mapping"].items():
        members.setdefault(component, []).append(node)
    own = {c: sum(bit.get(n, 0) for n in nodes) for c, nodes in members.items()}
    cyclic = {c for c, nodes in members.items() if len(nodes) > 1}
    waiting = {c: C.in_degree(c) for c in C.nodes}  # upstream components yet to use this one's set
    reach: dict[int, int] = {}
    sizes: dict[str, int] = {}
    wanted_set = set(wanted)
    for c in reversed(list(nx.topological_sort(C))):
        below = 0
        for successor in C.successors(c):
            below |= reach[successor] | own[successor]
            waiting[successor] -= 1
            if waiting[successor] == 0:
                del reach[successor]
        reach[c] = below
        for node in members[c]:
            if node in wanted_set:
                mine = below | (own[c] if c in cyclic else 0)
                sizes[node] = (mine & ~bit.get(node, 0)).bit_count()
        if waiting[c] == 0:
            del reach[c]
    return {d: sizes[d] for d in wanted}


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
