"""The demonstration hierarchy `make run` records, read back from Neo4j."""

from __future__ import annotations

from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import DecisionStore
from decisiontrail.services.demonstration import record_demonstration, render_demonstration


def test_demonstration_records_a_parent_and_a_child_plan(store: DecisionStore) -> None:
    demo = record_demonstration(store)

    parent_tree = store.get_tree(demo.root_plan.plan_id)
    child_tree = store.get_tree(demo.child_plan.plan_id)
    spawn = next(d for d in parent_tree if d.decision_type is DecisionType.SUBPLAN_SPAWN)

    assert parent_tree.root.decision.decision_type is DecisionType.PROMPT_DEFINITION
    assert len(parent_tree) + len(child_tree) == len(demo.decisions)
    assert spawn.downstream_plan_ids == (demo.child_plan.plan_id,)
    assert store.get_plan(demo.child_plan.plan_id).spawned_by_decision_id == spawn.decision_id
    # The child's strategy depends on a decision of the parent plan: influence crosses plans.
    child_strategy = next(d for d in child_tree if d.decision_type is DecisionType.STRATEGY_CHOICE)
    assert store.get_decisions(list(child_strategy.depends_on))[0].plan_id == demo.root_plan.plan_id  # type: ignore[union-attr]


def test_rendering_nests_the_child_plan_under_its_spawning_decision(store: DecisionStore) -> None:
    demo = record_demonstration(store)

    lines = render_demonstration(store, demo).splitlines()

    spawn_line = next(i for i, line in enumerate(lines) if "subplan_spawn" in line)
    assert lines[0].startswith(f"plan {demo.root_plan.plan_id}")
    assert lines[spawn_line + 1].strip().startswith(f"plan {demo.child_plan.plan_id}")
    assert len(lines) == len(demo.decisions) + 2  # one line per decision plus one per plan
