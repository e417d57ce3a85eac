"""reliability.history: a load's history held against the final graph, each invariant on a history broken on purpose."""

from __future__ import annotations

import dataclasses
from typing import Any

from decisiontrail.access import LOCAL
from decisiontrail.domain import Decision, DecisionType, Phase, Plan
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from factories import decision
from reliability.history import (
    Dependency,
    Snapshot,
    StoredAttempt,
    StoredDecision,
    StoredPlan,
    StoredReview,
    Verdict,
    check_history,
    downstream_at,
    read_snapshot,
)

# A plan P: root R, strategy S under it, X under S, Y under R depending on X, a spawn SP under S
# whose child plan C holds CR and CS. At 10.0 correction K (attempt A) of S supersedes S, X, Y,
# SP, CR and CS, invalidates C and cancels review V1 (pending under X); Z is recorded under K at 11.0.
T = 10.0


def _decision(decision_id: str, plan_id: str, n: int, created: float, parent: str | None = None, **fields: Any) -> StoredDecision:
    return StoredDecision(decision_id, (plan_id,), n, created, parent_id=parent, key=f"key-{decision_id}", **fields)


def _gone(decision_id: str, plan_id: str, n: int, created: float, parent: str | None = None) -> StoredDecision:
    return _decision(decision_id, plan_id, n, created, parent, superseded_at=T, superseded_by="K")


def valid() -> tuple[list[dict[str, Any]], Snapshot]:
    """A history and the graph it should leave: every invariant holds."""
    decisions = [
        _decision("R", "P", 0, 1.0),
        _gone("S", "P", 1, 2.0, "R"),
        _gone("X", "P", 2, 3.0, "S"),
        _gone("Y", "P", 3, 4.0, "R"),
        _gone("SP", "P", 4, 4.5, "S"),
        _gone("CR", "C", 0, 5.0),
        _gone("CS", "C", 1, 5.5, "CR"),
        _decision("K", "P", 5, T, "R"),
        _decision("Z", "P", 6, 11.0, "K"),
    ]
    plans = [StoredPlan("P", 1.0), StoredPlan("C", 5.0, invalidated_at=T, spawned_by="SP", invalidated_by="A")]
    superseded = ("S", "X", "Y", "SP", "CR", "CS")
    attempts = [StoredAttempt("A", T, "S", "K", superseded, ("C",))]
    reviews = [
        StoredReview("V1", "P", "cancelled", 6.0, parent_id="X", resolved_at=T, cancelled_by="K"),
        StoredReview("V2", "P", "pending", 12.0, parent_id="Z"),
    ]
    snapshot = Snapshot(decisions, [Dependency("Y", "X")], plans, attempts, reviews)

    def ack(d: StoredDecision, op: str = "record", **extra: Any) -> dict[str, Any]:
        return {
            "type": "ack",
            "op": op,
            "decision_id": d.decision_id,
            "plan_id": d.plan_ids[0],
            "sequence_number": d.sequence_number,
            "idempotency_key": d.key,
            "invoked": d.created_at - 0.1,
            "completed": d.created_at + 0.1,
            **extra,
        }

    by_id = {d.decision_id: d for d in decisions}
    history = [ack(d) for d in decisions if d.decision_id != "K"]
    history.append(
        ack(by_id["K"], "correct", corrected="S", invalidated=list(superseded), invalidated_plans=["C"], cancelled_reviews=["V1"])
        | {"idempotency_key": None}
    )
    history += [{"type": "review", "review_id": "V1", "parent": "X"}, {"type": "review", "review_id": "V2", "parent": "Z"}]
    return history, snapshot


def _replace(snapshot: Snapshot, **changes: Any) -> Snapshot:
    """The snapshot with some lists replaced (its indexes built again)."""
    fields = {f.name: getattr(snapshot, f.name) for f in dataclasses.fields(snapshot)}
    return Snapshot(**(fields | changes))


def _with_decision(snapshot: Snapshot, decision_id: str, **changes: Any) -> Snapshot:
    return _replace(
        snapshot,
        decisions=[dataclasses.replace(d, **changes) if d.decision_id == decision_id else d for d in snapshot.decisions],
    )


def _invariants(verdict: Verdict) -> set[str]:
    return {v.invariant for v in verdict.violations}


def test_a_history_that_matches_its_graph_passes_every_invariant() -> None:
    history, snapshot = valid()

    verdict = check_history(history, snapshot)

    assert verdict.violations == ()
    assert verdict.ok and verdict.stored == 9 and verdict.corrections == 1 and verdict.attempts == 1
    assert verdict.operations == len(history)
    assert verdict.figures()["violations by invariant"] == dict.fromkeys(verdict.by_invariant(), 0)


def test_the_closure_is_taken_at_the_corrections_moment() -> None:
    _, snapshot = valid()

    # Z came after the correction (under K: not downstream of S anyway); Y through its dependency on X.
    decisions, plans = downstream_at(snapshot, "S", T)
    assert decisions == {"X", "Y", "SP", "CR", "CS"} and plans == {"C"}
    # Before CR and CS existed, the child plan had nothing in it; before C existed, no plan.
    assert downstream_at(snapshot, "S", 5.2) == ({"X", "Y", "SP", "CR"}, {"C"})
    assert downstream_at(snapshot, "S", 4.8) == ({"X", "Y", "SP"}, set())
    # A dependency added (dated) after the moment is not followed.
    dated = _replace(snapshot, dependencies=[Dependency("Y", "X", at=12.0)])
    assert downstream_at(dated, "S", T)[0] == {"X", "SP", "CR", "CS"}


def test_an_acknowledged_recording_that_is_not_stored_fails() -> None:
    history, snapshot = valid()
    lost = _replace(snapshot, decisions=[d for d in snapshot.decisions if d.decision_id != "Z"])

    verdict = check_history(history, lost)

    assert _invariants(verdict) == {"recorded_once"}
    assert [v.ids for v in verdict.violations] == [("Z",)]
    assert verdict.stored == 8


def test_a_recording_stored_twice_fails() -> None:
    history, snapshot = valid()
    z = next(d for d in snapshot.decisions if d.decision_id == "Z")
    twice = _replace(snapshot, decisions=[*snapshot.decisions, z])
    # Or a second decision under the same key: a retried write recorded anew.
    copy = _replace(snapshot, decisions=[*snapshot.decisions, dataclasses.replace(z, decision_id="Z2", sequence_number=7)])

    assert _invariants(check_history(history, twice)) == {"recorded_once"}
    assert check_history(history, twice).stored == 8  # counted: Z is not stored once
    [violation] = check_history(history, copy).violations
    assert violation.invariant == "recorded_once" and set(violation.ids) == {"Z", "Z2"}


def test_a_recording_stored_in_another_plan_or_outside_its_operation_fails() -> None:
    history, snapshot = valid()

    moved = check_history(history, _with_decision(snapshot, "Z", plan_ids=("Q",)))
    late = check_history(history, _with_decision(snapshot, "Z", created_at=15.0))

    assert _invariants(moved) == {"recorded_once"} and "stored in ['Q']" in moved.violations[0].message
    assert _invariants(late) == {"recorded_once"} and "outside its operation" in late.violations[0].message


def test_a_correction_that_misses_a_downstream_decision_fails() -> None:
    history, snapshot = valid()
    # Y (downstream through its dependency on X) left current, and the attempt no longer names it.
    kept = _with_decision(snapshot, "Y", superseded_at=None, superseded_by=None)
    attempt = dataclasses.replace(kept.attempts[0], invalidated_decision_ids=("S", "X", "SP", "CR", "CS"))
    kept = _replace(kept, attempts=[attempt])

    verdict = check_history(history, kept)

    assert _invariants(verdict) == {"correction_closure"}
    assert all("Y" in v.ids and "misses Y" in v.message for v in verdict.violations)
    # The answer named Y: only what the graph holds misses it.
    assert len(verdict.violations) == 2


def test_a_correction_that_supersedes_a_decision_outside_its_downstream_fails() -> None:
    history, snapshot = valid()
    # W hangs under R, beside S: not downstream of S, yet superseded by its correction (and so answered).
    w = _gone("W", "P", 7, 3.5, "R")
    outside = _replace(snapshot, decisions=[*snapshot.decisions, w])
    history = [e | {"invalidated": [*e["invalidated"], "W"]} if e.get("corrected") else e for e in history]

    verdict = check_history(history, outside)

    assert _invariants(verdict) == {"correction_closure"}
    assert all("holds W from outside it" in v.message for v in verdict.violations)


def test_a_correction_answered_with_another_set_or_at_another_moment_fails() -> None:
    history, snapshot = valid()
    answered_less = [e | {"invalidated_plans": []} if e.get("corrected") else e for e in history]
    answered_late = [e | {"invoked": 20.0, "completed": 21.0} if e.get("corrected") else e for e in history]

    [less] = check_history(answered_less, snapshot).violations
    late = check_history(answered_late, snapshot).violations

    assert less.invariant == "correction_closure" and "misses C" in less.message
    # K's decision is stored at 10.0 too: both its recording and its correction fall outside 20-21.
    assert {v.invariant for v in late} == {"recorded_once", "correction_closure"}
    assert all("outside its operation" in v.message for v in late)
    unstored = _replace(snapshot, attempts=[])
    assert "no attempt of it is stored" in check_history(history, unstored).violations[0].message


def test_a_current_decision_under_a_superseded_ancestor_fails() -> None:
    history, snapshot = valid()
    # Q recorded after the correction under X, which it superseded (not in the closure: it came later).
    under = _replace(snapshot, decisions=[*snapshot.decisions, _decision("Q", "P", 7, 12.0, "X")])
    # And across plans: a plan D that the superseded spawn made after the correction, its decisions current.
    across = _replace(
        snapshot,
        decisions=[*snapshot.decisions, _decision("DR", "D", 0, 12.0), _decision("DS", "D", 1, 12.5, "DR")],
        plans=[*snapshot.plans, StoredPlan("D", 12.0, spawned_by="SP")],
    )

    [violation] = check_history(history, under).violations
    assert violation.invariant == "current_under_superseded" and violation.ids == ("Q", "X")
    verdict = check_history(history, across)
    assert _invariants(verdict) == {"current_under_superseded", "active_under_superseded_spawn"}
    assert {v.ids for v in verdict.violations if v.invariant == "current_under_superseded"} == {("DR", "SP"), ("DS", "SP")}


def test_a_decision_set_back_to_current_in_an_invalidated_plan_fails() -> None:
    history, snapshot = valid()
    back = _with_decision(snapshot, "CS", superseded_at=None, superseded_by=None)

    verdict = check_history(history, back)

    assert "current_under_superseded" in _invariants(verdict)
    assert any(v.ids == ("CS", "C") for v in verdict.violations)


def test_an_active_child_plan_under_a_superseded_spawn_fails() -> None:
    history, snapshot = valid()
    # D, instantiated from SP after its correction, left active (no decision in it).
    active = _replace(snapshot, plans=[*snapshot.plans, StoredPlan("D", 12.0, spawned_by="SP")])
    # E, made by a current spawn in the invalidated plan C.
    nested = _replace(
        snapshot,
        decisions=[*snapshot.decisions, _decision("CT", "C", 2, 12.0, "CR")],
        plans=[*snapshot.plans, StoredPlan("E", 12.5, spawned_by="CT")],
    )

    [violation] = check_history(history, active).violations
    assert violation.invariant == "active_under_superseded_spawn" and violation.ids == ("D", "SP")
    assert "active_under_superseded_spawn" in _invariants(check_history(history, nested))


def test_a_replay_run_twice_fails() -> None:
    history, snapshot = valid()
    replayed = _replace(
        snapshot,
        decisions=[*snapshot.decisions, _decision("RP", "P", 7, 12.0, "K"), _decision("RQ", "P", 8, 13.0, "K")],
        dependencies=[*snapshot.dependencies, Dependency("RP", "K", at=12.5), Dependency("RQ", "K", at=13.5)],
    )
    once = _replace(
        replayed,
        attempts=[dataclasses.replace(snapshot.attempts[0], replay_outcome="replayed", replayed_decision_ids=("RP", "RQ"))],
    )
    # Reported a second time, naming only RQ: RP was linked by a first run.
    twice = _replace(
        replayed, attempts=[dataclasses.replace(snapshot.attempts[0], replay_outcome="replayed", replayed_decision_ids=("RQ",))]
    )
    queued_twice = _replace(snapshot, queued_replays={"run-1": ("A",), "run-2": ("A",)})
    queued_again = _replace(once, queued_replays={"run-1": ("A",)})

    assert check_history(history, once).ok
    [violation] = check_history(history, twice).violations
    assert violation.invariant == "replay_at_most_once" and "RP" in violation.ids
    assert _invariants(check_history(history, queued_twice)) == {"replay_at_most_once"}
    assert _invariants(check_history(history, queued_again)) == {"replay_at_most_once"}
    assert check_history(history, once).replays_reported == 1


def test_a_stranded_review_fails() -> None:
    history, snapshot = valid()
    v1 = snapshot.reviews[0]
    # V1 left pending under X, which the correction superseded (and was answered as cancelled).
    stranded = _replace(
        snapshot, reviews=[dataclasses.replace(v1, status="pending", resolved_at=None, cancelled_by=None), snapshot.reviews[1]]
    )
    # Cancelled in the graph, but the answer did not say so: the client would wait for it.
    unanswered = [e | {"cancelled_reviews": []} if e.get("corrected") else e for e in history]
    # Held, but never stored.
    unheld = _replace(snapshot, reviews=[v1])

    verdict = check_history(history, stranded)
    assert _invariants(verdict) == {"review_stranded"} and len(verdict.violations) == 2
    assert _invariants(check_history(unanswered, snapshot)) == {"review_stranded"}
    [violation] = check_history(history, unheld).violations
    assert violation.invariant == "review_stranded" and violation.ids == ("V2",)


# -- against Neo4j -----------------------------------------------------------------------------


def _record(store: Trail, plan: Plan, decision_type: DecisionType, parent: Decision, *deps: Decision) -> Decision:
    return recording_service.record(
        store,
        decision(plan.plan_id, decision_type, parent.decision_id, depends_on=tuple(d.decision_id for d in deps)),
        principal=LOCAL,
    )


def _ack(d: Decision, **extra: Any) -> dict[str, Any]:
    return {
        "type": "ack",
        "op": "record",
        "decision_id": d.decision_id,
        "plan_id": d.plan_id,
        "sequence_number": d.sequence_number,
        "idempotency_key": None,
        **extra,
    }


def test_the_snapshot_of_a_real_correction_passes_and_a_graph_broken_after_it_fails(graph: Graph, store: Trail) -> None:
    plan, root = instantiate_plan(store, "parent", principal=LOCAL)
    strategy = _record(store, plan, DecisionType.STRATEGY_CHOICE, root)
    other = _record(store, plan, DecisionType.STRATEGY_CHOICE, root)
    spawn = _record(store, plan, DecisionType.SUBPLAN_SPAWN, strategy)
    influenced = _record(store, plan, DecisionType.RESOURCE_SELECTION, other, spawn)  # downstream through DEPENDS_ON
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    child, child_root = instantiate_plan(store, "child", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    child_strategy = _record(store, child, DecisionType.STRATEGY_CHOICE, child_root)
    recorded = [root, strategy, other, spawn, influenced, child_root, child_strategy]

    result = correct(store, strategy.decision_id, "append", "another way", principal=LOCAL)
    history = [_ack(d) for d in recorded] + [
        _ack(
            result.correction,
            op="correct",
            corrected=strategy.decision_id,
            invalidated=list(result.invalidated),
            invalidated_plans=list(result.invalidated_plans),
            cancelled_reviews=list(result.cancelled_reviews),
        )
    ]

    verdict = check_history(history, read_snapshot(graph))
    assert verdict.violations == ()
    assert verdict.stored == len(recorded) + 1 and verdict.attempts == 1
    downstream = [strategy, spawn, influenced, child_root, child_strategy]
    assert set(result.invalidated) == {d.decision_id for d in downstream}  # ``other`` and ``root`` stay current

    # The child plan's strategy set back to current, as a lost supersession would leave it.
    graph.driver.execute_query(
        "MATCH (d:Decision {decision_id: $id})-[s:SUPERSEDED_BY]->() DELETE s REMOVE d.superseded_at",
        id=child_strategy.decision_id,
        database_=graph.database,
    )
    broken = check_history(history, read_snapshot(graph))
    assert {"correction_closure", "current_under_superseded"} <= {v.invariant for v in broken.violations}
    assert all(child_strategy.decision_id in v.ids for v in broken.violations)
