"""Parent inference from what the placement read takes for it, against the rule written out here.

The rule (ADR-007's tree, `domain.recording.PARENT_TYPES`): a recording that names no parent hangs
under the latest current decision of one of its parent types in its plan, the same actor run's
latest first. The read takes both candidates by ordered seeks from the end of two indexes (a
type's decisions, and a type's decisions in one run, in sequence order), stepping back over
superseded ones, and `domain.placement.inferred_parent` chooses; these plans put superseded
decisions at the ends of those runs, actor runs that interleave, and types with no current
decision, where a seek that stopped too early or looked at the wrong run would answer another
decision.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from decisiontrail.domain.decision import DecisionType
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.placement import Recording, inferred_parent
from decisiontrail.domain.recording import PARENT_TYPES
from decisiontrail.graphdb import Graph, decisions
from decisiontrail.services import Trail
from decisiontrail.services.recording import propose
from factories import actor_snapshot, tool_input

TYPES = ("strategy_choice", "implementation_choice", "tool_invocation", "resource_selection")
RUNS = ("run-0", "run-1", "run-2", None)


@dataclass(frozen=True)
class Stored:
    decision_id: str
    decision_type: str
    sequence_number: int
    thread: str | None
    superseded: bool


def _random_plan(graph: Graph, plan_id: str, rng: random.Random, size: int, superseded_share: float) -> list[Stored]:
    stored = [
        Stored(
            decision_id=f"{plan_id}-{i}",
            decision_type="prompt_definition" if i == 0 else rng.choice(TYPES),
            sequence_number=i,
            thread=None if i == 0 else rng.choice(RUNS),
            # The latest decisions are the likeliest superseded (a correction's downstream is a plan's tail).
            superseded=i > 0 and rng.random() < (0.8 if i > size * 0.8 else superseded_share),
        )
        for i in range(size)
    ]
    graph.driver.execute_query(
        "CREATE (p:Plan {plan_id: $plan_id, next_sequence: $size, phase: 'execute'}) "
        "WITH p UNWIND $rows AS row "
        "CREATE (d:Decision {decision_id: row.decision_id, plan_id: $plan_id, sequence_number: row.sequence_number, "
        "  decision_type: row.decision_type, actor_state_thread_id: row.thread})-[:IN_PLAN]->(p) "
        "FOREACH (_ IN CASE WHEN row.superseded THEN [1] ELSE [] END | "
        "  CREATE (d)-[:SUPERSEDED_BY]->(:Decision {decision_id: row.decision_id + '-correction', plan_id: 'elsewhere'}))",
        plan_id=plan_id,
        size=size,
        rows=[s.__dict__ for s in stored],
        database_=graph.database,
    )
    return stored


def _expected(stored: list[Stored], decision_type: DecisionType, thread: str | None) -> str | None:
    """The rule, written out: among the current decisions of a parent type, the same run's latest,
    else the latest (``thread`` None: the latest, whatever its run)."""
    parent_types = {t.value for t in PARENT_TYPES[decision_type]}
    current = [s for s in stored if s.decision_type in parent_types and not s.superseded]
    same_run = [s for s in current if thread is not None and s.thread == thread]
    chosen = max(same_run or current, key=lambda s: s.sequence_number, default=None)
    return chosen.decision_id if chosen else None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_inferred_parent_is_the_same_runs_latest_current_one_else_the_latest(store: Trail, graph: Graph, seed: int) -> None:
    rng = random.Random(seed)
    # Two plans of some size, and a small one where most decisions are superseded (some types have
    # no current decision at all).
    shapes = [(rng.randint(30, 120), 0.2), (rng.randint(30, 120), 0.2), (8, 0.9)]
    plans = [new_ulid() for _ in shapes]
    stored = {
        plan_id: _random_plan(graph, plan_id, rng, size, superseded_share)
        for plan_id, (size, superseded_share) in zip(plans, shapes, strict=True)
    }
    asked = [
        (plan_id, decision_type, thread)
        for plan_id in plans
        for decision_type in ("error_recovery", "tool_invocation", "resource_selection", "subplan_spawn")
        for thread in ("run-0", "run-1", "run-2", "run-never-seen")  # an actor's recording always has its run
    ]
    recordings = [
        Recording.of(
            propose(
                tool_input(decision_type, question=f"{decision_type} {i}?"),
                plan_id=plan_id,
                snapshot=actor_snapshot(thread),
            )
        )
        for i, (plan_id, decision_type, thread) in enumerate(asked)
    ]

    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        try:
            facts = decisions.read_placements(tx, recordings)  # type: ignore[arg-type]
        finally:
            tx.rollback()

    answered = [
        inferred_parent(latest_in_run=f["latest_of_parent_types_in_run"], latest=f["latest_of_parent_types"], root=None)
        for f in facts
    ]
    expected = [_expected(stored[plan_id], DecisionType(t), thread) for plan_id, t, thread in asked]
    assert answered == expected
    # What the plans asked for: a parent and none, and a same run's latest that is not the latest.
    latest = [_expected(stored[plan_id], DecisionType(t), None) for plan_id, t, _ in asked]
    assert any(e is not None for e in expected) and any(e is None for e in expected)
    assert any(e != plain for e, plain in zip(expected, latest, strict=True))
