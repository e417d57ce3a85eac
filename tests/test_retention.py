"""Retention against the real Neo4j: a prune removes old superseded history of applied plans, and only that."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from decisiontrail.access import LOCAL
from decisiontrail.checks import VALIDATION_RULES, run_checks
from decisiontrail.domain import AutomationProfile, Decision, DecisionType, Phase, Plan
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.recording import CapturedContext, Review, ReviewAction
from decisiontrail.domain.retention import PruneResult, RetentionPolicy
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services.retention import prune
from decisiontrail.services.correction import correct, history
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services.recording import record_decision
from decisiontrail.services.reviews import resolve_review
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from factories import actor_snapshot, decision, to_execute, tool_input

POLICY = RetentionPolicy(older_than=timedelta(days=30))


def _later(days: int) -> datetime:
    """A moment ``days`` from now: history made today is that old then."""
    return utc_now() + timedelta(days=days)


def _labels(graph: Graph) -> Counter[str]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE NOT n:SchemaMigration RETURN labels(n)[0] AS label, count(*) AS nodes",
        database_=graph.database,
        routing_="r",
    )
    return Counter({r["label"]: r["nodes"] for r in records})


def _record(store: Trail, plan: Plan, decision_type: str, parent: Decision, **fields: Any) -> Decision | Review:
    """An actor's decision with its own captured context."""
    text = f"context of a {decision_type} {new_ulid()}"
    return record_decision(
        store,
        tool_input(decision_type, parent_decision_id=parent.decision_id, **fields),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(text=text),
        context=CapturedContext(text),
        principal=LOCAL,
    )


def _add(store: Trail, plan: Plan, decision_type: str, parent: Decision) -> Decision:
    outcome = _record(store, plan, decision_type, parent)
    assert isinstance(outcome, Decision)
    return outcome


def _finished_work(store: Trail, *, applied: bool = True) -> dict[str, Any]:
    """A plan corrected twice (a Strategize choice, then an Execute one) and then applied.

    The first correction supersedes a spawn and invalidates its child plan, which had a review
    and a phase change; a second top-level plan was instantiated with the child's prompt, so
    the two roots share one context.
    """
    plan, root = instantiate_plan(store, "rate-limit the API", principal=LOCAL)
    strategy = _add(store, plan, "strategy_choice", root)
    other = _add(store, plan, "strategy_choice", root)
    spawn = _add(store, plan, "subplan_spawn", strategy)
    to_execute(store, plan.plan_id)
    child, child_root = instantiate_plan(
        store,
        "per-service limits",
        spawned_by_decision_id=spawn.decision_id,
        automation_profile=AutomationProfile(edit_code=0.9),
        principal=LOCAL,
    )
    review = _record(store, child, "strategy_choice", child_root, confidence_score=0.5)
    assert isinstance(review, Review)
    _, child_strategy = resolve_review(store, review.review_id, ReviewAction.APPROVE, principal=LOCAL)
    to_execute(store, child.plan_id)
    twin, twin_root = instantiate_plan(store, "per-service limits", principal=LOCAL)
    first = correct(store, strategy.decision_id, "revert", "Use one gateway", "the services share it", principal=LOCAL)

    to_execute(store, plan.plan_id)
    implementation = _add(store, plan, "implementation_choice", other)
    tool = _add(store, plan, "tool_invocation", implementation)
    second = correct(store, implementation.decision_id, "revert", "Use the gateway's own limiter", "less code", principal=LOCAL)
    if applied:
        advance_phase(store, plan.plan_id, Phase.APPLY, principal=LOCAL)
    return locals()


def _superseded_and_gone(work: dict[str, Any]) -> set[str]:
    return {work[name].decision_id for name in ("spawn", "child_root", "child_strategy", "tool")}


# -- what goes and what stays ---------------------------------------------------------------


def test_the_dry_run_lists_exactly_what_the_prune_then_deletes(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    now = _later(40)
    before = _labels(graph)

    dry = prune(Trail.on(graph), POLICY, dry_run=True, now=now, principal=LOCAL)

    assert _labels(graph) == before
    assert dry.dry_run and set(dry.decision_ids) == _superseded_and_gone(work)
    assert dry.plan_ids == (work["child"].plan_id,)

    messages: list[str] = []
    done = prune(Trail.on(graph), POLICY, dry_run=False, now=now, progress=messages.append, batch_size=3, principal=LOCAL)

    assert not done.dry_run
    assert done.model_dump(exclude={"dry_run"}) == dry.model_dump(exclude={"dry_run"})
    assert messages[-3:] == ["deleted 3/4 decision(s)", "deleted 4/4 decision(s)", "deleted 1/1 plan(s)"]
    assert prune(Trail.on(graph), POLICY, dry_run=False, now=now, principal=LOCAL).empty


def test_superseded_history_of_an_applied_plan_goes_and_the_current_tree_stays(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    plan_id = work["plan"].plan_id
    current = reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)
    before = _labels(graph)

    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    assert reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL) == current
    for decision_id in _superseded_and_gone(work):
        with pytest.raises(NotFound):
            reading.get_decision(store, decision_id, principal=LOCAL)
    # The originals the corrections CORRECTS stay, so correction history can still find them.
    for original, corrected in (("strategy", "first"), ("implementation", "second")):
        assert (
            reading.get_decision(store, work[original].decision_id, principal=LOCAL).superseded_by
            == work[corrected].correction.decision_id
        )
    # Only the checkpoint group of the pruned tool invocation goes; the kept original's stays.
    assert reading.checkpoint_group(store, work["implementation"].decision_id, principal=LOCAL) is not None
    # The spawn's, the tool's and the review's contexts go; the child root's is the twin's too.
    assert (result.contexts, result.checkpoint_groups, result.reviews, result.phase_changes) == (3, 1, 1, 1)
    # With the child plan go the audit entries about it alone: its review recorded and resolved, its move to Execute.
    assert before - _labels(graph) == Counter(
        {"Decision": 4, "Plan": 1, "PlanLock": 1, "Context": 3, "CheckpointGroup": 1, "Review": 1, "PhaseChange": 1}
        | {"AuditEntry": 3}
    )


def test_an_invalidated_child_plan_under_an_applied_parent_goes_whole(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    child = work["child"]

    prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    with pytest.raises(NotFound):
        reading.get_plan(store, child.plan_id, principal=LOCAL)
    assert reading.list_reviews(store, child.plan_id, principal=LOCAL) == []
    assert reading.phase_changes(store, child.plan_id, principal=LOCAL) == []
    with pytest.raises(NotFound):
        reading.read_context(store, work["review"].proposal.context_snapshot.hot_context_hash, principal=LOCAL)
    # A context another plan's root still captured stays.
    shared = work["twin_root"].context_snapshot.hot_context_hash
    assert shared == work["child_root"].context_snapshot.hot_context_hash
    assert "per-service limits" in reading.read_context(store, shared, principal=LOCAL)


def test_correction_attempts_and_their_history_survive(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)
    corrections = [work["first"].correction.decision_id, work["second"].correction.decision_id]
    before = [history(store, decision_id, principal=LOCAL) for decision_id in corrections]
    attempts = _labels(graph)["CorrectionAttempt"]

    prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    assert [history(store, decision_id, principal=LOCAL) for decision_id in corrections] == before
    assert before[0][0].invalidated_decision_ids == work["first"].attempt.invalidated_decision_ids
    assert set(before[0][0].invalidated_decision_ids) >= {work["spawn"].decision_id, work["child_root"].decision_id}
    assert _labels(graph)["CorrectionAttempt"] == attempts == 2


def test_the_validation_checks_still_pass_after_a_prune(store: Trail, graph: Graph) -> None:
    _finished_work(store)
    assert run_checks(load_graph(graph, LoadScope.ALL, progress=False), rules=VALIDATION_RULES).violations == ()

    prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    assert run_checks(load_graph(graph, LoadScope.ALL, progress=False), rules=VALIDATION_RULES).violations == ()


# -- what a policy keeps --------------------------------------------------------------------


def test_history_newer_than_the_cutoff_is_kept(store: Trail, graph: Graph) -> None:
    _finished_work(store)
    before = _labels(graph)

    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(20), principal=LOCAL)

    assert result.empty and result.render().startswith("nothing to prune")
    assert _labels(graph) == before


def test_a_plan_not_yet_applied_keeps_its_history(store: Trail, graph: Graph) -> None:
    _finished_work(store, applied=False)
    before = _labels(graph)

    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(400), principal=LOCAL)

    assert result.empty
    assert _labels(graph) == before


def test_an_invalidated_plan_waits_for_its_live_ancestor_not_its_own_phase(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "parent", principal=LOCAL)
    strategy = _add(store, plan, "strategy_choice", root)
    spawn = _add(store, plan, "subplan_spawn", strategy)
    to_execute(store, plan.plan_id)
    child, _ = instantiate_plan(store, "child", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    to_execute(store, child.plan_id)
    advance_phase(store, child.plan_id, Phase.APPLY, principal=LOCAL)
    correct(store, spawn.decision_id, "revert", "No child plan", "r", principal=LOCAL)

    # The child was applied when it was invalidated, but its parent is still being worked on.
    assert prune(Trail.on(graph), POLICY, dry_run=True, now=_later(40), principal=LOCAL).empty

    to_execute(store, plan.plan_id)
    advance_phase(store, plan.plan_id, Phase.APPLY, principal=LOCAL)
    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)
    assert result.plan_ids == (child.plan_id,) and len(result.decision_ids) == 2  # the child's root and strategy


def test_a_zero_age_prunes_everything_eligible_now(store: Trail, graph: Graph) -> None:
    work = _finished_work(store)

    result = prune(Trail.on(graph), RetentionPolicy(older_than=timedelta(0)), dry_run=True, principal=LOCAL)

    assert set(result.decision_ids) == _superseded_and_gone(work)


def test_old_history_something_kept_still_refers_to_stays(store: Trail, graph: Graph) -> None:
    """A dependency in a plan not yet applied holds what it points at: pruning it would change
    what the dependent says."""
    plan, root = instantiate_plan(store, "applied", principal=LOCAL)
    strategy = _add(store, plan, "strategy_choice", root)
    used = _add(store, plan, "resource_selection", strategy)
    elsewhere, other_root = instantiate_plan(store, "still strategizing", principal=LOCAL)
    dependent = recording_service.record(
        store,
        decision(elsewhere.plan_id, DecisionType.STRATEGY_CHOICE, other_root.decision_id, depends_on=(used.decision_id,)),
        principal=LOCAL,
    )
    correct(store, strategy.decision_id, "revert", "Another strategy", "r", principal=LOCAL)
    to_execute(store, plan.plan_id)
    advance_phase(store, plan.plan_id, Phase.APPLY, principal=LOCAL)

    result = prune(Trail.on(graph), POLICY, dry_run=False, now=_later(40), principal=LOCAL)

    assert result.empty
    assert reading.get_decision(store, dependent.decision_id, principal=LOCAL).depends_on == (used.decision_id,)

    # Once the other plan is applied too, its superseded dependent goes, and what it held with it.
    to_execute(store, elsewhere.plan_id)
    advance_phase(store, elsewhere.plan_id, Phase.APPLY, principal=LOCAL)
    assert set(prune(Trail.on(graph), POLICY, dry_run=True, now=_later(40), principal=LOCAL).decision_ids) == {
        used.decision_id,
        dependent.decision_id,
    }


# -- the policy and the report --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("30d", timedelta(days=30)),
        ("2w", timedelta(weeks=2)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        ("7", timedelta(days=7)),
        ("0", timedelta(0)),
    ],
)
def test_an_age_is_written_as_people_write_it(text: str, age: timedelta) -> None:
    assert RetentionPolicy.parse(text).older_than == age


@pytest.mark.parametrize("text", ["", "thirty days", "-3d", "1.5d", "3y"])
def test_an_unreadable_age_is_refused_by_name(text: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        RetentionPolicy.parse(text)
    assert raised.value.field == "older_than"


def test_a_negative_age_is_refused_by_name() -> None:
    with pytest.raises(ValidationFailed, match="cannot be negative") as raised:
        RetentionPolicy(older_than=timedelta(days=-1))
    assert raised.value.field == "older_than"


def test_the_cutoff_is_the_age_before_now_and_needs_a_time_zone() -> None:
    assert POLICY.cutoff(datetime(2026, 5, 31, 12, tzinfo=UTC)) == datetime(2026, 5, 1, 12, tzinfo=UTC)
    with pytest.raises(ValidationFailed, match="time zone"):
        POLICY.cutoff(datetime(2026, 5, 31))


def test_a_result_lists_ids_sorted_and_says_whether_it_was_a_dry_run() -> None:
    cutoff = datetime(2026, 5, 1, tzinfo=UTC)
    done = PruneResult(cutoff=cutoff, dry_run=False, decision_ids=("B", "A"), plan_ids=("P",), reviews=1)

    assert done.decision_ids == ("A", "B")
    assert done.render().splitlines() == [
        "pruned 2 decision(s) and 1 plan(s) superseded or invalidated before 2026-05-01T00:00:00+00:00",
        "  with them 0 context(s), 0 checkpoint group(s), 1 review(s), 0 phase change(s)",
        "decision A",
        "decision B",
        "plan P",
    ]
