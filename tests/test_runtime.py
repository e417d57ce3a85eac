"""The plan runtime (issue 45): plans run end to end by ADR-033's actors, and corrections replayed by
the service itself, with no client acting."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from decisiontrail.actors.runtime import RUNTIME, Runtime
from decisiontrail.domain import DecisionType, Invariant, Phase
from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.domain.runs import MAX_ATTEMPTS, RunRequest, RunStatus
from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb.checkpoints import Neo4jCheckpointSaver
from decisiontrail.services import Trail, analysis, reading, runs
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.access import LOCAL


@pytest.fixture
def saver(store: Trail) -> Iterator[Any]:
    yield Neo4jCheckpointSaver(store.graph)


def _types(store: Trail, plan_id: str) -> list[str]:
    return [d.decision_type.value for d in reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)]


def _children(store: Trail, plan_id: str) -> list[Any]:
    ids = reading.child_plans_of(store, [plan_id])[0]
    return [p for p in reading.get_plans(store, ids, principal=LOCAL) if p is not None]


def test_a_run_records_the_whole_hierarchy_with_the_scripted_model(store: Trail, saver: Any) -> None:
    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(
        runtime.trail,
        "Add rate limiting to the billing API",
        invariants=[Invariant(name="coverage", statement="Coverage stays at 80%")],
        run=RunRequest(),
        principal=LOCAL,
    )
    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.SUCCEEDED, run.error
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase is Phase.APPLY
    assert _types(store, plan.plan_id) == [
        "prompt_definition",
        "invariant_enforced",
        "strategy_choice",
        "resource_selection",
        "subplan_spawn",
        "implementation_choice",
        "tool_invocation",
    ]
    (child,) = _children(store, plan.plan_id)
    assert child.phase is Phase.APPLY
    assert "subplan_spawn" not in _types(store, child.plan_id)  # depth 2: the child spawns none
    assert runs.runs_of_plans(store, [child.plan_id])[0].status is RunStatus.SUCCEEDED  # type: ignore[union-attr]
    assert analysis.check_all(store, principal=LOCAL).ok


def test_a_corrected_strategy_is_replayed_by_the_service(store: Trail, saver: Any) -> None:
    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(runtime.trail, "Add rate limiting to the billing API", run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    (old_child,) = _children(store, plan.plan_id)
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )

    result = correct(runtime.trail, strategy.decision_id, "revert", "Use Redis counters shared by every replica", principal=LOCAL)
    assert runs.runs_of_plans(store, [plan.plan_id])[0].status is RunStatus.QUEUED  # type: ignore[union-attr]
    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.SUCCEEDED, run.error
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.REPLAYED, attempt.replay_detail
    current = reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)
    choice = next(
        d for d in current if d.decision_type is DecisionType.STRATEGY_CHOICE and d.decision_id != result.correction.decision_id
    )
    assert choice.chosen_option == "Use Redis counters shared by every replica"
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase is Phase.APPLY
    children = _children(store, plan.plan_id)
    fresh = [c for c in children if not c.is_invalidated]
    assert len(children) == 2 and len(fresh) == 1 and fresh[0].plan_id != old_child.plan_id
    assert reading.get_plan(store, fresh[0].plan_id, principal=LOCAL).phase is Phase.APPLY
    assert analysis.check_all(store, principal=LOCAL).ok


def test_a_replay_whose_actor_fails_fails_its_attempt_and_its_run(store: Trail, saver: Any) -> None:
    from decisiontrail.actors.models import chat_model

    failing = {"on": False}

    def models(name: str, actor: Any, brief: Any, settings: Any) -> Any:
        if failing["on"]:
            raise RuntimeError("the model provider is down")
        return chat_model(name, actor, brief, settings)

    runtime = Runtime(store, saver, models=models)
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )

    failing["on"] = True
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)
    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.FAILED and run.error == "RuntimeError: the model provider is down"
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.FAILED  # was: left pending, the run failed on its first turn
    assert attempt.replay_detail == "RuntimeError: the model provider is down"


def test_a_replay_cut_off_by_a_neo4j_outage_goes_on_from_its_checkpoint_and_is_replayed(store: Trail, saver: Any) -> None:
    """Neo4j unavailable in the middle of a replay's turn is the store's outage, not the run's
    failure: the run is left to its claim's lapse and the next claim replays it (was: the run and
    its replay FAILED as soon as the store answered again, by a Neo4j restart)."""
    from decisiontrail.actors.models import chat_model
    from decisiontrail.settings import RuntimeSettings

    outage = {"on": False, "met": 0}

    def models(name: str, actor: Any, brief: Any, settings: Any) -> Any:
        if outage["on"]:
            outage["met"] += 1
            raise Unavailable("Neo4j is unavailable; the request wrote nothing and can be retried")
        return chat_model(name, actor, brief, settings)

    runtime = Runtime(store, saver, models=models, settings=RuntimeSettings(lease=0.5))
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)

    outage["on"] = True
    assert runtime.run_once() is None  # the turn met the outage and stopped, nothing finished
    run = runs.runs_of_plans(store, [plan.plan_id])[0]
    assert outage["met"] == 1 and run is not None and run.status is RunStatus.RUNNING
    assert reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL).replay_outcome is ReplayOutcome.PENDING

    outage["on"] = False  # Neo4j is back; the claim lapses and the run is taken up again
    time.sleep(0.6)
    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.SUCCEEDED, run.error
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.REPLAYED, attempt.replay_detail
    chosen = [
        d.chosen_option
        for d in reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)
        if d.decision_type is DecisionType.STRATEGY_CHOICE
    ]
    assert chosen == ["Rotate them monthly"]


def test_a_replay_that_outlasts_its_time_limit_fails_its_attempt_and_its_run(store: Trail, saver: Any) -> None:
    """A turn is bounded: a model that stops answering does not hold a replay (or its worker) for
    ever, and its answer, when it comes at last, records nothing."""
    from decisiontrail.actors.models import chat_model
    from decisiontrail.actors.scripted import ScriptedChatModel, decide
    from decisiontrail.settings import RuntimeSettings

    asked, answer = threading.Event(), threading.Event()

    def stalled(messages: Any) -> Any:  # a provider that stops answering, until the test lets it
        asked.set()
        answer.wait(timeout=60)
        return decide(decision_type="strategy_choice", question="Late?", chosen_option="too late", rationale="late")

    def models(name: str, actor: Any, brief: Any, settings: Any) -> Any:
        return ScriptedChatModel(every_turn=stalled) if asked_for["stall"] else chat_model(name, actor, brief, settings)

    asked_for = {"stall": False}
    plan, _ = instantiate_plan(store, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    assert Runtime(store, saver).run_until_settled(plan.plan_id, timeout=120).status is RunStatus.SUCCEEDED
    runtime = Runtime(store, saver, models=models, settings=RuntimeSettings(time_limit=2.0))
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )

    asked_for["stall"] = True
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)
    before = reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)
    run = runtime.run_until_settled(plan.plan_id, timeout=60)

    # the worker gave the turn up while its thread still waited on the model
    turn = [t for t in threading.enumerate() if t.name == f"run {run.run_id}"]
    assert asked.is_set() and turn and turn[0].is_alive()
    assert run.status is RunStatus.FAILED and run.error is not None
    assert run.error.startswith("TIMEOUT: the turn took longer than its time limit of 2 s"), run.error
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.FAILED and attempt.replay_detail == run.error

    answer.set()  # the model answers at last, with a record_decision call: the actor stops before it
    turn[0].join(timeout=30)
    assert not turn[0].is_alive()
    assert reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL) == before


def _lapsed_claims(store: Trail, times: int) -> None:
    """Workers that claim the queued run and die at once, ``times`` over: each claim's lease lapses."""
    for _ in range(times):
        held = runs.claim(store, "a worker that dies", timedelta(milliseconds=1), principal=RUNTIME)
        assert held is not None
        time.sleep(0.01)


@pytest.mark.parametrize("taken_up", [False, True], ids=["queued", "taken up"])
def test_a_replay_whose_workers_keep_dying_fails_its_attempt_and_its_run(store: Trail, saver: Any, taken_up: bool) -> None:
    """A stuck replay is retried (each claim that lapsed is one), then marked FAILED with its run:
    never left pending for ever, whether it was still queued or its generation had begun."""
    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)

    if taken_up:  # the first worker took the replay up (a new generation) before it died
        held = runs.claim(store, "a worker that dies", timedelta(milliseconds=1), principal=RUNTIME)
        assert held is not None
        assert runs.take_replay(store, held, "a worker that dies", result.attempt.attempt_id, principal=RUNTIME) is not None
        time.sleep(0.01)
        _lapsed_claims(store, MAX_ATTEMPTS - 1)
    else:
        _lapsed_claims(store, MAX_ATTEMPTS)
    run = runtime.run_once()  # the claim after the last one allowed

    assert run is not None and run.status is RunStatus.FAILED
    assert run.error == f"gave up after {MAX_ATTEMPTS} claims (workers stopped)"
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.FAILED, attempt.replay_detail
    assert attempt.replay_detail == run.error
    assert run.replays == ()  # was: the replay reported failed stayed queued, to be run by the next correction's turn


def test_a_replay_is_claimed_afresh_whatever_the_run_s_past_turns_were_claimed(store: Trail, saver: Any) -> None:
    """A queued replay is new work: its claims count from none, not on from the run's own past turns
    (was: a run claimed MAX_ATTEMPTS times before it succeeded gave its first replay up at once)."""
    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    store.graph.driver.execute_query(  # as if its turns had been claimed that often (workers died before)
        "MATCH (run:PlanRun {plan_id: $plan_id}) SET run.attempts = $n",
        plan_id=plan.plan_id,
        n=MAX_ATTEMPTS,
        database_=store.graph.database,
    )
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)

    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.SUCCEEDED, run.error
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.REPLAYED, attempt.replay_detail


def test_an_advance_taken_up_again_finds_its_own_advance_made_and_goes_on(store: Trail, saver: Any) -> None:
    """A turn cut off after its advance committed (Neo4j gone before the answer came back) runs the
    advance again from its last checkpoint: the plan in that phase already is that advance made, not
    a phase violation (was: the run failed "not execute -> execute"). Any other transition is refused."""
    from decisiontrail.exceptions import RuleViolation

    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    assert runtime.run_until_settled(plan.plan_id, timeout=120).status is RunStatus.SUCCEEDED  # in Apply now

    runtime._advance(plan.plan_id, Phase.APPLY, "execution complete")  # made before: nothing to do

    assert reading.get_plan(store, plan.plan_id, LOCAL).phase is Phase.APPLY
    with pytest.raises(RuleViolation, match="not apply -> execute"):
        runtime._advance(plan.plan_id, Phase.EXECUTE, "strategy complete")


def test_a_replay_cut_off_before_its_first_checkpoint_is_replayed_by_the_next_claim(store: Trail, saver: Any) -> None:
    """A worker that took a replay up (a new generation) and died before the generation's first
    checkpoint leaves the generation owing its replay: the next claim replays the correction (was:
    it ran the generation from its beginning as a plain run, and the replay stayed PENDING for ever;
    found by Neo4j killed mid-turn in the correction-crash scenario)."""
    runtime = Runtime(store, saver)
    plan, _ = instantiate_plan(runtime.trail, "Rotate the API keys", {"depth": 1}, run=RunRequest(), principal=LOCAL)
    runtime.run_until_settled(plan.plan_id, timeout=120)
    strategy = next(
        d for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL) if d.decision_type is DecisionType.STRATEGY_CHOICE
    )
    result = correct(runtime.trail, strategy.decision_id, "revert", "Rotate them monthly", principal=LOCAL)
    held = runs.claim(store, "a worker that dies", timedelta(milliseconds=1), principal=RUNTIME)
    assert held is not None
    assert runs.take_replay(store, held, "a worker that dies", result.attempt.attempt_id, principal=RUNTIME) is not None
    time.sleep(0.01)  # its claim lapses with no checkpoint of the new generation written

    run = runtime.run_until_settled(plan.plan_id, timeout=120)

    assert run.status is RunStatus.SUCCEEDED, run.error
    attempt = reading.get_attempt(store, result.attempt.attempt_id, principal=LOCAL)
    assert attempt.replay_outcome is ReplayOutcome.REPLAYED, attempt.replay_detail
    chosen = [
        d.chosen_option
        for d in reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)
        if d.decision_type is DecisionType.STRATEGY_CHOICE
    ]
    assert chosen == ["Rotate them monthly"]
