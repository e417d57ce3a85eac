"""The recording protocol's service (ADR-033) against the real Neo4j: what is persisted, held, refused."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from decisiontrail.access import LOCAL
from decisiontrail.domain import AutomationProfile, Decision, DecisionType, Invariant, Phase, Plan
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.placement import Recording
from decisiontrail.domain.recording import CapturedContext, Proposal, Review, ReviewAction, ReviewStatus
from decisiontrail.exceptions import Conflict, IdempotencyKeyInUse, NotFound, RuleViolation, ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import decisions
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan, record_user_intervention
from decisiontrail.services.recording import (
    RECORD_DECISION_INPUT_SCHEMA,
    RECORD_DECISION_OUTPUT_SCHEMA,
    MAX_BATCH,
    propose,
    record_decision,
    record_decisions,
)
from decisiontrail.services.reviews import pending_reviews, resolve_review
from decisiontrail.services import correction as correction_service
from decisiontrail.services import reading
from decisiontrail.services import Trail
from factories import at_once, to_execute, actor_snapshot, tool_input

ADR_033 = Path(__file__).resolve().parents[2] / "shared" / "spec" / "ADR-033-decision-recording-protocol.txt"
ADR_033_TOOL = Path(__file__).parent / "data" / "adr_033_record_decision_tool.yaml"


def _plan(store: Trail, edit_code: float = 0.0, execute_command: float = 0.0) -> tuple[Plan, Decision]:
    return instantiate_plan(
        store,
        "Ship the feature",
        {"ticket": 42},
        automation_profile=AutomationProfile(edit_code=edit_code, execute_command=execute_command),
        principal=LOCAL,
    )


def _record(store: Trail, plan: Plan, decision_type: str, *, thread: str = "actor-1", **fields: Any) -> Decision | Review:
    return record_decision(
        store, tool_input(decision_type, **fields), plan_id=plan.plan_id, snapshot=actor_snapshot(thread), principal=LOCAL
    )


def _decision(outcome: Decision | Review) -> Decision:
    assert isinstance(outcome, Decision), outcome
    return outcome


# -- the tool's schema ---------------------------------------------------------------------


def _spec_block(text: str) -> str:
    return text[text.index("tool:\n  name: local/record-decision") : text.index("Context Snapshot Auto-Capture")]


def test_input_and_output_schema_are_adr_033s_verbatim() -> None:
    # The tool definition as ADR-033 gives it, kept in the project's test data so this runs everywhere.
    adr = yaml.safe_load(ADR_033_TOOL.read_text())["tool"]

    assert RECORD_DECISION_OUTPUT_SCHEMA == adr["output_schema"]
    ours = RECORD_DECISION_INPUT_SCHEMA
    assert ours["required"] == adr["input_schema"]["required"]
    assert list(ours["properties"]) == list(adr["input_schema"]["properties"])
    for name, spec in adr["input_schema"]["properties"].items():
        for key, value in spec.items():
            if key == "description":
                assert " ".join(ours["properties"][name][key].split()) == " ".join(value.split())
            else:
                assert ours["properties"][name][key] == value, (name, key)


@pytest.mark.skipif(not ADR_033.exists(), reason="the specification (../shared/spec) is not beside the checkout")
def test_the_kept_tool_definition_is_still_the_specifications() -> None:
    # Where the specification is checked out beside the project, the copy must match it.
    kept = "".join(line for line in ADR_033_TOOL.read_text().splitlines(keepends=True) if not line.startswith("#"))
    assert kept.rstrip() == _spec_block(ADR_033.read_text()).rstrip()


# -- refused input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error", "named"),
    [
        ({"question": "q", "chosen_option": "o", "rationale": "r"}, ValidationFailed, "decision_type"),
        (tool_input("strategy_choice", question=None), ValidationFailed, "question"),
        (tool_input("strategy_choice", confidence_score=1.5), ValidationFailed, "confidence_score"),
        (tool_input("strategy_choice", confidence_score="high"), ValidationFailed, "confidence_score"),
        (tool_input("strategy_choice", alternatives_considered="not a list"), ValidationFailed, "alternatives_considered"),
        (tool_input("strategy_choice", alternatives_considered=["ok", 3]), ValidationFailed, "alternatives_considered.1"),
        (tool_input("made_up_type"), ValidationFailed, "decision_type"),
        (tool_input("strategy_choice", question="   "), ValidationFailed, "question"),
        (tool_input("strategy_choice", parent_decision_id="not-a-ulid"), ValidationFailed, "parent_decision_id"),
        (tool_input("prompt_definition"), RuleViolation, "system_created_type"),
        (tool_input("user_intervention"), RuleViolation, "system_created_type"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(
    store: Trail, graph: Graph, arguments: dict[str, Any], error: type[Exception], named: str
) -> None:
    plan, _ = _plan(store)
    arguments = {k: v for k, v in arguments.items() if v is not None}
    before = count_graph(graph)

    with pytest.raises(error) as raised:
        record_decision(store, arguments, plan_id=plan.plan_id, snapshot=actor_snapshot(), principal=LOCAL)

    detail = raised.value.rule if isinstance(raised.value, RuleViolation) else raised.value.field  # type: ignore[attr-defined]
    assert detail == named
    assert count_graph(graph) == before


def test_a_decision_without_a_whole_snapshot_is_not_persisted(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store)
    before = count_graph(graph)
    no_checkpoint = actor_snapshot().model_copy(update={"actor_state_ref": None})

    with pytest.raises(ValidationFailed, match="context_snapshot: a decision without"):
        record_decision(store, tool_input("strategy_choice"), plan_id=plan.plan_id, snapshot=None, principal=LOCAL)
    with pytest.raises(ValidationFailed) as raised:
        record_decision(store, tool_input("strategy_choice"), plan_id=plan.plan_id, snapshot=no_checkpoint, principal=LOCAL)

    assert raised.value.field == "context_snapshot.actor_state_ref"
    assert count_graph(graph) == before


def test_an_unknown_plan_is_not_found(store: Trail) -> None:
    with pytest.raises(NotFound, match="plan"):
        record_decision(store, tool_input("strategy_choice"), plan_id=new_ulid(), snapshot=actor_snapshot(), principal=LOCAL)


# -- system-created decisions --------------------------------------------------------------


def test_instantiating_a_plan_creates_its_root_from_description_and_arguments(store: Trail) -> None:
    plan, root = _plan(store)

    stored = reading.get_decision(store, root.decision_id, principal=LOCAL)

    assert stored.decision_type is DecisionType.PROMPT_DEFINITION and stored.parent_decision_id is None
    assert '"description": "Ship the feature"' in stored.chosen_option and '"ticket": 42' in stored.chosen_option
    assert reading.read_context(store, stored.context_snapshot.hot_context_hash, principal=LOCAL) == stored.chosen_option
    assert [d.decision_id for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)] == [root.decision_id]


def test_a_plan_spawned_by_a_subplan_decision_becomes_its_child(store: Trail) -> None:
    plan, root = _plan(store)
    spawn = _decision(_record(store, plan, "subplan_parallel_spawn"))
    to_execute(store, plan.plan_id)

    child, child_root = instantiate_plan(
        store, "child work", {"part": 1}, spawned_by_decision_id=spawn.decision_id, principal=LOCAL
    )

    assert child.parent_plan_id == plan.plan_id and child.spawned_by_decision_id == spawn.decision_id
    assert reading.get_decision(store, spawn.decision_id, principal=LOCAL).downstream_plan_ids == (child.plan_id,)
    assert reading.get_tree(store, child.plan_id, principal=LOCAL).root.decision.decision_id == child_root.decision_id


def test_a_child_plan_waits_for_its_parent_to_execute_and_nothing_is_written(store: Trail, graph: Graph) -> None:
    # ADR-007's decision timing: the spawn is decided in Strategize, its child plan runs in Execute.
    plan, _ = _plan(store)
    spawn = _decision(_record(store, plan, "subplan_spawn"))
    before = count_graph(graph)

    with pytest.raises(RuleViolation) as raised:
        instantiate_plan(store, "too early", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)

    assert raised.value.rule == "spawn_in_execute" and "is in strategize" in str(raised.value)
    assert count_graph(graph) == before
    to_execute(store, plan.plan_id)
    child, _ = instantiate_plan(store, "on time", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    assert child.parent_plan_id == plan.plan_id


def test_a_plan_cannot_be_spawned_by_another_kind_of_decision_and_nothing_is_written(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store)
    strategy = _decision(_record(store, plan, "strategy_choice"))
    before = count_graph(graph)

    with pytest.raises(RuleViolation) as raised:
        instantiate_plan(store, "child", spawned_by_decision_id=strategy.decision_id, principal=LOCAL)

    assert raised.value.rule == "spawn_by_spawning_type"
    assert count_graph(graph) == before  # neither the plan nor its root


def test_user_interventions_come_from_the_lifecycle_engine(store: Trail) -> None:
    plan, root = _plan(store)

    guidance = record_user_intervention(
        store, plan.plan_id, "Prefer Redis", parent_decision_id=root.decision_id, reason="ops asked", principal=LOCAL
    )

    assert reading.get_decision(store, guidance.decision_id, principal=LOCAL).decision_type is DecisionType.USER_INTERVENTION


# -- parent inference ----------------------------------------------------------------------


def test_parent_is_inferred_from_the_current_decision_context(store: Trail) -> None:
    plan, root = _plan(store)
    strategy_a = _decision(_record(store, plan, "strategy_choice", thread="strategy"))
    strategy_b = _decision(_record(store, plan, "strategy_choice", thread="strategy", question="second?"))
    resources = _decision(_record(store, plan, "resource_selection", thread="strategy"))
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    mine = _decision(_record(store, plan, "implementation_choice", thread="executor-1"))
    _decision(_record(store, plan, "implementation_choice", thread="executor-2", question="theirs?"))
    tool = _decision(_record(store, plan, "tool_invocation", thread="executor-1"))
    recovery = _decision(_record(store, plan, "error_recovery", thread="executor-1"))

    # Strategy decisions hang under the root; others under the latest decision of a parent type.
    assert strategy_a.parent_decision_id == root.decision_id == strategy_b.parent_decision_id
    assert resources.parent_decision_id == strategy_b.decision_id
    assert mine.parent_decision_id == strategy_b.decision_id
    # The same actor run's implementation choice wins over a later one by another run.
    assert tool.parent_decision_id == mine.decision_id
    assert recovery.parent_decision_id == tool.decision_id


def test_inference_falls_back_to_the_root_and_an_explicit_parent_wins(store: Trail) -> None:
    plan, root = _plan(store)
    spawn = _decision(_record(store, plan, "subplan_spawn"))  # no strategy_choice yet
    strategy = _decision(_record(store, plan, "strategy_choice"))
    explicit = _decision(_record(store, plan, "resource_selection", parent_decision_id=spawn.decision_id))

    assert spawn.parent_decision_id == root.decision_id
    assert strategy.parent_decision_id == root.decision_id
    assert explicit.parent_decision_id == spawn.decision_id


# -- automation profile gating -------------------------------------------------------------


@pytest.mark.parametrize(
    ("threshold", "confidence", "gated"),
    [
        (0.0, None, False),
        (0.0, 0.0, False),
        (1.0, 1.0, True),
        (1.0, 0.99, True),
        (0.8, 0.79, True),
        (0.8, 0.8, False),
        (0.8, 0.95, False),
        (0.8, None, True),
    ],
)
@pytest.mark.parametrize("phase", [Phase.STRATEGIZE, Phase.EXECUTE])
def test_gating_below_at_and_above_each_threshold(
    store: Trail, threshold: float, confidence: float | None, gated: bool, phase: Phase
) -> None:
    # The other phase's threshold is set the opposite way, so the right one must be used.
    other = 0.0 if gated else 1.0
    edit, execute = (threshold, other) if phase is Phase.STRATEGIZE else (other, threshold)
    plan, _ = _plan(store, edit_code=edit, execute_command=execute)
    if phase is Phase.EXECUTE:
        to_execute(store, plan.plan_id)
    decision_type = "strategy_choice" if phase is Phase.STRATEGIZE else "implementation_choice"
    fields = {} if confidence is None else {"confidence_score": confidence}

    outcome = _record(store, plan, decision_type, **fields)

    in_tree = [d.decision_type.value for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)]
    if gated:
        assert isinstance(outcome, Review) and outcome.status is ReviewStatus.PENDING
        assert decision_type not in in_tree
        assert [r.review_id for r in pending_reviews(store, plan.plan_id, principal=LOCAL)] == [outcome.review_id]
    else:
        assert isinstance(outcome, Decision)
        assert decision_type in in_tree
        assert pending_reviews(store, plan.plan_id, principal=LOCAL) == []


@pytest.mark.parametrize(
    ("action", "option", "chosen", "alternatives"),
    [
        (ReviewAction.APPROVE, None, "gateway", ("middleware", "load balancer")),
        (ReviewAction.SELECT_ALTERNATIVE, "load balancer", "load balancer", ("gateway", "middleware")),
        (ReviewAction.CUSTOM, "a sidecar proxy", "a sidecar proxy", ("gateway", "middleware", "load balancer")),
    ],
)
def test_a_reviewer_approves_selects_or_overrides(
    store: Trail, action: ReviewAction, option: str | None, chosen: str, alternatives: tuple[str, ...]
) -> None:
    plan, root = _plan(store, edit_code=0.9)
    arguments = tool_input(
        "strategy_choice", chosen_option="gateway", alternatives_considered=["middleware", "load balancer"], confidence_score=0.5
    )
    snapshot = actor_snapshot()
    review = record_decision(store, arguments, plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    assert isinstance(review, Review)

    resolved, decision = resolve_review(store, review.review_id, action, option, principal=LOCAL)

    stored = reading.get_decision(store, decision.decision_id, principal=LOCAL)
    assert (stored.chosen_option, stored.alternatives_considered) == (chosen, alternatives)
    assert stored.parent_decision_id == root.decision_id and stored.sequence_number == 1
    assert resolved.status.value != "pending" and resolved.decision_id == stored.decision_id
    assert pending_reviews(store, plan.plan_id, principal=LOCAL) == []
    # The actor asking again with the same key gets the decision the review became.
    again = record_decision(store, arguments, plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    assert _decision(again).decision_id == stored.decision_id


def test_asking_again_while_held_for_review_is_answered_with_the_same_pending_review(store: Trail, graph: Graph) -> None:
    # The actor's retry, with the same key, before anyone has answered: that review again, alone
    # or in a batch, and nothing written (not a second review, not a refusal).
    plan, _ = _plan(store, edit_code=0.9)
    arguments = tool_input("strategy_choice", alternatives_considered=["b"], confidence_score=0.5)
    snapshot = actor_snapshot()
    first = record_decision(store, arguments, plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    assert isinstance(first, Review)
    before = count_graph(graph)

    again = record_decision(store, arguments, plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    (in_a_batch,) = record_decisions(
        store, [(propose(arguments, plan_id=plan.plan_id, snapshot=snapshot), None)], principal=LOCAL
    )

    assert isinstance(again, Review) and isinstance(in_a_batch, Review)
    assert again.review_id == in_a_batch.review_id == first.review_id
    assert [r.review_id for r in pending_reviews(store, plan.plan_id, principal=LOCAL)] == [first.review_id]
    assert count_graph(graph) == before


def test_bad_resolutions_are_refused_and_change_nothing(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store, edit_code=1.0)
    review = _record(store, plan, "strategy_choice", alternatives_considered=["b"])
    assert isinstance(review, Review)
    before = count_graph(graph)

    with pytest.raises(ValidationFailed, match="not one of the alternatives"):
        resolve_review(store, review.review_id, ReviewAction.SELECT_ALTERNATIVE, "zzz", principal=LOCAL)
    with pytest.raises(ValidationFailed, match="option"):
        resolve_review(store, review.review_id, ReviewAction.CUSTOM, " ", principal=LOCAL)
    with pytest.raises(NotFound):
        resolve_review(store, new_ulid(), ReviewAction.APPROVE, principal=LOCAL)
    with pytest.raises(RuleViolation, match="pending review"):
        advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    assert count_graph(graph) == before

    resolve_review(store, review.review_id, ReviewAction.APPROVE, principal=LOCAL)
    with pytest.raises(RuleViolation, match="already resolved"):
        resolve_review(store, review.review_id, ReviewAction.APPROVE, principal=LOCAL)


# -- phases --------------------------------------------------------------------------------


def test_each_type_is_accepted_only_in_its_phases_and_apply_accepts_none(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store)
    _decision(_record(store, plan, "strategy_choice"))
    with pytest.raises(RuleViolation, match="made in execute; the plan is in strategize"):
        _record(store, plan, "tool_invocation")

    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    execute = _decision(_record(store, plan, "tool_invocation"))
    with pytest.raises(RuleViolation, match="made in strategize; the plan is in execute"):
        _record(store, plan, "strategy_choice", question="late strategy?")

    advance_phase(store, plan.plan_id, Phase.APPLY, principal=LOCAL)
    before = count_graph(graph)
    with pytest.raises(RuleViolation) as raised:
        _record(store, plan, "tool_invocation", question="one more?")
    assert raised.value.rule == "apply_accepts_no_decisions"
    assert count_graph(graph) == before
    assert execute.phase is Phase.EXECUTE


def test_phase_moves_forward_and_reverts_from_execute_only(store: Trail) -> None:
    plan, _ = _plan(store)

    with pytest.raises(RuleViolation, match="strategize -> apply"):
        advance_phase(store, plan.plan_id, Phase.APPLY, principal=LOCAL)
    with pytest.raises(RuleViolation, match="no current strategy_choice") as refused:
        advance_phase(store, plan.plan_id, Phase.EXECUTE, "nothing decided yet", principal=LOCAL)
    assert refused.value.rule == "strategy_before_execute"
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase is Phase.STRATEGIZE
    _decision(_record(store, plan, "strategy_choice"))
    advance_phase(store, plan.plan_id, Phase.EXECUTE, "strategy done", principal=LOCAL)
    advance_phase(store, plan.plan_id, Phase.STRATEGIZE, "cannot proceed within the chosen strategy", principal=LOCAL)
    advance_phase(store, plan.plan_id, Phase.EXECUTE, "revised", principal=LOCAL)
    final = advance_phase(store, plan.plan_id, Phase.APPLY, "executed", principal=LOCAL)

    assert final.phase is Phase.APPLY
    changes = [(c["from_phase"], c["to_phase"], c["reason"]) for c in reading.phase_changes(store, plan.plan_id, principal=LOCAL)]
    assert changes == [
        ("strategize", "execute", "strategy done"),
        ("execute", "strategize", "cannot proceed within the chosen strategy"),
        ("strategize", "execute", "revised"),
        ("execute", "apply", "executed"),
    ]
    with pytest.raises(RuleViolation, match="apply -> execute"):
        advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)


# -- checkpoint groups ---------------------------------------------------------------------


def test_execute_recordings_carry_a_checkpoint_group_and_strategize_ones_do_not(store: Trail) -> None:
    plan, _ = _plan(store)
    strategy = _decision(_record(store, plan, "strategy_choice"))
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    snapshot = actor_snapshot(
        "executor", relevant_resources=[{"resource_id": "repo:app", "path": "src/main.py"}, {"resource_id": "ticket:42"}]
    )
    tool = _decision(
        record_decision(store, tool_input("tool_invocation"), plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    )

    group = reading.checkpoint_group(store, tool.decision_id, principal=LOCAL)

    assert reading.checkpoint_group(store, strategy.decision_id, principal=LOCAL) is None
    assert group is not None
    assert snapshot.actor_state_ref is not None
    assert (group.thread_id, group.checkpoint_ns, group.checkpoint_id) == (
        snapshot.actor_state_ref.thread_id,
        snapshot.actor_state_ref.checkpoint_ns,
        snapshot.actor_state_ref.checkpoint_id,
    )
    assert group.resources == ("repo:app:src/main.py", "ticket:42")
    # Read for many decisions at once (a GraphQL request's), one answer per decision, in order.
    assert reading.checkpoint_groups(store, [strategy.decision_id, tool.decision_id, new_ulid(), tool.decision_id]) == [
        None,
        group,
        None,
        group,
    ]


# -- idempotency ---------------------------------------------------------------------------


def test_the_same_call_twice_records_once(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store)
    snapshot = actor_snapshot("actor-9")
    first = record_decision(store, tool_input("strategy_choice"), plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    after_first = count_graph(graph)

    second = record_decision(store, tool_input("strategy_choice"), plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
    explicit = record_decision(
        store,
        tool_input("strategy_choice", question="other"),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        idempotency_key="k-1",
        principal=LOCAL,
    )
    # The same request under its key again (from a resumed run: another checkpoint id) is the same recording.
    again = record_decision(
        store,
        tool_input("strategy_choice", question="other"),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        idempotency_key="k-1",
        principal=LOCAL,
    )
    # Another request under a key already used in the plan is refused, naming what the key recorded.
    with pytest.raises(Conflict, match=_decision(explicit).decision_id):
        record_decision(
            store,
            tool_input("strategy_choice", question="changed"),
            plan_id=plan.plan_id,
            snapshot=actor_snapshot(),
            idempotency_key="k-1",
            principal=LOCAL,
        )

    assert _decision(second).decision_id == _decision(first).decision_id
    assert _decision(again).decision_id == _decision(explicit).decision_id
    # Only `explicit` was new: it, its RECORDED event and its audit entry (a request answered from its key writes nothing).
    assert count_graph(graph).nodes == after_first.nodes + 3


def test_concurrent_retries_with_one_key_record_one_decision(store: Trail) -> None:
    plan, _ = _plan(store)
    snapshot = actor_snapshot("actor-racing")

    def retry() -> str:
        return _decision(
            record_decision(store, tool_input("strategy_choice"), plan_id=plan.plan_id, snapshot=snapshot, principal=LOCAL)
        ).decision_id

    results = at_once(*[retry] * 6)

    # each is answered with the one decision, or refused while the first still runs (nothing written)
    answered = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, BaseException)]
    assert answered and len(set(answered)) == 1
    assert all(isinstance(r, IdempotencyKeyInUse) for r in refused), refused
    retried = retry()  # sent again once the others finished: the same decision
    assert retried == answered[0]
    assert (
        sum(d.decision_type is DecisionType.STRATEGY_CHOICE for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL))
        == 1
    )


# -- invariants (service level; the actor is in test_actors) --------------------------------


def test_plan_invariants_round_trip(store: Trail) -> None:
    invariants = [Invariant(name="n", statement="s", scope="action"), Invariant(name="n", statement="t")]  # type: ignore[arg-type]
    plan, _ = instantiate_plan(store, "p", invariants=invariants, principal=LOCAL)

    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).invariants == tuple(invariants)


# -- batches -------------------------------------------------------------------------------


def _executing_plan(store: Trail) -> tuple[Plan, Decision]:
    plan, _ = _plan(store)
    strategy = _decision(_record(store, plan, "strategy_choice", thread="strategy"))
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    return plan, strategy


BATCH = [  # (decision type, actor run, question)
    ("implementation_choice", "executor-1", "how, 1?"),
    ("implementation_choice", "executor-2", "how, 2?"),
    ("tool_invocation", "executor-1", "run, 1?"),
    ("error_recovery", "executor-1", "recover, 1?"),
    ("tool_invocation", "executor-2", "run, 2?"),
]


def test_a_batch_places_each_decision_as_if_the_earlier_ones_were_recorded(store: Trail) -> None:
    one_by_one, strategy_a = _executing_plan(store)
    sequential = [_decision(_record(store, one_by_one, t, thread=run, question=q)) for t, run, q in BATCH]
    batched_plan, strategy_b = _executing_plan(store)
    proposals = [
        (propose(tool_input(t, question=q), plan_id=batched_plan.plan_id, snapshot=actor_snapshot(run)), None)
        for t, run, q in BATCH
    ]

    batched = [_decision(o) for o in record_decisions(store, proposals, principal=LOCAL)]

    def shape(decisions: list[Decision], strategy: Decision) -> list[tuple[str, int | None, int | None]]:
        by_id = {d.decision_id: d for d in decisions} | {strategy.decision_id: strategy}
        return [(d.decision_type.value, d.sequence_number, by_id[d.parent_decision_id].sequence_number) for d in decisions]  # type: ignore[index]

    assert shape(batched, strategy_b) == shape(sequential, strategy_a)
    assert [d.sequence_number for d in batched] == [2, 3, 4, 5, 6]
    assert reading.list_decisions(store, batched_plan.plan_id, principal=LOCAL)[2:] == batched


def test_a_key_twice_in_one_batch_records_once(store: Trail) -> None:
    plan, _ = _executing_plan(store)
    item = propose(tool_input("implementation_choice"), plan_id=plan.plan_id, snapshot=actor_snapshot("executor-1"))

    first, second = record_decisions(store, [(item, None), (item, None)], principal=LOCAL)

    assert first == second
    assert len(reading.list_decisions(store, plan.plan_id, principal=LOCAL)) == 3


def test_a_retried_batch_is_answered_with_what_it_recorded_in_as_many_round_trips_at_any_size(store: Trail, graph: Graph) -> None:
    trips = []
    for size in (3, 30):
        plan, _ = _executing_plan(store)
        items = [
            (
                propose(
                    tool_input("implementation_choice", question=f"how {i}?"), plan_id=plan.plan_id, snapshot=actor_snapshot("e")
                ),
                None,
            )
            for i in range(size)
        ]
        first = record_decisions(store, items, principal=LOCAL)
        retrying = Trail.on(graph)

        again = record_decisions(retrying, items, principal=LOCAL)

        assert again == first
        trips.append(retrying.database.round_trips)
    # The placement read, the commit and one read of what the keys recorded: not one per item.
    assert trips[0] == trips[1]


def test_a_batch_held_for_review_writes_every_review_with_its_own_context_in_one_statement(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    from decisiontrail.graphdb import reviews as review_store

    statements: list[str] = []
    named = review_store.query
    monkeypatch.setattr(review_store, "query", lambda name: statements.append(name) or named(name))
    plan, _ = _plan(store, edit_code=1.0)  # every Strategize proposal below certainty waits for a reviewer
    texts = [f"context {i}" if i % 3 else None for i in range(12)]
    items = [
        (
            propose(
                tool_input("strategy_choice", question=f"which {i}?", confidence_score=0.5),
                plan_id=plan.plan_id,
                snapshot=actor_snapshot("s", text or f"elsewhere {i}"),
            ),
            None if text is None else CapturedContext(text),
        )
        for i, text in enumerate(texts)
    ]

    held = record_decisions(store, items, principal=LOCAL)

    assert all(isinstance(r, Review) and r.status is ReviewStatus.PENDING for r in held)
    stored = graph.driver.execute_query(
        "MATCH (r:Review {plan_id: $plan_id}) OPTIONAL MATCH (r)-[:CAPTURED]->(c:Context) "
        "RETURN r.review_id AS review, c.content AS content",
        plan_id=plan.plan_id,
        database_=graph.database,
    ).records
    assert {r["review"]: r["content"] for r in stored} == {r.review_id: t for r, t in zip(held, texts, strict=True)}  # type: ignore[union-attr]
    assert statements.count("review/create_reviews") == 1


def test_one_refused_proposal_refuses_the_batch_and_nothing_is_written(store: Trail, graph: Graph) -> None:
    plan, _ = _executing_plan(store)
    good = propose(tool_input("implementation_choice"), plan_id=plan.plan_id, snapshot=actor_snapshot("executor-1"))
    bad = propose(
        tool_input("tool_invocation", parent_decision_id=new_ulid()), plan_id=plan.plan_id, snapshot=actor_snapshot("x")
    )
    before = count_graph(graph)

    with pytest.raises(NotFound):
        record_decisions(store, [(good, None), (bad, None)], principal=LOCAL)

    assert count_graph(graph) == before


def test_a_batch_reads_each_recordings_facts_as_it_would_alone(store: Trail, graph: Graph) -> None:
    # The placement read takes each parent's facts once for the batch; each recording must still
    # be judged by its own parent's.
    plan, _ = _executing_plan(store)
    other_plan, _ = _executing_plan(store)
    replaced = _decision(_record(store, plan, "implementation_choice", question="replaced?"))
    successor = _decision(_record(store, plan, "implementation_choice", question="successor?"))
    correction_service.supersede(store, replaced.decision_id, successor.decision_id, principal=LOCAL)
    elsewhere = _decision(_record(store, other_plan, "implementation_choice", question="elsewhere?"))
    parents = [successor.decision_id, replaced.decision_id, None, elsewhere.decision_id, new_ulid(), successor.decision_id]
    recordings = [
        Recording.of(
            propose(
                tool_input("tool_invocation", question=f"run {i}?", **({"parent_decision_id": parent} if parent else {})),
                plan_id=plan.plan_id,
                snapshot=actor_snapshot("x"),
            )
        )
        for i, parent in enumerate(parents)
    ]

    with graph.driver.session(database=graph.database) as session, session.begin_transaction() as tx:
        batch = decisions.read_placements(tx, recordings)
        alone = [decisions.read_placements(tx, [recording])[0] for recording in recordings]
        tx.rollback()

    assert batch == alone
    assert [(f["parent_exists"], f["parent_superseded"], f["parent_plan_id"]) for f in batch] == [
        (True, False, plan.plan_id),
        (True, True, plan.plan_id),
        (False, False, None),
        (True, False, other_plan.plan_id),
        (False, False, None),
        (True, False, plan.plan_id),
    ]
    # The latest current implementation_choice; none was made in the recording's own run ("x").
    assert (batch[2]["latest_of_parent_types"], batch[2]["latest_of_parent_types_in_run"]) == (successor.decision_id, None)


def test_a_batch_of_a_thousand_is_recorded_and_one_more_is_refused_whole(store: Trail, graph: Graph) -> None:
    plan, _ = _executing_plan(store)

    def batch(n: int) -> list[tuple[Proposal, None]]:
        return [
            (
                propose(tool_input("implementation_choice", question=f"q{i}?"), plan_id=plan.plan_id, snapshot=actor_snapshot()),
                None,
            )
            for i in range(n)
        ]

    assert len(record_decisions(store, batch(MAX_BATCH), principal=LOCAL)) == MAX_BATCH == 1000
    before = count_graph(graph)
    with pytest.raises(ValidationFailed) as refused:
        record_decisions(store, batch(MAX_BATCH + 1), principal=LOCAL)
    assert refused.value.field == "inputs" and count_graph(graph) == before


def _sequence_order_violations(graph: Graph, plan_id: str) -> list[str]:
    from decisiontrail.checks.validation import check_sequence_order
    from decisiontrail.domain.vocabulary import LoadScope
    from decisiontrail.graphdb.loading import load_graph

    return [v.message for v in check_sequence_order(load_graph(graph, LoadScope.PLAN, plan_id, progress=False))]


def test_a_resolved_review_is_created_when_resolved_after_what_was_recorded_meanwhile(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store, edit_code=0.9)
    review = _record(store, plan, "strategy_choice", confidence_score=0.5)
    meanwhile = _decision(_record(store, plan, "strategy_choice", question="Which store?", confidence_score=0.95))

    _, resolved = resolve_review(store, review.review_id, ReviewAction.APPROVE, principal=LOCAL)

    assert (meanwhile.sequence_number, resolved.sequence_number) == (1, 2)
    assert resolved.created_at >= meanwhile.created_at
    assert _sequence_order_violations(graph, plan.plan_id) == []


def test_creation_times_follow_sequence_numbers_under_concurrent_actors(store: Trail, graph: Graph) -> None:
    plan, _ = _plan(store)
    writers, per_writer = 4, 10

    def write(i: int) -> None:
        for n in range(per_writer):
            _record(store, plan, "resource_selection", thread=f"actor-{i}", question=f"resource {i}.{n}?")

    assert at_once(*(partial(write, i) for i in range(writers))) == [None] * writers
    assert _sequence_order_violations(graph, plan.plan_id) == []
