"""Correction's downstream, property-tested: what Neo4j supersedes is what networkx says lies downstream."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decisiontrail.domain import DecisionType, Phase
from decisiontrail.domain.decision import SPAWNING_TYPES
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import delete_all_data
from decisiontrail.services.correction import correct, preview
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import decision

# A new plan is in Strategize; these are the non-root types it accepts there.
STRATEGIZE_TYPES = (
    DecisionType.STRATEGY_CHOICE,
    DecisionType.INVARIANT_ENFORCED,
    DecisionType.RESOURCE_SELECTION,
    DecisionType.SUBPLAN_SPAWN,
    DecisionType.SUBPLAN_PARALLEL_SPAWN,
)
MAX_PLAN_DEPTH = 3  # top-level plan, child, grandchild
MAX_PLANS = 4  # in the whole forest: keeps an example to a few dozen writes


@dataclass(frozen=True)
class PlanStep:
    """Instantiate plan ``plan``, whose root becomes decision ``root``."""

    plan: int
    root: int
    spawned_by: int | None


@dataclass(frozen=True)
class DecisionStep:
    """Record decision ``key`` in ``plan`` under ``parent``, depending on earlier decisions."""

    key: int
    plan: int
    parent: int
    decision_type: DecisionType
    depends_on: tuple[int, ...]


@dataclass(frozen=True)
class Forest:
    """A plan forest as plain data: its steps in creation order, and the correction to make."""

    steps: tuple[PlanStep | DecisionStep, ...]
    target: int
    mode: str


@st.composite
def forests(draw: st.DrawFn) -> Forest:
    """1-2 top-level plans of 1-8 decisions each (the first a strategy_choice under the root); some
    spawns get a child plan, built once its parent plan's decisions are (ADR-007: a child plan runs
    while its parent executes, after the parent's Strategize decisions)."""
    steps: list[PlanStep | DecisionStep] = []
    decisions: list[int] = []  # every decision key, in creation order
    plans = 0
    top_level = draw(st.integers(1, 2))
    spawnable = MAX_PLANS - top_level  # child plans still allowed

    def plan(spawned_by: int | None, depth: int) -> None:
        nonlocal plans, spawnable
        plan_index, plans = plans, plans + 1
        root = len(decisions)
        steps.append(PlanStep(plan_index, root, spawned_by))
        decisions.append(root)
        members = [root]
        children: list[int] = []
        for i in range(draw(st.integers(1, 8))):
            parent = root if i == 0 else draw(st.sampled_from(members))
            decision_type = DecisionType.STRATEGY_CHOICE if i == 0 else draw(st.sampled_from(STRATEGIZE_TYPES))
            depends_on = draw(st.lists(st.sampled_from(decisions), max_size=2, unique=True))
            key = len(decisions)
            steps.append(DecisionStep(key, plan_index, parent, decision_type, tuple(depends_on)))
            decisions.append(key)
            members.append(key)
            if decision_type in SPAWNING_TYPES and depth < MAX_PLAN_DEPTH and spawnable and draw(st.booleans()):
                spawnable -= 1
                children.append(key)
        for spawn in children:
            plan(spawn, depth + 1)

    for _ in range(top_level):
        plan(None, 1)
    return Forest(tuple(steps), draw(st.sampled_from(decisions)), draw(st.sampled_from(["revert", "append"])))


def downstream_graph(forest: Forest) -> nx.DiGraph:
    """Decision keys, with edges pointing downstream: parent -> child, dependency -> dependent,
    spawning decision -> every decision of the plan it spawned."""
    graph = nx.DiGraph()
    spawned_by = {step.plan: step.spawned_by for step in forest.steps if isinstance(step, PlanStep)}
    for step in forest.steps:
        if isinstance(step, PlanStep):
            graph.add_node(step.root)
            if step.spawned_by is not None:
                graph.add_edge(step.spawned_by, step.root)
            continue
        graph.add_edge(step.parent, step.key)
        graph.add_edges_from((dependency, step.key) for dependency in step.depends_on)
        if spawned_by[step.plan] is not None:
            graph.add_edge(spawned_by[step.plan], step.key)
    return graph


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(forest=forests())
def test_a_correction_supersedes_exactly_the_downstream_closure(graph: Graph, forest: Forest) -> None:
    """Correcting any decision of a random plan forest (trees, cross-plan DEPENDS_ON, child
    plans) supersedes exactly the decision and what networkx finds downstream of it, and
    invalidates exactly the child plans spawned inside that closure; nothing else changes."""
    delete_all_data(graph)
    store = Trail.on(graph)
    ids: dict[int, str] = {}
    plan_ids: dict[int, str] = {}
    spawning_of: dict[str, int] = {}  # child plan id -> key of its spawning decision
    for step in forest.steps:
        if isinstance(step, PlanStep):
            spawned_by = ids[step.spawned_by] if step.spawned_by is not None else None
            if spawned_by is not None:
                parent_plan = plan_ids[
                    next(d.plan for d in forest.steps if isinstance(d, DecisionStep) and d.key == step.spawned_by)
                ]
                if reading.get_plan(store, parent_plan, principal=LOCAL).phase is Phase.STRATEGIZE:
                    advance_phase(store, parent_plan, Phase.EXECUTE, principal=LOCAL)
            plan, root = instantiate_plan(store, f"plan {step.plan}", spawned_by_decision_id=spawned_by, principal=LOCAL)
            plan_ids[step.plan], ids[step.root] = plan.plan_id, root.decision_id
            if step.spawned_by is not None:
                spawning_of[plan.plan_id] = step.spawned_by
        else:
            draft = decision(
                plan_ids[step.plan],
                step.decision_type,
                ids[step.parent],
                depends_on=tuple(ids[d] for d in step.depends_on),
            )
            ids[step.key] = recording_service.record(store, draft, principal=LOCAL).decision_id

    closure = {forest.target} | nx.descendants(downstream_graph(forest), forest.target)
    expected = {ids[key] for key in closure}
    expected_plans = {plan_id for plan_id, spawning in spawning_of.items() if spawning in closure}
    target_id = ids[forest.target]

    impact = preview(store, target_id, principal=LOCAL)
    result = correct(store, target_id, forest.mode, "guidance", "reason", principal=LOCAL)

    assert set(impact.decision_ids) == expected
    assert set(impact.plan_ids) == expected_plans
    assert set(result.invalidated) == expected
    assert set(result.invalidated_plans) == expected_plans
    correction_id = result.correction.decision_id
    stored = {d.decision_id: d for plan_id in plan_ids.values() for d in reading.list_decisions(store, plan_id, principal=LOCAL)}
    assert set(stored) == set(ids.values()) | {correction_id}
    for decision_id in ids.values():
        assert stored[decision_id].superseded_by == (correction_id if decision_id in expected else None)
