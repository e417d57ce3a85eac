"""Lineage, impact and correction walks cost what they reach, at any hierarchy depth or chain length.

A walk that enumerates paths instead of visiting nodes multiplies with every level of a plan
hierarchy (through a plan's decisions to their plan, then up through its spawn): at 50 levels it
ran for more than 20 minutes. These tests walk 50-level hierarchies and 1,000-decision chains and
compare every answer with the networkx closure and with what the fixtures built; the suite's
per-statement timeout (tests/conftest.py) makes an exploding walk fail instead of hang.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from decisiontrail.access import LOCAL, Principal, Role
from decisiontrail.checks.closure import downstream, lineage
from decisiontrail.cypher import query
from decisiontrail.domain import Decision, DecisionType, Phase, Plan
from decisiontrail.graphdb import Graph, timing
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.exceptions import NotFound
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services.correction import correct, preview
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from factories import decision
from planning import operators

LEVELS = 50
CHAIN = 1_000

# The queries that walk a closure; each must be planned as a breadth-first walk with a visited set.
WALKS = [
    "decision/lineage",
    "decision/lineage_seen",
    "correction/downstream",
    "correction/downstream_as_of",
    "correction/supersede_downstream",
    "correction/begin_correction",
    "retention/find_prunable",
]
WALK_TYPES = ("PARENT", "DEPENDS_ON", "SPAWNED_BY", "IN_PLAN")


@dataclass
class Hierarchy:
    """A chain of plans, each spawned by a subplan_spawn of the plan above it."""

    plans: list[Plan] = field(default_factory=list)
    roots: list[Decision] = field(default_factory=list)
    strategies: list[Decision] = field(default_factory=list)
    bystanders: list[Decision] = field(default_factory=list)
    spawns: list[Decision] = field(default_factory=list)

    def decision_ids(self, levels: range) -> set[str]:
        return {d.decision_id for i in levels for d in (self.roots[i], self.strategies[i], self.bystanders[i], self.spawns[i])}


def _add(store: Trail, plan: Plan, decision_type: DecisionType, parent: Decision, *deps: Decision) -> Decision:
    return recording_service.record(
        store,
        decision(plan.plan_id, decision_type, parent.decision_id, depends_on=tuple(d.decision_id for d in deps)),
        principal=LOCAL,
    )


@pytest.fixture
def deep(store: Trail) -> Hierarchy:
    """50 levels; at each, the spawn hangs under a strategy that also has a bystander sibling,
    and the strategy depends on the level's bystander of the level above (influence across plans)."""
    return _hierarchy(store)


HIDDEN_LEVEL = 30


def _hierarchy(store: Trail, owner_of: dict[int, str] | None = None) -> Hierarchy:
    h = Hierarchy()
    for level in range(LEVELS):
        spawned_by = h.spawns[-1].decision_id if h.spawns else None
        owner = (owner_of or {}).get(level)
        plan, root = instantiate_plan(store, f"level {level}", spawned_by_decision_id=spawned_by, owner=owner, principal=LOCAL)
        bystander = _add(store, plan, DecisionType.STRATEGY_CHOICE, root)
        influences = (h.bystanders[-1],) if h.bystanders else ()
        strategy = _add(store, plan, DecisionType.STRATEGY_CHOICE, root, *influences)
        spawn = _add(store, plan, DecisionType.SUBPLAN_SPAWN, strategy)
        advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)  # its child plan runs once it executes
        h.plans.append(plan)
        h.roots.append(root)
        h.strategies.append(strategy)
        h.bystanders.append(bystander)
        h.spawns.append(spawn)
    return h


@pytest.fixture
def chain(store: Trail) -> list[Decision]:
    """One plan whose decisions form a 1,000-long PARENT chain under its root, each also
    depending on the one two above it (two routes to every ancestor)."""
    plan, root = instantiate_plan(store, "a long chain", principal=LOCAL)
    decisions = [root]
    for _ in range(CHAIN):
        deps = (decisions[-2],) if len(decisions) > 1 else ()
        decisions.append(_add(store, plan, DecisionType.STRATEGY_CHOICE, decisions[-1], *deps))
    return decisions


def test_lineage_of_the_deepest_decision_of_a_50_level_hierarchy(store: Trail, graph: Graph, deep: Hierarchy) -> None:
    deepest = deep.spawns[-1]
    decision_ids, plan_ids = reading.lineage(store, deepest.decision_id, principal=LOCAL)

    # Everything above it: every level's root, strategy and spawn, and (through the strategies'
    # dependencies) every bystander but the deepest level's own.
    expected = deep.decision_ids(range(LEVELS)) - {deepest.decision_id, deep.bystanders[-1].decision_id}
    assert set(decision_ids) == expected
    assert set(plan_ids) == {p.plan_id for p in deep.plans}
    oracle = lineage(load_graph(graph, LoadScope.ALL), deepest.decision_id)
    assert set(decision_ids) == oracle.decision_ids and set(plan_ids) == oracle.plan_ids


def test_a_limited_callers_lineage_stops_at_a_plan_it_may_not_see_in_one_statement(store: Trail, graph: Graph) -> None:
    # Every level instantiated by one actor but one, by another: what lies above that one is
    # reached only through it, so the first actor is not shown it.
    deep = _hierarchy(store, {level: "actor-b" if level == HIDDEN_LEVEL else "actor-a" for level in range(LEVELS)})
    deepest = deep.spawns[-1]
    alpha = Principal("actor-a", Role.ACTOR)

    with timing.timing() as spent:
        decision_ids, plan_ids = reading.lineage(store, deepest.decision_id, alpha)

    below = range(HIDDEN_LEVEL + 1, LEVELS)
    assert set(decision_ids) == deep.decision_ids(below) - {deepest.decision_id, deep.bystanders[-1].decision_id}
    assert set(plan_ids) == {deep.plans[i].plan_id for i in below}
    G = load_graph(graph, LoadScope.ALL)
    seen = G.subgraph(n for n, attrs in G.nodes(data=True) if G.nodes[attrs.get("plan_id", n)].get("owner") == "actor-a")
    oracle = lineage(seen, deepest.decision_id)
    assert set(decision_ids) == oracle.decision_ids and set(plan_ids) == oracle.plan_ids
    assert spent.statements == 1  # the walk, the visibility and the walk again, in one statement
    # The whole lineage in the first walk's order, kept: what an unlimited caller sees, cut.
    everything, _ = reading.lineage(store, deepest.decision_id, principal=LOCAL)
    assert decision_ids == [d for d in everything if d in set(decision_ids)]
    # A decision in the hidden plan is as if it did not exist.
    with pytest.raises(NotFound):
        reading.lineage(store, deep.spawns[HIDDEN_LEVEL].decision_id, alpha)


def test_impact_and_correction_of_the_top_strategy_of_a_50_level_hierarchy(store: Trail, graph: Graph, deep: Hierarchy) -> None:
    top = deep.strategies[0]
    # Below it: its spawn, every decision of every plan beneath, and nothing of the top plan else.
    expected = deep.decision_ids(range(1, LEVELS)) | {deep.spawns[0].decision_id}
    oracle = downstream(load_graph(graph, LoadScope.ALL), top.decision_id)
    assert oracle.decision_ids == expected

    impact = preview(store, top.decision_id, principal=LOCAL)  # the decision itself first, then its downstream
    assert set(impact.decision_ids) == expected | {top.decision_id}
    assert set(impact.plan_ids) == {p.plan_id for p in deep.plans[1:]}

    result = correct(store, top.decision_id, "revert", "one level is enough", "too deep", principal=LOCAL)
    assert set(result.invalidated) == expected | {top.decision_id}
    assert set(result.invalidated_plans) == {p.plan_id for p in deep.plans[1:]}
    current = {d.decision_id for d in reading.list_decisions(store, deep.plans[0].plan_id, current_only=True, principal=LOCAL)}
    assert current == {deep.roots[0].decision_id, deep.bystanders[0].decision_id, result.correction.decision_id}


def test_lineage_impact_and_correction_along_a_1000_decision_chain(store: Trail, graph: Graph, chain: list[Decision]) -> None:
    last, first = chain[-1], chain[1]
    decision_ids, _ = reading.lineage(store, last.decision_id, principal=LOCAL)
    assert set(decision_ids) == {d.decision_id for d in chain[:-1]}

    below_first = {d.decision_id for d in chain[2:]}
    assert downstream(load_graph(graph, LoadScope.ALL), first.decision_id).decision_ids == below_first
    assert set(preview(store, first.decision_id, principal=LOCAL).decision_ids) == below_first | {first.decision_id}

    result = correct(store, first.decision_id, "revert", "shorter", "too long", principal=LOCAL)
    assert set(result.invalidated) == below_first | {first.decision_id}
    current = {d.decision_id for d in reading.list_decisions(store, chain[0].plan_id, current_only=True, principal=LOCAL)}
    assert current == {chain[0].decision_id, result.correction.decision_id}


@pytest.mark.parametrize("name", WALKS)
def test_every_walk_is_planned_as_a_breadth_first_walk_with_a_visited_set(graph: Graph, name: str) -> None:
    """Enumerating paths (trail semantics of quantified path patterns, plain variable-length
    expansion) is what exploded; the pruning BFS visits each node once."""
    with graph.driver.session(database=graph.database) as session:
        summary = session.run("EXPLAIN " + query(name), {}).consume()  # type: ignore[operator]
    assert summary.plan is not None
    walks = [(op, details) for op, details in operators(summary.plan) if any(t in details for t in WALK_TYPES)]
    expansions = [(op, details) for op, details in walks if "Expand" in op or "Path" in op or "Repeat" in op]
    assert expansions, f"{name}: no walk found in the plan"
    multi_hop = [(op, d) for op, d in expansions if op.startswith("VarLengthExpand") or "Path" in op or "Repeat" in op]
    assert multi_hop, f"{name}: the walk is not a multi-hop expansion"
    for op, details in multi_hop:
        assert op == "VarLengthExpand(Pruning,BFS,All)", f"{name}: {op} enumerates paths: {details}"
