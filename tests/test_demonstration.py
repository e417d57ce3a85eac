"""The demonstration `make run` records: scripted actors, a review, checkpoint groups, two plans."""

from __future__ import annotations

from collections import Counter

from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
from decisiontrail.actors.graph import sqlite_checkpointer
from decisiontrail.domain import DecisionType
from decisiontrail.domain.recording import ReviewStatus
from decisiontrail.services import reading
from decisiontrail.services import Trail


def test_demonstration_records_a_two_level_hierarchy_through_the_protocol(store: Trail) -> None:
    with sqlite_checkpointer(":memory:") as checkpointer:
        demo = record_demonstration(store, checkpointer)

    parent = reading.list_decisions(store, demo.root_plan.plan_id)
    child = reading.list_decisions(store, demo.child_plan.plan_id)
    types = Counter(d.decision_type for d in parent)
    spawn = next(d for d in parent if d.decision_type is DecisionType.SUBPLAN_SPAWN)

    assert types[DecisionType.PROMPT_DEFINITION] == 1
    assert types[DecisionType.INVARIANT_ENFORCED] == 2  # three declared, two after reconciliation
    assert types[DecisionType.STRATEGY_CHOICE] >= 1
    assert spawn.downstream_plan_ids == (demo.child_plan.plan_id,)
    assert demo.child_plan.spawned_by_decision_id == spawn.decision_id
    # The spawn decision went to a reviewer, who chose the alternative.
    (review,) = reading.list_reviews(store, demo.root_plan.plan_id)
    assert review.status is ReviewStatus.ALTERNATIVE_SELECTED and review.decision_id == spawn.decision_id
    assert spawn.chosen_option == "Spawn a child plan for per-client quotas"
    assert "Fold quotas into this plan" in spawn.alternatives_considered
    # Execute decisions recorded by actors carry checkpoint groups, Strategize ones do not.
    by_actors = [d for d in parent + child if d.context_snapshot.actor_state_ref is not None]
    for d in by_actors:
        has_group = reading.checkpoint_group(store, d.decision_id) is not None
        assert has_group == (d.phase.value == "execute"), d.decision_type
    assert demo.checkpoint_groups == sum(1 for d in by_actors if d.phase.value == "execute") > 0
    # The in-process implementation was corrected and the execution actor replayed from its checkpoint.
    invalidated = {d.decision_type for d in parent if d.decision_id in demo.correction.invalidated}
    assert invalidated == {DecisionType.IMPLEMENTATION_CHOICE, DecisionType.TOOL_INVOCATION, DecisionType.ERROR_RECOVERY}
    current = {d.decision_id: d for d in reading.list_decisions(store, demo.root_plan.plan_id, current_only=True)}
    assert demo.replayed and set(demo.replayed) <= set(current)
    assert current[demo.replayed[0]].chosen_option == "Redis counters shared by every gateway replica"


def test_rendering_nests_the_child_plan_under_its_spawning_decision(store: Trail) -> None:
    with sqlite_checkpointer(":memory:") as checkpointer:
        demo = record_demonstration(store, checkpointer)

    lines = render_demonstration(store, demo).splitlines()

    spawn_line = next(i for i, line in enumerate(lines) if "subplan_spawn" in line)
    assert lines[0].startswith(f"plan {demo.root_plan.plan_id}")
    assert lines[spawn_line + 1].strip().startswith(f"plan {demo.child_plan.plan_id}")
    decisions = len(reading.list_decisions(store, demo.root_plan.plan_id)) + len(
        reading.list_decisions(store, demo.child_plan.plan_id)
    )
    assert len(lines) == decisions + 2  # one line per decision plus one per plan
    assert sum("[superseded by" in line for line in lines) == len(demo.correction.invalidated)
