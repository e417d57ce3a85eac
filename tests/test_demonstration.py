"""The demonstration `make run` records: a run of the plan runtime with the scripted model, a review, a
child plan, a correction the runtime replays, checkpoints in Neo4j."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from decisiontrail.actors.demonstration import GUIDANCE, MODEL, record_demonstration, render_demonstration
from decisiontrail.actors.models import DEMONSTRATION_CHILD_PLAN, DEMONSTRATION_PLAN, Brief, chat_model
from decisiontrail.actors.replay import checkpoint_config
from decisiontrail.actors.runtime import Runtime
from decisiontrail.actors.workers import Workers
from decisiontrail.domain import AutomationProfile, DecisionType, Phase
from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.domain.recording import ReviewStatus
from decisiontrail.domain.runs import Actor, RunRequest, RunStatus, actor_of_thread
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.services import Trail, analysis, reading, runs
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.access import LOCAL

REDIS_TOOL = "edit_file(gateway/limits.py) with a Redis client"


def _current(store: Trail, plan_id: str) -> list[tuple[str, str]]:
    return [
        (d.decision_type.value, d.chosen_option)
        for d in reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)
    ]


def test_the_demonstration_is_a_run_of_the_runtime_with_the_scripted_model(store: Trail) -> None:
    saver = checkpointer(store)
    demo = record_demonstration(store, saver)

    root, child = demo.root_plan, demo.child_plan
    assert demo.run.status is RunStatus.SUCCEEDED and demo.run.model == MODEL
    assert demo.run.generation == 1  # one replay: the correction's
    child_run = runs.runs_of_plans(store, [child.plan_id])[0]
    assert child_run is not None and child_run.status is RunStatus.SUCCEEDED
    assert child_run.parent_run_id == demo.run.run_id and child_run.model == MODEL  # spawned by the runtime
    assert root.phase is Phase.APPLY and child.phase is Phase.APPLY
    assert root.description == DEMONSTRATION_PLAN and child.description == DEMONSTRATION_CHILD_PLAN

    parent = reading.list_decisions(store, root.plan_id, principal=LOCAL)
    types = Counter(d.decision_type for d in parent)
    assert types[DecisionType.PROMPT_DEFINITION] == 1
    assert types[DecisionType.INVARIANT_ENFORCED] == 2  # three declared, two after reconciliation
    # Every decision but the root and the invariants was made by the runtime's actors, in its threads.
    made_by = {
        d.decision_type: actor_of_thread(d.context_snapshot.actor_state_ref.thread_id)
        for d in parent + reading.list_decisions(store, child.plan_id, principal=LOCAL)
        if d.context_snapshot.actor_state_ref is not None and d.decision_type is not DecisionType.INVARIANT_ENFORCED
    }
    assert made_by[DecisionType.STRATEGY_CHOICE] is Actor.STRATEGY and made_by[DecisionType.SUBPLAN_SPAWN] is Actor.STRATEGY
    assert (
        made_by[DecisionType.IMPLEMENTATION_CHOICE] is Actor.EXECUTION and made_by[DecisionType.ERROR_RECOVERY] is Actor.EXECUTION
    )

    # The spawn decision went to a reviewer, who chose the alternative: the child plan is that choice.
    spawn = next(d for d in parent if d.decision_type is DecisionType.SUBPLAN_SPAWN)
    (review,) = reading.list_reviews(store, root.plan_id, principal=LOCAL)
    assert demo.reviews_resolved == [review.review_id]
    assert review.status is ReviewStatus.ALTERNATIVE_SELECTED and review.decision_id == spawn.decision_id
    assert review.resolved_by == "demonstration"
    assert spawn.chosen_option == DEMONSTRATION_CHILD_PLAN == child.description
    assert review.proposal.chosen_option in spawn.alternatives_considered
    assert spawn.downstream_plan_ids == (child.plan_id,) and child.spawned_by_decision_id == spawn.decision_id

    # Execute decisions recorded by actors carry checkpoint groups, Strategize ones do not.
    by_actors = [
        d for d in parent + reading.list_decisions(store, child.plan_id, principal=LOCAL) if d.context_snapshot.actor_state_ref
    ]
    for d in by_actors:
        has_group = reading.checkpoint_group(store, d.decision_id, principal=LOCAL) is not None
        assert has_group == (d.phase is Phase.EXECUTE), d.decision_type
    assert demo.checkpoint_groups == sum(1 for d in by_actors if d.phase is Phase.EXECUTE) > 0

    # The in-process buckets were corrected, and the runtime replayed the execution actor, from its
    # checkpoint in Neo4j, with no call from the demonstration.
    attempt = demo.correction.attempt
    assert attempt.replay_outcome is ReplayOutcome.REPLAYED and attempt.requested_by == "demonstration"
    invalidated = {d.decision_type for d in parent if d.decision_id in demo.correction.invalidated}
    assert invalidated == {DecisionType.IMPLEMENTATION_CHOICE, DecisionType.TOOL_INVOCATION, DecisionType.ERROR_RECOVERY}
    assert demo.correction.invalidated_plans == ()
    (point,) = attempt.replay_frontier
    assert point.checkpoint is not None and saver.get_tuple(checkpoint_config(point.checkpoint)) is not None
    current = {d.decision_id: d for d in reading.list_decisions(store, root.plan_id, current_only=True, principal=LOCAL)}
    assert demo.replayed == list(attempt.replayed_decision_ids) and set(demo.replayed) <= set(current)
    replayed = [current[i] for i in demo.replayed]
    assert [(d.decision_type.value, d.chosen_option) for d in replayed] == [
        ("implementation_choice", GUIDANCE),
        ("tool_invocation", REDIS_TOOL),
    ]
    assert {d.context_snapshot.actor_state_ref.thread_id for d in replayed} == {point.thread_id}  # type: ignore[union-attr]
    assert DecisionType.ERROR_RECOVERY not in {d.decision_type for d in current.values()}  # no clock skew with Redis
    assert analysis.check_all(store, principal=LOCAL).ok


def test_rendering_nests_the_child_plan_under_its_spawning_decision(store: Trail) -> None:
    demo = record_demonstration(store, checkpointer(store))

    lines = render_demonstration(store, demo).splitlines()

    spawn_line = next(i for i, line in enumerate(lines) if "subplan_spawn" in line)
    assert lines[0].startswith(f"plan {demo.root_plan.plan_id}")
    assert lines[spawn_line + 1].strip().startswith(f"plan {demo.child_plan.plan_id}")
    decisions = len(reading.list_decisions(store, demo.root_plan.plan_id, principal=LOCAL)) + len(
        reading.list_decisions(store, demo.child_plan.plan_id, principal=LOCAL)
    )
    assert len(lines) == decisions + 2  # one line per decision plus one per plan
    assert sum("[superseded by" in line for line in lines) == len(demo.correction.invalidated)


def test_another_processs_workers_claiming_its_runs_play_the_same_demonstration(store: Trail) -> None:
    """Workers of a serving process on the same database may claim the demonstration's runs: whoever
    claims one plays its script, the model being the run's."""
    saver = checkpointer(store)
    alone = record_demonstration(store, saver)
    expected = [sorted(_current(store, alone.root_plan.plan_id)), sorted(_current(store, alone.child_plan.plan_id))]

    built: list[str] = []

    def models(name: str, actor: Any, brief: Any, settings: Any) -> Any:
        built.append(name)
        return chat_model(name, actor, brief, settings)

    wakeup = threading.Event()
    trail = replace(store, wake_runtime=wakeup.set)  # as a serving process's: a run queued wakes its workers at once
    with Workers(Runtime(trail, saver, models=models), 2, poll=0.05, wakeup=wakeup).running():
        raced = record_demonstration(trail, saver)

    # The same decisions; their order may differ: a worker may claim the run while the invariants are
    # still being reconciled (the run is committed with its plan, reconciliation follows).
    assert [sorted(_current(store, raced.root_plan.plan_id)), sorted(_current(store, raced.child_plan.plan_id))] == expected
    assert raced.correction.attempt.replay_outcome is ReplayOutcome.REPLAYED
    assert set(built) <= {MODEL}  # the run's model, whichever worker built the actor
    assert analysis.check_all(store, principal=LOCAL).ok


def test_any_runtime_plays_the_demonstration_by_the_runs_model_name(store: Trail) -> None:
    runtime = Runtime(store, checkpointer(store))  # a serving process's, with the default models
    gate = AutomationProfile(edit_code=0.8)
    plan, _ = instantiate_plan(
        runtime.trail, DEMONSTRATION_PLAN, automation_profile=gate, run=RunRequest(model=MODEL), principal=LOCAL
    )

    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.WAITING and run.waiting_for == "review"
    assert _current(store, plan.plan_id)[1:] == [
        ("strategy_choice", "Token bucket in the API gateway"),
        ("resource_selection", "gateway/config.yaml and gateway/limits.py"),
    ]
    (review,) = reading.pending_reviews(store, plan.plan_id, principal=LOCAL)
    assert review.proposal.decision_type is DecisionType.SUBPLAN_SPAWN
    assert review.proposal.alternatives_considered == (DEMONSTRATION_CHILD_PLAN,)


def test_a_scripted_model_naming_no_playbook_is_refused() -> None:
    brief = Brief(plan_id="01J00000000000000000000000", description=DEMONSTRATION_PLAN)

    with pytest.raises(ValidationFailed) as refused:
        chat_model("scripted:nowhere", Actor.STRATEGY, brief)

    assert refused.value.field == "model" and "scripted:demonstration" in refused.value.message
