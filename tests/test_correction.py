"""Correction (ADR-007) against the real Neo4j: exactly the downstream, whole or not at all."""

from __future__ import annotations

from functools import partial
import dataclasses
import json

import threading
from datetime import timedelta
from typing import Any

import pytest

from decisiontrail.domain import Decision, DecisionType, Phase, Plan
from decisiontrail.domain.correction import (
    CorrectionMode,
    ReplayOutcome,
    correction_decision,
    phase_after_correction,
    replay_frontier,
)
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.placement import Recording
from decisiontrail.domain.plan import AutomationProfile
from decisiontrail.domain.ids import new_ulid
from decisiontrail.exceptions import Conflict, NotFound, RuleViolation, ValidationFailed
from decisiontrail.graphdb import Graph, corrections, decisions
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services.correction import correct, correct_in, history, preview, record_replay
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
import factories
from factories import at_once, decision

S = DecisionType.STRATEGY_CHOICE


def _add(store: Trail, plan: Plan, decision_type: DecisionType, parent: Decision | None, *deps: Decision) -> Decision:
    return recording_service.record(
        store,
        decision(
            plan.plan_id, decision_type, parent.decision_id if parent else None, depends_on=tuple(d.decision_id for d in deps)
        ),
        principal=LOCAL,
    )


def _current(store: Trail, plan: Plan) -> set[str]:
    return {d.decision_id for d in reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)}


def _all(store: Trail, plan: Plan) -> set[str]:
    return {d.decision_id for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)}


@pytest.fixture
def hierarchy(store: Trail) -> dict[str, Any]:
    """A plan with two strategies, a spawn, a child plan with a grandchild, and cross-plan influence."""
    plan, root = instantiate_plan(store, "parent", principal=LOCAL)
    invariant = _add(store, plan, DecisionType.INVARIANT_ENFORCED, root)
    strategy = _add(store, plan, S, root)
    other = _add(store, plan, S, root)
    resources = _add(store, plan, DecisionType.RESOURCE_SELECTION, strategy)
    spawn = _add(store, plan, DecisionType.SUBPLAN_SPAWN, strategy, invariant)
    influenced = _add(store, plan, DecisionType.RESOURCE_SELECTION, other, resources)  # depends on strategy's subtree
    bystander = _add(store, plan, DecisionType.RESOURCE_SELECTION, other)
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)  # a child plan is instantiated once its parent executes
    child, child_root = instantiate_plan(store, "child", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    child_strategy = _add(store, child, S, child_root)
    child_spawn = _add(store, child, DecisionType.SUBPLAN_SPAWN, child_strategy)
    advance_phase(store, child.plan_id, Phase.EXECUTE, principal=LOCAL)
    grandchild, grand_root = instantiate_plan(
        store, "grandchild", spawned_by_decision_id=child_spawn.decision_id, principal=LOCAL
    )
    grand_strategy = _add(store, grandchild, S, grand_root)
    return locals()


def test_a_vague_prompt_corrects_the_root_and_invalidates_the_whole_hierarchy(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    everything = _all(store, h["plan"]) | _all(store, h["child"]) | _all(store, h["grandchild"])

    result = correct(store, h["root"].decision_id, "revert", "Rate-limit only the public endpoints", "too vague", principal=LOCAL)

    assert set(result.invalidated) == everything
    assert set(result.invalidated_plans) == {h["child"].plan_id, h["grandchild"].plan_id}
    new_root = reading.get_decision(store, result.correction.decision_id, principal=LOCAL)
    assert new_root.decision_type is DecisionType.PROMPT_DEFINITION and new_root.parent_decision_id is None
    # The new root records the corrected prompt as instantiation does; the plan now shows it.
    assert json.loads(new_root.chosen_option)["description"] == "Rate-limit only the public endpoints"
    assert reading.get_plan(store, h["plan"].plan_id, principal=LOCAL).description == "Rate-limit only the public endpoints"
    assert _current(store, h["plan"]) == {new_root.decision_id}
    assert _current(store, h["child"]) == set() and reading.get_plan(store, h["child"].plan_id, principal=LOCAL).is_invalidated
    assert not reading.get_plan(store, h["plan"].plan_id, principal=LOCAL).is_invalidated


def test_a_bad_strategy_choice_invalidates_exactly_its_downstream(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    expected = {
        h["strategy"].decision_id,
        h["resources"].decision_id,
        h["spawn"].decision_id,
        h["influenced"].decision_id,  # depends on resources, in another branch
        *_all(store, h["child"]),
        *_all(store, h["grandchild"]),
    }

    result = correct(
        store, h["strategy"].decision_id, "revert", "Use per-service middleware", "gateway is shared", principal=LOCAL
    )

    assert set(result.invalidated) == expected
    assert result.invalidated[0] == h["strategy"].decision_id
    untouched = {h["root"], h["invariant"], h["other"], h["bystander"]}
    assert _current(store, h["plan"]) == {d.decision_id for d in untouched} | {result.correction.decision_id}
    for d in untouched:
        assert reading.get_decision(store, d.decision_id, principal=LOCAL).superseded_by is None
    for decision_id in expected:
        assert reading.get_decision(store, decision_id, principal=LOCAL).superseded_by == result.correction.decision_id


def test_a_parents_bad_prompt_to_a_child_corrects_only_the_child_plan(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    parent_before = _current(store, h["plan"])

    result = correct(
        store, h["child_root"].decision_id, "revert", "Quotas per API key, not per client", "wrong unit", principal=LOCAL
    )

    assert set(result.invalidated) == _all(store, h["child"]) - {result.correction.decision_id} | _all(store, h["grandchild"])
    assert result.invalidated_plans == (h["grandchild"].plan_id,)
    assert _current(store, h["plan"]) == parent_before
    assert _current(store, h["child"]) == {result.correction.decision_id}
    assert not reading.get_plan(store, h["child"].plan_id, principal=LOCAL).is_invalidated


def test_a_superseded_spawn_spawns_no_more_plans(store: Trail, graph: Graph, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    correct(store, h["spawn"].decision_id, "revert", "No child plan after all", "scope creep", principal=LOCAL)
    before = count_graph(graph)

    with pytest.raises(RuleViolation) as refused:
        instantiate_plan(store, "spawned late", spawned_by_decision_id=h["spawn"].decision_id, principal=LOCAL)

    assert refused.value.rule == "spawn_by_current_decision"
    assert count_graph(graph) == before


def test_an_invariant_that_should_not_apply_is_corrected_away(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy

    result = correct(
        store,
        h["invariant"].decision_id,
        "revert",
        "Do not enforce this invariant for this plan",
        "not applicable",
        principal=LOCAL,
    )

    # The spawn depended on the invariant, so the spawn and its child plans go with it.
    assert set(result.invalidated) == {
        h["invariant"].decision_id,
        h["spawn"].decision_id,
        *_all(store, h["child"]),
        *_all(store, h["grandchild"]),
    }
    removal = reading.get_decision(store, result.correction.decision_id, principal=LOCAL)
    assert removal.decision_type is DecisionType.USER_INTERVENTION
    assert removal.parent_decision_id == h["root"].decision_id
    assert removal.alternatives_considered == (h["invariant"].chosen_option,)


def test_a_missing_constraint_is_added_as_a_new_decision_and_invalidates_nothing(
    store: Trail, graph: Graph, hierarchy: dict[str, Any]
) -> None:
    h = hierarchy
    plan = h["plan"]  # executing: its child plan runs
    current_before = _current(store, plan)

    # invariant_enforced is a Strategize decision: the plan reverts to add it.
    advance_phase(store, plan.plan_id, Phase.STRATEGIZE, "a missing constraint must be added", principal=LOCAL)
    added = _add(store, plan, DecisionType.INVARIANT_ENFORCED, h["root"])

    # Adding a constraint supersedes nothing: decisions made without it stay current until a
    # correction (of the ones that violate it) says otherwise.
    assert _current(store, plan) == current_before | {added.decision_id}
    assert all(d.superseded_by is None for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL))


def test_sequential_children_become_parallel(store: Trail) -> None:
    plan, root = instantiate_plan(store, "two parts", principal=LOCAL)
    strategy = _add(store, plan, S, root)
    first = _add(store, plan, DecisionType.SUBPLAN_SPAWN, strategy)
    second = _add(store, plan, DecisionType.SUBPLAN_SPAWN, strategy, first)  # runs after the first
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    child_a, _ = instantiate_plan(store, "part a", spawned_by_decision_id=first.decision_id, principal=LOCAL)
    child_b, _ = instantiate_plan(store, "part b", spawned_by_decision_id=second.decision_id, principal=LOCAL)

    result = correct(store, first.decision_id, "revert", "Spawn both parts in parallel", "they are independent", principal=LOCAL)
    parallel = _add(
        store,
        plan,
        DecisionType.SUBPLAN_PARALLEL_SPAWN,
        reading.get_decision(store, result.correction.decision_id, principal=LOCAL),
    )
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase is Phase.STRATEGIZE  # the revert re-runs Strategize
    # The correction is placed in the phase it moves the plan to, and the move is recorded once.
    assert reading.get_decision(store, result.correction.decision_id, principal=LOCAL).phase is Phase.STRATEGIZE
    moves = [(c["from_phase"], c["to_phase"], c["reason"]) for c in reading.phase_changes(store, plan.plan_id, principal=LOCAL)]
    assert moves[-1] == ("execute", "strategize", f"correction of {first.decision_id} (revert)")
    assert len(moves) == 2  # Strategize -> Execute, then the correction's
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    new_a, _ = instantiate_plan(store, "part a", spawned_by_decision_id=parallel.decision_id, principal=LOCAL)
    new_b, _ = instantiate_plan(store, "part b", spawned_by_decision_id=parallel.decision_id, principal=LOCAL)

    assert {first.decision_id, second.decision_id} <= set(result.invalidated)
    assert set(result.invalidated_plans) == {child_a.plan_id, child_b.plan_id}
    assert reading.get_decision(store, parallel.decision_id, principal=LOCAL).downstream_plan_ids == tuple(
        sorted([new_a.plan_id, new_b.plan_id])
    )


# -- whole or not at all, and errors --------------------------------------------------------


def test_corrections_never_change_what_a_decision_said(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    before = {d.decision_id: d for d in reading.list_decisions(store, h["plan"].plan_id, principal=LOCAL)}

    correct(store, h["strategy"].decision_id, "append", "fix", "r", principal=LOCAL)

    for d in reading.list_decisions(store, h["plan"].plan_id, principal=LOCAL):
        if d.decision_id in before:
            unchanged = before[d.decision_id].model_dump(exclude={"superseded_by", "superseded_at", "downstream_decision_ids"})
            assert d.model_dump(exclude={"superseded_by", "superseded_at", "downstream_decision_ids"}) == unchanged


@pytest.mark.parametrize(
    ("decision_id", "mode", "guidance", "error", "named"),
    [
        ("unknown", "revert", "g", NotFound, "decision"),
        ("strategy", "sideways", "g", ValidationFailed, "mode"),
        ("strategy", "revert", "  ", ValidationFailed, "guidance"),
    ],
)
def test_bad_requests_are_refused_and_nothing_is_written(
    store: Trail,
    graph: Graph,
    hierarchy: dict[str, Any],
    decision_id: str,
    mode: str,
    guidance: str,
    error: type[Exception],
    named: str,
) -> None:
    target = new_ulid() if decision_id == "unknown" else hierarchy[decision_id].decision_id
    before = count_graph(graph)

    with pytest.raises(error) as raised:
        correct(store, target, mode, guidance, "r", principal=LOCAL)

    assert named in (getattr(raised.value, "field", None) or str(raised.value))
    assert count_graph(graph) == before


def test_correcting_a_superseded_decision_names_what_superseded_it(store: Trail, hierarchy: dict[str, Any], graph: Graph) -> None:
    h = hierarchy
    first = correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)
    before = count_graph(graph)

    for superseded in (h["strategy"], h["resources"]):
        with pytest.raises(Conflict, match=f"already superseded by {first.correction.decision_id}"):
            correct(store, superseded.decision_id, "revert", "again", "r", principal=LOCAL)
        with pytest.raises(Conflict, match=first.correction.decision_id):
            preview(store, superseded.decision_id, principal=LOCAL)
    assert count_graph(graph) == before


def test_a_superseded_decision_gives_up_its_idempotency_key_and_one_without_a_key_gets_none(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "keys", principal=LOCAL)
    keyed = recording_service.record(
        store, decision(plan.plan_id, S, root.decision_id), idempotency_key="step-1", principal=LOCAL
    )
    unkeyed = _add(store, plan, DecisionType.RESOURCE_SELECTION, keyed)

    def keys(d: Decision) -> tuple[Any, Any]:
        row = graph.driver.execute_query(
            "MATCH (d:Decision {decision_id: $id}) RETURN d.idempotency_key AS key, d.retired_idempotency_key AS retired",
            id=d.decision_id,
            database_=graph.database,
        ).records[0]
        return row["key"], row["retired"]

    assert keys(keyed) == ("step-1", None) and keys(unkeyed) == (None, None)
    correct(store, keyed.decision_id, "revert", "another store", "r", principal=LOCAL)

    assert keys(keyed) == (None, "step-1")
    assert keys(unkeyed) == (None, None)
    # The key is free again: the replay's recording under it is a new decision.
    again = recording_service.record(
        store, decision(plan.plan_id, S, root.decision_id), idempotency_key="step-1", principal=LOCAL
    )
    assert again.decision_id not in (keyed.decision_id, unkeyed.decision_id)


def test_two_concurrent_corrections_of_one_decision_one_wins(store: Trail, graph: Graph, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    outcomes = at_once(
        *(partial(correct, store, h["strategy"].decision_id, "revert", g, "r", principal=LOCAL) for g in ("first", "second"))
    )

    winners = [o for o in outcomes if not isinstance(o, Exception)]
    losers = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(winners) == 1 and len(losers) == 1
    assert winners[0].correction.decision_id in str(losers[0])
    corrections = [d for d in reading.list_decisions(store, h["plan"].plan_id, principal=LOCAL) if d.is_correction]
    assert [d.decision_id for d in corrections] == [winners[0].correction.decision_id]
    assert len(history(store, h["strategy"].decision_id, principal=LOCAL)) == 1


# -- preview, history, time travel ---------------------------------------------------------


def test_preview_equals_what_the_correction_then_does_and_writes_nothing(
    store: Trail, graph: Graph, hierarchy: dict[str, Any]
) -> None:
    h = hierarchy
    before = count_graph(graph)

    impact = preview(store, h["strategy"].decision_id, principal=LOCAL)

    assert count_graph(graph) == before
    result = correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)
    assert set(impact.decision_ids) == set(result.invalidated)
    assert impact.plan_ids == result.invalidated_plans
    assert impact.counts_by_type == result.attempt.counts_by_type
    assert impact.counts_by_type == {"resource_selection": 2, "strategy_choice": 3, "subplan_spawn": 2, "prompt_definition": 2}


@pytest.mark.parametrize("mode", ["revert", "append"])
def test_the_frontier_and_counts_from_the_summarised_downstream_equal_those_of_every_decision(
    store: Trail, hierarchy: dict[str, Any], mode: str
) -> None:
    # The correction reads its downstream summarised (ids plan by plan, counts by type, each actor
    # run's earliest decision with a checkpoint), not a record per decision. What it answers must
    # equal what the rules make of every decision, which the preview still reads: here with
    # three actor runs in one plan and decisions without a checkpoint, before and after them.
    h = hierarchy
    plan, parent = h["plan"], h["resources"]
    for i, (thread, checkpoint) in enumerate([("b", True), (None, False), ("a", True), ("b", True), ("c", True), ("a", True)]):
        context = factories.actor_snapshot(thread) if checkpoint else factories.snapshot(f"plain {i}", checkpoint=False)
        parent = recording_service.record(
            store,
            decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, parent.decision_id, context_snapshot=context),
            principal=LOCAL,
        )
    impact = preview(store, h["strategy"].decision_id, principal=LOCAL)
    origin, *invalidated = impact.decisions

    result = correct(store, h["strategy"].decision_id, mode, "g", "r", principal=LOCAL)

    assert result.attempt.replay_frontier == replay_frontier(CorrectionMode(mode), origin, invalidated)
    assert len(result.attempt.replay_frontier) == 6  # thread-1 in each of the three plans, and a, b, c
    assert result.attempt.counts_by_type == impact.counts_by_type
    assert result.invalidated == (origin.decision_id, *(d.decision_id for d in invalidated))


def test_every_correction_is_kept_as_an_attempt_on_its_chain(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    first = correct(store, h["other"].decision_id, "revert", "try b", "a was wrong", requested_by="alice", principal=LOCAL)
    second = correct(
        store, first.correction.decision_id, "append", "try c", "b was wrong too", requested_by="bob", principal=LOCAL
    )
    record_replay(store, second.attempt.attempt_id, ReplayOutcome.REPLAYED, "actor re-ran 2 steps", principal=LOCAL)

    attempts = history(store, second.correction.decision_id, principal=LOCAL)

    assert [a.attempt_number for a in attempts] == [1, 2]
    assert {a.original_decision_id for a in attempts} == {h["other"].decision_id}
    assert [(a.mode, a.guidance, a.reason, a.requested_by) for a in attempts] == [
        (CorrectionMode.REVERT, "try b", "a was wrong", "alice"),
        (CorrectionMode.APPEND, "try c", "b was wrong too", "bob"),
    ]
    assert set(attempts[0].invalidated_decision_ids) == {
        h["other"].decision_id,
        h["influenced"].decision_id,
        h["bystander"].decision_id,
    }
    assert attempts[1].invalidated_decision_ids == (first.correction.decision_id,)
    assert (attempts[0].replay_outcome, attempts[1].replay_outcome) == (ReplayOutcome.PENDING, ReplayOutcome.REPLAYED)
    assert attempts[1].replay_detail == "actor re-ran 2 steps"
    assert history(store, h["other"].decision_id, principal=LOCAL) == attempts


def test_the_attempt_as_stored_lists_what_the_correction_returned_in_its_order(store: Trail, hierarchy: dict[str, Any]) -> None:
    # The supersession finds the downstream by walking it in Neo4j (the ids are not sent back),
    # and keeps them on the attempt in the order the correction returns them: the corrected
    # decision first, then by plan and sequence number; across plans here.
    h = hierarchy

    result = correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)

    stored = history(store, h["strategy"].decision_id, principal=LOCAL)[0]
    assert stored.invalidated_decision_ids == result.invalidated == result.attempt.invalidated_decision_ids
    assert len({reading.get_decision(store, i, principal=LOCAL).plan_id for i in result.invalidated}) == 3
    assert stored == result.attempt


def test_a_supersession_that_finds_another_downstream_than_the_one_judged_is_refused_whole(
    store: Trail, graph: Graph, hierarchy: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reads judged one downstream; the supersession walks it again. Were they ever to differ
    # (here: the reads made to miss a decision), the correction is refused and nothing is written.

    begin = corrections.begin

    def missing_one(*args: Any, **kwargs: Any) -> Any:
        facts = begin(*args, **kwargs)
        assert facts is not None
        (plan_id, ids), *runs = facts.downstream.runs
        return dataclasses.replace(facts, downstream=dataclasses.replace(facts.downstream, runs=((plan_id, ids[1:]), *runs)))

    monkeypatch.setattr(corrections, "begin", missing_one)
    before = count_graph(graph)

    with pytest.raises(Conflict, match="changed while it was corrected"):
        correct(store, hierarchy["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)

    assert count_graph(graph) == before
    assert reading.get_decision(store, hierarchy["strategy"].decision_id, principal=LOCAL).superseded_by is None


def test_as_of_reads_show_the_tree_before_and_after_a_correction(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy
    plan_id = h["plan"].plan_id
    before = _current(store, h["plan"])

    result = correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)
    at = result.attempt.at

    as_of_before = {
        d.decision_id for d in reading.list_decisions(store, plan_id, as_of=at - timedelta(microseconds=1), principal=LOCAL)
    }
    as_of_after = {d.decision_id for d in reading.list_decisions(store, plan_id, as_of=at, principal=LOCAL)}
    assert as_of_before == before
    assert as_of_after == _current(store, h["plan"])
    assert as_of_after == before - set(result.invalidated) | {result.correction.decision_id}
    assert len(reading.get_tree(store, plan_id, as_of=at - timedelta(microseconds=1), principal=LOCAL)) == len(before)


def test_append_places_the_fix_at_the_end_of_the_corrected_branch(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy

    result = correct(store, h["resources"].decision_id, "append", "g", "r", principal=LOCAL)

    # Under the strategy resources hung under, not after bystander, the plan's latest decision
    # outside what the correction invalidated, on another branch (tests/test_correction_placement.py).
    assert result.correction.parent_decision_id == h["strategy"].decision_id
    assert result.correction.phase is Phase.EXECUTE
    assert all(p.checkpoint is None for p in result.replay_frontier)


def test_revert_frontier_starts_at_the_originals_checkpoint(store: Trail, hierarchy: dict[str, Any]) -> None:
    h = hierarchy

    result = correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL)

    first = result.replay_frontier[0]
    assert first.first_invalidated_decision_id == h["strategy"].decision_id
    assert first.checkpoint == h["strategy"].context_snapshot.actor_state_ref
    assert {p.plan_id for p in result.replay_frontier} == {h["plan"].plan_id, h["child"].plan_id, h["grandchild"].plan_id}


def test_what_is_recorded_into_the_downstream_while_its_plans_are_locked_is_superseded_too(
    store: Trail, graph: Graph, hierarchy: dict[str, Any]
) -> None:
    """A writer that holds a touched plan's lock while it makes a decision of an untouched plan
    depend on the downstream: the correction, blocked on that lock, reads the downstream again
    once it has it, reaches the new dependent, locks its plan in another round, and supersedes it."""
    h = hierarchy
    other, other_root = instantiate_plan(store, "another plan", principal=LOCAL)
    dependent = _add(store, other, S, other_root)

    def writes(plan_id: str) -> int:
        found, _, _ = graph.driver.execute_query(
            "MATCH (lock:PlanLock {plan_id: $id}) RETURN lock.writes AS writes", id=plan_id, database_=graph.database
        )
        return int(found[0]["writes"]) if found else 0

    before = writes(other.plan_id)
    outcome: list[Any] = []
    with graph.driver.session(database=graph.database) as session:
        writer = session.begin_transaction()
        for plan_id in sorted([h["child"].plan_id, other.plan_id]):
            writer.run("MERGE (l:PlanLock {plan_id: $id}) SET l.writes = coalesce(l.writes, 0) + 1", id=plan_id).consume()
        writer.run(
            "MATCH (d:Decision {decision_id: $d}), (x:Decision {decision_id: $x}) CREATE (d)-[:DEPENDS_ON {ordinal: 0}]->(x)",
            d=dependent.decision_id,
            x=h["resources"].decision_id,
        ).consume()

        def run() -> None:
            try:
                outcome.append(correct(store, h["strategy"].decision_id, "revert", "g", "r", principal=LOCAL))
            except Exception as e:  # reported below
                outcome.append(e)

        correcting = threading.Thread(target=run)
        correcting.start()
        # Wait until the correction waits for the child plan's lock, which the writer holds.
        for _ in range(200):
            blocked, _, _ = graph.driver.execute_query(
                "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n",
                database_=graph.database,
            )
            if blocked[0]["n"]:
                break
            correcting.join(0.05)
        else:
            pytest.fail("the correction never waited for the locked plan")
        writer.commit()
        correcting.join(30)

    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    result = outcome[0]
    assert dependent.decision_id in result.invalidated
    assert reading.get_decision(store, dependent.decision_id, principal=LOCAL).superseded_by == result.correction.decision_id
    assert writes(other.plan_id) == before + 2  # the writer's lock, then the correction's second round


def _while_correcting(graph: Graph, decision_id: str, write: Any) -> tuple[list[Any], bool]:
    """Correct ``decision_id`` in a transaction left open while ``write`` runs in another thread;
    commit once ``write`` waits on a lock (or has finished). What ``write`` returned or raised,
    and whether it waited."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(write())
        except Exception as e:  # reported to the caller
            outcome.append(e)

    with graph.driver.session(database=graph.database) as session:
        correcting = session.begin_transaction()
        correct_in(correcting, decision_id, CorrectionMode.REVERT, "g", "r", "user", LOCAL)
        writer = threading.Thread(target=run)
        writer.start()
        waited = False
        for _ in range(200):
            blocked, _, _ = graph.driver.execute_query(
                "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n",
                database_=graph.database,
            )
            waited = bool(blocked[0]["n"])
            if waited or not writer.is_alive():
                break
            writer.join(0.05)
        correcting.commit()
        writer.join(30)
    return outcome, waited


def test_a_recording_that_depends_on_the_downstream_being_corrected_waits_and_is_refused(
    store: Trail, graph: Graph, hierarchy: dict[str, Any]
) -> None:
    """A recording into a plan the correction does not touch, depending on a decision it is
    superseding: the recording waits for the correction (it locks its dependencies' plans), then
    finds the dependency superseded. Without the wait it read the dependency as current, and its
    decision escaped the supersession: current, under a superseded one."""
    h = hierarchy
    other, other_root = instantiate_plan(store, "another plan", principal=LOCAL)
    before = _all(store, other)

    outcome, waited = _while_correcting(
        graph, h["strategy"].decision_id, lambda: _add(store, other, S, other_root, h["resources"])
    )

    assert len(outcome) == 1 and isinstance(outcome[0], RuleViolation), outcome
    assert outcome[0].rule == "dependency_is_current" and h["resources"].decision_id in outcome[0].message
    assert waited
    assert _all(store, other) == before


def test_a_dependency_added_on_the_downstream_being_corrected_waits_and_is_refused(
    store: Trail, graph: Graph, hierarchy: dict[str, Any]
) -> None:
    """The same for an influence added later (addDependency) from a decision of an untouched plan."""
    h = hierarchy
    other, other_root = instantiate_plan(store, "another plan", principal=LOCAL)
    dependent = _add(store, other, S, other_root)

    outcome, waited = _while_correcting(
        graph,
        h["strategy"].decision_id,
        lambda: recording_service.add_dependency(store, dependent.decision_id, h["resources"].decision_id, principal=LOCAL),
    )

    assert len(outcome) == 1 and isinstance(outcome[0], RuleViolation), outcome
    assert outcome[0].rule == "dependency_is_current" and h["resources"].decision_id in outcome[0].message
    assert waited
    assert reading.get_decision(store, dependent.decision_id, principal=LOCAL).depends_on == ()


@pytest.mark.parametrize(
    ("target", "mode"), [("strategy", "revert"), ("strategy", "append"), ("resources", "append"), ("root", "revert")]
)
def test_the_correction_decision_is_judged_by_the_facts_read_placements_reads_for_it(
    store: Trail, graph: Graph, target: str, mode: str
) -> None:
    # The correction's reads take what placing its decision is judged by (where read_placements
    # cost a round trip of its own): under the same locks, they must be what read_placements reads.
    plan, root = instantiate_plan(
        store, "gated", automation_profile=AutomationProfile(edit_code=0.5, execute_command=0.25), principal=LOCAL
    )
    strategy = _add(store, plan, S, root)
    resources = _add(store, plan, DecisionType.RESOURCE_SELECTION, strategy)
    _add(store, plan, S, root)  # the plan's latest decision, on another branch
    original = {"root": root, "strategy": strategy, "resources": resources}[target]
    parsed = CorrectionMode(mode)
    with graph.driver.session(database=graph.database) as session, session.begin_transaction() as tx:
        correction_id = new_ulid()
        facts = corrections.begin(tx, original.decision_id, correction_id)
        assert facts is not None
        draft, context = correction_decision(facts.decision, "g", "r", at=utc_now(), decision_id=correction_id)
        recording = Recording(draft, context=context)
        phase = phase_after_correction(parsed, facts.decision, Phase(facts.plan_phase), root_id=root.decision_id)

        judged_by = facts.placement_of(recording, phase)
        read = decisions.read_placements(tx, [recording])[0]
        tx.rollback()

    assert judged_by == {**read, "plan_phase": phase.value}
    assert (judged_by["automation_edit_code"], judged_by["current_root_id"]) == (0.5, root.decision_id)
    if target != "root":
        assert draft.parent_decision_id == original.parent_decision_id
        assert judged_by["parent_exists"] and judged_by["parent_plan_id"] == plan.plan_id


def test_the_correction_reads_give_no_placement_facts_for_another_decision(store: Trail, graph: Graph) -> None:
    plan, root = instantiate_plan(store, "p", principal=LOCAL)
    strategy = _add(store, plan, S, root)
    other = _add(store, plan, S, root)
    with graph.driver.session(database=graph.database) as session, session.begin_transaction() as tx:
        correction_id = new_ulid()
        facts = corrections.begin(tx, strategy.decision_id, correction_id)
        assert facts is not None
        draft, context = correction_decision(facts.decision, "g", "r", at=utc_now(), decision_id=correction_id)
        tx.rollback()
    for unread in (
        draft.model_copy(update={"decision_id": new_ulid()}),
        draft.model_copy(update={"parent_decision_id": other.decision_id}),
        draft.model_copy(update={"depends_on": (other.decision_id,)}),
        draft.model_copy(update={"corrects_decision_id": other.decision_id}),
    ):
        with pytest.raises(ValueError, match="no placement facts"):
            facts.placement_of(Recording(unread, context=context), Phase.STRATEGIZE)
    assert facts.placement_of(Recording(draft, context=context), Phase.STRATEGIZE)["parent_exists"]
