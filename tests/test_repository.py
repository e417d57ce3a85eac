"""The decision store against the session's real Neo4j."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from decisiontrail.domain import (
    ArtifactRef,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Invariant,
    Phase,
    Plan,
    Scope,
)
from decisiontrail.domain.decision import PHASES_BY_TYPE, ResourceRef
from decisiontrail.domain.ids import new_ulid
from decisiontrail.exceptions import Conflict, NotFound, RuleViolation
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import correction as correction_service
from decisiontrail.services import lifecycle as lifecycle_service
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL
from factories import at_once, decision, new_plan, snapshot, to_execute


def full_decision(plan_id: str, decision_type: DecisionType, parent: str | None, **fields: object) -> Decision:
    """A decision with every writable field filled."""
    values: dict[str, object] = {
        "plan_id": plan_id,
        "parent_decision_id": parent,
        "decision_type": decision_type,
        "question": f"Which way for {decision_type.value}? ünïcode ✓",
        "chosen_option": "MATCH (n) DETACH DELETE n // stored verbatim, never run",
        "alternatives_considered": ("option b", "option c"),
        "confidence_score": 0.625,
        "context_snapshot": ContextSnapshot(
            hot_context_hash="ab" * 32,
            hot_context_ref="context://sha256/" + "ab" * 32,
            relevant_resources=(ResourceRef(resource_id="repo:main", path="src/app.py"), ResourceRef(resource_id="uko:42")),
            actor_state_ref=CheckpointRef(thread_id="thread-7", checkpoint_ns="strategy", checkpoint_id=new_ulid()),
        ),
        "rationale": "because",
        "actor_reasoning": "step 1, step 2",
        "artifacts_produced": (ArtifactRef(artifact_path="out/report.md", artifact_type="markdown"),),
        "created_at": datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC),
    }
    values.update(fields)
    return Decision(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("decision_type", list(DecisionType))
def test_every_decision_type_round_trips_with_every_field(store: Trail, decision_type: DecisionType) -> None:
    plan, root = new_plan(store)
    anchor = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    phase = PHASES_BY_TYPE[decision_type][0]
    if phase is Phase.EXECUTE:
        lifecycle_service.advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    is_root = decision_type is DecisionType.PROMPT_DEFINITION
    # Execute decisions hang under a Strategize decision, never directly under the root.
    parent = None if is_root else (anchor.decision_id if phase is Phase.EXECUTE else root.decision_id)
    original = (
        root if is_root else recording_service.record(store, decision(plan.plan_id, decision_type, parent), principal=LOCAL)
    )
    # The decision under test: a correction of `original`, depending on `anchor`.
    written = full_decision(
        plan.plan_id,
        decision_type,
        parent,
        phase=phase,
        depends_on=(anchor.decision_id,),
        is_correction=True,
        corrects_decision_id=original.decision_id,
        correction_reason="the first answer was wrong",
    )
    stored = recording_service.record(store, written, principal=LOCAL)
    correction_service.supersede(store, original.decision_id, stored.decision_id, principal=LOCAL)
    dependent_type = DecisionType.INVARIANT_ENFORCED if is_root else decision_type
    dependent = recording_service.record(
        store,
        decision(plan.plan_id, dependent_type, parent or stored.decision_id, depends_on=(stored.decision_id,)),
        principal=LOCAL,
    )
    child_plans: tuple[str, ...] = ()
    if decision_type in (DecisionType.SUBPLAN_SPAWN, DecisionType.SUBPLAN_PARALLEL_SPAWN):
        lifecycle_service.advance_phase(
            store, plan.plan_id, Phase.EXECUTE, principal=LOCAL
        )  # a child plan runs once its parent executes
        child = lifecycle_service.create_plan(
            store,
            Plan(description="child", parent_plan_id=plan.plan_id, spawned_by_decision_id=stored.decision_id),
            principal=LOCAL,
        )
        child_plans = (child.plan_id,)
        lifecycle_service.advance_phase(
            store, plan.plan_id, Phase.STRATEGIZE, principal=LOCAL
        )  # the spawn's successor is decided in Strategize
    successor = recording_service.record(
        store,
        full_decision(
            plan.plan_id,
            decision_type,
            parent,
            phase=phase,
            is_correction=True,
            corrects_decision_id=stored.decision_id,
            correction_reason="and so was the second",
        ),
        principal=LOCAL,
    )
    superseded_at = datetime(2026, 12, 1, 9, 30, 0, 250000, tzinfo=UTC)
    correction_service.supersede(store, stored.decision_id, successor.decision_id, at=superseded_at, principal=LOCAL)

    read = reading.get_decision(store, written.decision_id, principal=LOCAL)

    expected = written.model_copy(
        update={
            "sequence_number": stored.sequence_number,
            "downstream_decision_ids": (dependent.decision_id,),
            "downstream_plan_ids": child_plans,
            "superseded_by": successor.decision_id,
            "superseded_at": superseded_at,
        }
    )
    for field in Decision.model_fields:
        assert getattr(read, field) == getattr(expected, field), field
    assert read == expected


def test_sequence_numbers_are_unique_and_gap_free_under_concurrent_writers(store: Trail) -> None:
    plan, root = new_plan(store)
    writers, per_writer = 8, 50

    def write() -> None:
        for _ in range(per_writer):
            recording_service.record(
                store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id), principal=LOCAL
            )

    assert at_once(*[write] * writers) == [None] * writers  # no writer failed
    numbers = [d.sequence_number for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)]
    # The root took 0; the 400 concurrent writes took 1..400, each exactly once.
    assert sorted(numbers) == list(range(writers * per_writer + 1))
    assert numbers == sorted(numbers)


def test_concurrent_writers_into_one_plan_wait_their_turn_and_are_never_deadlock_victims(
    store: Trail, caplog: pytest.LogCaptureFixture
) -> None:
    # Each waits for the plan's lock, then writes. A holder incrementing a count of that lock node
    # a second time (the events' count once did) made every writer queued on it a deadlock victim: a retry per
    # write, and a victim's connection sometimes left unanswered for the driver's read timeout.
    plan, root = new_plan(store)

    def write() -> None:
        for _ in range(25):
            recording_service.record(
                store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id), principal=LOCAL
            )

    with caplog.at_level(logging.INFO, logger="decisiontrail.graphdb.database"):
        assert at_once(*[write] * 4) == [None] * 4
    retried = [r.getMessage() for r in caplog.records if "met concurrent writes" in r.getMessage()]
    assert retried == []
    assert len(reading.list_decisions(store, plan.plan_id, principal=LOCAL)) == 4 * 25 + 1


def test_list_decisions_comes_in_sequence_order_and_tree_nests_them(store: Trail) -> None:
    plan, root = new_plan(store)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    tool = recording_service.record(
        store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, strategy.decision_id), principal=LOCAL
    )
    invariant = recording_service.record(
        store, decision(plan.plan_id, DecisionType.INVARIANT_ENFORCED, root.decision_id), principal=LOCAL
    )

    listed = reading.list_decisions(store, plan.plan_id, principal=LOCAL)
    tree = reading.get_tree(store, plan.plan_id, principal=LOCAL)

    assert [d.decision_id for d in listed] == [root.decision_id, strategy.decision_id, tool.decision_id, invariant.decision_id]
    assert [d.sequence_number for d in listed] == [0, 1, 2, 3]
    assert tree.root.decision.decision_id == root.decision_id
    assert [c.decision.decision_id for c in tree.root.children] == [strategy.decision_id, invariant.decision_id]
    assert [c.decision.decision_id for c in tree.root.children[0].children] == [tool.decision_id]


def test_current_only_leaves_out_superseded_decisions(store: Trail) -> None:
    plan, root = new_plan(store)
    old = recording_service.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    new = recording_service.record(
        store,
        decision(
            plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, is_correction=True, corrects_decision_id=old.decision_id
        ),
        principal=LOCAL,
    )
    correction_service.supersede(store, old.decision_id, new.decision_id, principal=LOCAL)

    current = [d.decision_id for d in reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)]

    assert current == [root.decision_id, new.decision_id]
    tree, history = reading.get_tree(store, plan.plan_id, LOCAL), reading.get_tree(store, plan.plan_id, LOCAL, history=True)
    assert tree is not None and history is not None
    assert "[superseded by" not in tree.render() and len(tree) == 2  # the current tree
    assert f"[superseded by {new.decision_id}]" in history.render() and len(history) == 3


def test_child_plan_links_to_its_parent_plan_and_spawning_decision(store: Trail) -> None:
    plan, root = new_plan(store)
    spawn = recording_service.record(
        store, decision(plan.plan_id, DecisionType.SUBPLAN_PARALLEL_SPAWN, root.decision_id), principal=LOCAL
    )
    to_execute(store, plan.plan_id)
    first = lifecycle_service.create_plan(
        store, Plan(description="child a", parent_plan_id=plan.plan_id, spawned_by_decision_id=spawn.decision_id), principal=LOCAL
    )
    second = lifecycle_service.create_plan(
        store, Plan(description="child b", parent_plan_id=plan.plan_id, spawned_by_decision_id=spawn.decision_id), principal=LOCAL
    )

    read = reading.get_plan(store, first.plan_id, principal=LOCAL)

    assert read == first
    assert read.parent_plan_id == plan.plan_id and read.spawned_by_decision_id == spawn.decision_id
    assert reading.get_decision(store, spawn.decision_id, principal=LOCAL).downstream_plan_ids == tuple(
        sorted([first.plan_id, second.plan_id])
    )


def test_plan_round_trips_with_every_field(store: Trail) -> None:
    from decisiontrail.domain import AutomationProfile

    plan = Plan(
        description="Ship it",
        arguments={"n": 3, "nested": {"list": [1, "two", None, True]}, "text": "ü"},
        phase=Phase.EXECUTE,
        automation_profile=AutomationProfile(edit_code=0.8, execute_command=0.25),
        invariants=(
            Invariant(name="uptime", statement="no downtime", scope=Scope.PROJECT),
            Invariant(name="tests", statement="tests pass"),
        ),
        created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
    )
    lifecycle_service.create_plan(store, plan, principal=LOCAL)

    assert reading.get_plan(store, plan.plan_id, principal=LOCAL) == plan


def test_unknown_ids_are_not_found(store: Trail) -> None:
    plan, _ = new_plan(store)
    missing = new_ulid()

    with pytest.raises(NotFound, match=f"decision {missing}"):
        reading.get_decision(store, missing, principal=LOCAL)
    with pytest.raises(NotFound, match=f"plan {missing}"):
        reading.get_plan(store, missing, principal=LOCAL)
    with pytest.raises(NotFound, match=f"plan {missing}"):
        reading.list_decisions(store, missing, principal=LOCAL)
    assert reading.get_decisions(store, [missing, plan.plan_id], principal=LOCAL) == [None, None]


def test_get_decisions_answers_in_the_order_asked(store: Trail) -> None:
    plan, root = new_plan(store)
    other = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    missing = new_ulid()

    found = reading.get_decisions(store, [other.decision_id, missing, root.decision_id], principal=LOCAL)

    assert [d.decision_id if d else None for d in found] == [other.decision_id, None, root.decision_id]


def _refusals(store: Trail) -> dict[str, tuple[object, type[Exception], str]]:
    """Writes that must be refused: (callable, exception, message or rule)."""
    plan, root = new_plan(store, description="plan one")
    other, other_root = new_plan(store, description="plan two")
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    replaced = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    successor = recording_service.record(
        store,
        decision(
            plan.plan_id,
            DecisionType.STRATEGY_CHOICE,
            root.decision_id,
            is_correction=True,
            corrects_decision_id=replaced.decision_id,
        ),
        principal=LOCAL,
    )
    correction_service.supersede(store, replaced.decision_id, successor.decision_id, principal=LOCAL)
    p, r = plan.plan_id, root.decision_id
    return {
        "parent in another plan": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, other_root.decision_id), principal=LOCAL
            ),
            RuleViolation,
            "parent_in_same_plan",
        ),
        "dependency that does not exist": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, r, depends_on=(new_ulid(),)), principal=LOCAL
            ),
            RuleViolation,
            "dependency_exists",
        ),
        "second root": (
            lambda: recording_service.record(store, decision(p, DecisionType.PROMPT_DEFINITION), principal=LOCAL),
            RuleViolation,
            "single_root",
        ),
        "non-root without parent": (
            lambda: recording_service.record(store, decision(p, DecisionType.STRATEGY_CHOICE), principal=LOCAL),
            RuleViolation,
            "parent_required",
        ),
        "unknown plan": (
            lambda: recording_service.record(store, decision(new_ulid(), DecisionType.PROMPT_DEFINITION), principal=LOCAL),
            NotFound,
            "plan",
        ),
        "unknown parent": (
            lambda: recording_service.record(store, decision(p, DecisionType.RESOURCE_SELECTION, new_ulid()), principal=LOCAL),
            NotFound,
            "parent decision",
        ),
        "superseded parent": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, replaced.decision_id), principal=LOCAL
            ),
            RuleViolation,
            "parent_is_current",
        ),
        "superseded dependency": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, r, depends_on=(replaced.decision_id,)), principal=LOCAL
            ),
            RuleViolation,
            "dependency_is_current",
        ),
        "duplicate decision id": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, r, decision_id=strategy.decision_id), principal=LOCAL
            ),
            RuleViolation,
            "unique_decision_id",
        ),
        "correction of unknown decision": (
            lambda: recording_service.record(
                store,
                decision(p, DecisionType.RESOURCE_SELECTION, r, is_correction=True, corrects_decision_id=new_ulid()),
                principal=LOCAL,
            ),
            NotFound,
            "corrected decision",
        ),
        "already superseded": (
            lambda: correction_service.supersede(store, replaced.decision_id, strategy.decision_id, principal=LOCAL),
            Conflict,
            f"already superseded by {successor.decision_id}",
        ),
        "written downstream ids": (
            lambda: recording_service.record(
                store, decision(p, DecisionType.RESOURCE_SELECTION, r, downstream_decision_ids=(r,)), principal=LOCAL
            ),
            RuleViolation,
            "downstream_is_derived",
        ),
        "child plan spawned by a non-spawning decision": (
            lambda: lifecycle_service.create_plan(
                store, Plan(description="x", parent_plan_id=p, spawned_by_decision_id=strategy.decision_id), principal=LOCAL
            ),
            RuleViolation,
            "spawn_by_spawning_type",
        ),
        "child plan spawned from another plan": (
            lambda: lifecycle_service.create_plan(
                store,
                Plan(description="x", parent_plan_id=other.plan_id, spawned_by_decision_id=strategy.decision_id),
                principal=LOCAL,
            ),
            RuleViolation,
            "spawn_from_parent_plan",
        ),
        "child plan of unknown parent": (
            lambda: lifecycle_service.create_plan(
                store,
                Plan(description="x", parent_plan_id=new_ulid(), spawned_by_decision_id=strategy.decision_id),
                principal=LOCAL,
            ),
            NotFound,
            "parent plan",
        ),
        "duplicate plan id": (
            lambda: lifecycle_service.create_plan(store, Plan(plan_id=plan.plan_id, description="again"), principal=LOCAL),
            RuleViolation,
            "unique_plan_id",
        ),
    }


REFUSALS = [
    "parent in another plan",
    "dependency that does not exist",
    "second root",
    "non-root without parent",
    "unknown plan",
    "unknown parent",
    "superseded parent",
    "superseded dependency",
    "duplicate decision id",
    "correction of unknown decision",
    "already superseded",
    "written downstream ids",
    "child plan spawned by a non-spawning decision",
    "child plan spawned from another plan",
    "child plan of unknown parent",
    "duplicate plan id",
]


@pytest.mark.parametrize("case", REFUSALS)
def test_refused_writes_leave_the_database_unchanged(store: Trail, graph: Graph, case: str) -> None:
    write, error, detail = _refusals(store)[case]
    before = count_graph(graph)

    with pytest.raises(error) as raised:
        write()  # type: ignore[operator]

    if isinstance(raised.value, RuleViolation):
        assert raised.value.rule == detail
    else:
        assert detail in str(raised.value)
    assert count_graph(graph) == before


def test_refused_write_does_not_use_up_a_sequence_number(store: Trail) -> None:
    plan, root = new_plan(store)
    with pytest.raises(RuleViolation):
        recording_service.record(
            store,
            decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id, depends_on=(new_ulid(),)),
            principal=LOCAL,
        )

    after = recording_service.record(
        store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id), principal=LOCAL
    )

    assert after.sequence_number == 1


def test_a_root_can_be_replaced_only_by_its_correction(store: Trail) -> None:
    plan, root = new_plan(store)
    correction = recording_service.record(
        store,
        decision(plan.plan_id, DecisionType.PROMPT_DEFINITION, is_correction=True, corrects_decision_id=root.decision_id),
        principal=LOCAL,
    )
    correction_service.supersede(store, root.decision_id, correction.decision_id, principal=LOCAL)

    # The corrected root is now the plan's one current root: a further plain root is refused.
    with pytest.raises(RuleViolation, match="already has its prompt_definition " + correction.decision_id):
        recording_service.record(store, decision(plan.plan_id, DecisionType.PROMPT_DEFINITION), principal=LOCAL)
    assert [d.decision_id for d in reading.list_decisions(store, plan.plan_id, current_only=True, principal=LOCAL)] == [
        correction.decision_id
    ]


def test_created_at_keeps_microseconds_and_utc(store: Trail) -> None:
    plan, root = new_plan(store)
    moment = datetime(2026, 6, 1, 23, 59, 59, 999999, tzinfo=UTC) + timedelta(hours=0)
    stored = recording_service.record(
        store, decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, root.decision_id, created_at=moment), principal=LOCAL
    )

    assert reading.get_decision(store, stored.decision_id, principal=LOCAL).created_at == moment


def test_system_decision_without_checkpoint_round_trips(store: Trail) -> None:
    plan = lifecycle_service.create_plan(store, Plan(description="p"), principal=LOCAL)
    root = recording_service.record(
        store,
        decision(plan.plan_id, DecisionType.PROMPT_DEFINITION, context_snapshot=snapshot(checkpoint=False)),
        principal=LOCAL,
    )

    assert reading.get_decision(store, root.decision_id, principal=LOCAL).context_snapshot.actor_state_ref is None
