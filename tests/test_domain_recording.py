"""The recording protocol's pure rules (ADR-033): who records what, in which phase, and when a person decides."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from pydantic import ValidationError
from factories import snapshot

from decisiontrail.domain import CheckpointRef, ContextSnapshot, Decision, DecisionType, Phase, ResourceRef
from decisiontrail.domain.decision import PHASES_BY_TYPE
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.plan import AutomationProfile
from decisiontrail.domain.recording import (
    ACTOR_DECISION_TYPES,
    CapturedContext,
    Proposal,
    Review,
    ReviewAction,
    ReviewStatus,
    check_actor_may_record,
    check_phase_transition,
    check_snapshot_for_actor,
    check_type_in_phase,
    checkpoint_group_for,
    context_hash_of,
    derive_idempotency_key,
    needs_review,
    resolution,
)
from decisiontrail.exceptions import RuleViolation, ValidationFailed

PLAN = new_ulid()
PARENT = new_ulid()

# ADR-033's record_decision input schema, decision_type enum, in its order.
ADR_033_ENUM = [
    "invariant_enforced",
    "strategy_choice",
    "resource_selection",
    "subplan_spawn",
    "subplan_parallel_spawn",
    "implementation_choice",
    "tool_invocation",
    "error_recovery",
    "validation_response",
]
SYSTEM_TYPES = [DecisionType.PROMPT_DEFINITION, DecisionType.USER_INTERVENTION]


def proposal(**fields: Any) -> Proposal:
    values: dict[str, Any] = {
        "plan_id": PLAN,
        "decision_type": DecisionType.STRATEGY_CHOICE,
        "question": "which strategy?",
        "chosen_option": "rewrite",
        "alternatives_considered": ("patch", "leave it"),
        "confidence_score": 0.72,
        "rationale": "the module is beyond patching",
        "context_snapshot": snapshot("strategy"),
        "idempotency_key": "key-1",
    }
    values.update(fields)
    return Proposal(**values)


def review(**fields: Any) -> Review:
    values: dict[str, Any] = {
        "plan_id": PLAN,
        "proposal": proposal(),
        "parent_decision_id": PARENT,
        "phase": Phase.STRATEGIZE,
        "threshold": 0.8,
    }
    values.update(fields)
    return Review(**values)


# A proposal's draft


@pytest.mark.parametrize("decision_type", list(DecisionType))
@pytest.mark.parametrize("parent", [None, PARENT])
def test_draft_is_the_decision_validation_would_build(decision_type: DecisionType, parent: str | None) -> None:
    """``Proposal.draft`` skips validating again; what it builds must be what validating builds."""
    if decision_type is DecisionType.PROMPT_DEFINITION and parent is not None:
        with pytest.raises(ValidationError, match="prompt_definition is the root"):
            proposal(decision_type=decision_type, parent_decision_id=parent).draft()
        return
    asked = proposal(
        decision_type=decision_type,
        parent_decision_id=parent,
        depends_on=(new_ulid(), new_ulid()),
        actor_reasoning="because",
        artifacts_produced=({"artifact_path": "src/a.py", "artifact_type": "file"},),
    )
    draft = asked.draft()
    validated = asked.decision(
        parent_decision_id=asked.parent_decision_id, phase=PHASES_BY_TYPE[decision_type][0], decision_id=draft.decision_id
    )
    assert draft == validated
    assert draft.model_fields_set == validated.model_fields_set
    assert draft == Decision.model_validate(draft.model_dump())
    assert draft.phase is PHASES_BY_TYPE[decision_type][0]
    assert (draft.parent_decision_id, draft.depends_on, draft.created_at) == (parent, asked.depends_on, asked.created_at)
    assert draft.decision_id != asked.draft().decision_id  # a fresh id each time


def test_proposal_refuses_the_same_dependency_twice() -> None:
    dependency = new_ulid()
    with pytest.raises(ValidationError, match=r"depends_on\n.*same decision more than once"):
        proposal(depends_on=(dependency, dependency.lower()))


# Who may record


def test_actor_decision_types_are_adr_033_enum_in_order() -> None:
    assert [t.value for t in ACTOR_DECISION_TYPES] == ADR_033_ENUM


@pytest.mark.parametrize("decision_type", SYSTEM_TYPES)
def test_actor_may_not_record_system_types(decision_type: DecisionType) -> None:
    with pytest.raises(RuleViolation, match=rf"{decision_type.value}.*plan lifecycle engine") as caught:
        check_actor_may_record(decision_type)
    assert caught.value.rule == "system_created_type"


@pytest.mark.parametrize("decision_type", [DecisionType(v) for v in ADR_033_ENUM])
def test_actor_may_record_the_nine(decision_type: DecisionType) -> None:
    check_actor_may_record(decision_type)


# Snapshot


def test_snapshot_for_actor_refuses_missing_snapshot() -> None:
    with pytest.raises(ValidationFailed, match=r"^context_snapshot:") as caught:
        check_snapshot_for_actor(None)
    assert caught.value.field == "context_snapshot"


def test_snapshot_for_actor_refuses_snapshot_without_checkpoint() -> None:
    with pytest.raises(ValidationFailed, match=r"^context_snapshot\.actor_state_ref:") as caught:
        check_snapshot_for_actor(snapshot(checkpoint=False))
    assert caught.value.field == "context_snapshot.actor_state_ref"


def test_snapshot_for_actor_accepts_whole_snapshot() -> None:
    whole = snapshot()
    assert check_snapshot_for_actor(whole) is whole


# Type in phase


@pytest.mark.parametrize("phase", list(Phase))
@pytest.mark.parametrize("decision_type", list(DecisionType))
def test_type_in_phase(decision_type: DecisionType, phase: Phase) -> None:
    if phase is Phase.APPLY:
        with pytest.raises(RuleViolation, match="Apply phase") as caught:
            check_type_in_phase(decision_type, phase)
        assert caught.value.rule == "apply_accepts_no_decisions"
    elif phase in PHASES_BY_TYPE[decision_type]:
        check_type_in_phase(decision_type, phase)
    else:
        with pytest.raises(RuleViolation, match=rf"{decision_type.value}.*in {phase.value}") as caught:
            check_type_in_phase(decision_type, phase)
        assert caught.value.rule == "type_allowed_in_phase"


# Review gating: edit_code in Strategize, execute_command in Execute

# Each phase's profile sets only its own threshold, so the wrong one would never ask for review.
PROFILES = {
    Phase.STRATEGIZE: lambda threshold: AutomationProfile(edit_code=threshold, execute_command=0.0),
    Phase.EXECUTE: lambda threshold: AutomationProfile(execute_command=threshold, edit_code=0.0),
}


@pytest.mark.parametrize("phase", [Phase.STRATEGIZE, Phase.EXECUTE])
@pytest.mark.parametrize(
    ("threshold", "confidence", "expected"),
    [
        (0.0, None, False),
        (0.0, 0.0, False),
        (0.0, 0.5, False),
        (1.0, None, True),
        (1.0, 0.0, True),
        (1.0, 1.0, True),
        (0.8, 0.72, True),
        (0.8, 0.8, False),
        (0.8, 0.95, False),
        (0.8, None, True),
    ],
)
def test_needs_review(phase: Phase, threshold: float, confidence: float | None, expected: bool) -> None:
    assert needs_review(PROFILES[phase](threshold), phase, confidence) is expected


@pytest.mark.parametrize(("phase", "other"), [(Phase.STRATEGIZE, Phase.EXECUTE), (Phase.EXECUTE, Phase.STRATEGIZE)])
def test_needs_review_ignores_the_other_phases_threshold(phase: Phase, other: Phase) -> None:
    profile = PROFILES[other](1.0)
    assert needs_review(profile, phase, 0.5) is False
    assert needs_review(profile, other, 0.5) is True


# Resolution


def test_approve_keeps_the_proposal() -> None:
    pending = review()
    decision, status = resolution(pending, ReviewAction.APPROVE, None)
    assert status is ReviewStatus.APPROVED
    assert decision.chosen_option == "rewrite"
    assert decision.alternatives_considered == ("patch", "leave it")
    assert decision.confidence_score == 0.72
    assert decision.question == "which strategy?"
    assert decision.rationale == "the module is beyond patching"
    assert decision.decision_type is DecisionType.STRATEGY_CHOICE
    assert decision.context_snapshot == pending.proposal.context_snapshot


def test_select_alternative_puts_original_choice_first_among_alternatives() -> None:
    decision, status = resolution(review(), ReviewAction.SELECT_ALTERNATIVE, "leave it")
    assert status is ReviewStatus.ALTERNATIVE_SELECTED
    assert decision.chosen_option == "leave it"
    assert decision.alternatives_considered == ("rewrite", "patch")


def test_custom_puts_original_choice_first_among_alternatives() -> None:
    decision, status = resolution(review(), ReviewAction.CUSTOM, "split the module first")
    assert status is ReviewStatus.CUSTOM
    assert decision.chosen_option == "split the module first"
    assert decision.alternatives_considered == ("rewrite", "patch", "leave it")


def test_select_alternative_refuses_option_not_considered() -> None:
    with pytest.raises(ValidationFailed, match=r"^option: 'rewrite' is not one of the alternatives") as caught:
        resolution(review(), ReviewAction.SELECT_ALTERNATIVE, "rewrite")
    assert caught.value.field == "option"


@pytest.mark.parametrize("action", [ReviewAction.SELECT_ALTERNATIVE, ReviewAction.CUSTOM])
@pytest.mark.parametrize("option", [None, "", "   "])
def test_override_refuses_empty_option(action: ReviewAction, option: str | None) -> None:
    with pytest.raises(ValidationFailed, match=rf"^option: {action.value} needs") as caught:
        resolution(review(), action, option)
    assert caught.value.field == "option"


@pytest.mark.parametrize("status", [s for s in ReviewStatus if s is not ReviewStatus.PENDING])
@pytest.mark.parametrize("action", list(ReviewAction))
def test_resolved_review_cannot_be_resolved_again(status: ReviewStatus, action: ReviewAction) -> None:
    with pytest.raises(RuleViolation, match=rf"already resolved \({status.value}\)") as caught:
        resolution(review(status=status), action, "patch")
    assert caught.value.rule == "review_is_pending"


@pytest.mark.parametrize("action", list(ReviewAction))
@pytest.mark.parametrize(
    ("decision_type", "phase", "parent"),
    [
        (DecisionType.STRATEGY_CHOICE, Phase.STRATEGIZE, PARENT),
        (DecisionType.TOOL_INVOCATION, Phase.EXECUTE, new_ulid()),
        (DecisionType.RESOURCE_SELECTION, Phase.EXECUTE, None),
    ],
)
def test_resolution_keeps_parent_and_phase(
    action: ReviewAction, decision_type: DecisionType, phase: Phase, parent: str | None
) -> None:
    pending = review(proposal=proposal(decision_type=decision_type), phase=phase, parent_decision_id=parent)
    decision, _ = resolution(pending, action, "patch")
    assert decision.parent_decision_id == parent
    assert decision.phase is phase
    assert decision.plan_id == PLAN


# Checkpoint groups: Execute-phase decisions only


def execute_decision(context: ContextSnapshot) -> Decision:
    return Decision(
        plan_id=PLAN,
        parent_decision_id=PARENT,
        decision_type=DecisionType.TOOL_INVOCATION,
        phase=Phase.EXECUTE,
        question="which tool?",
        chosen_option="pytest",
        context_snapshot=context,
    )


def test_checkpoint_group_for_execute_decision() -> None:
    state = CheckpointRef(thread_id="thread-7", checkpoint_ns="child", checkpoint_id=new_ulid())
    context = snapshot().model_copy(
        update={
            "actor_state_ref": state,
            "relevant_resources": (ResourceRef(resource_id="src/app.py", path="main"), ResourceRef(resource_id="README.md")),
        }
    )
    group = checkpoint_group_for(execute_decision(context))
    assert group is not None
    assert (group.thread_id, group.checkpoint_ns, group.checkpoint_id) == ("thread-7", "child", state.checkpoint_id)
    assert group.resources == ("src/app.py:main", "README.md")
    assert group.group_id


def test_checkpoint_group_ids_are_distinct() -> None:
    decision = execute_decision(snapshot())
    first, second = checkpoint_group_for(decision), checkpoint_group_for(decision)
    assert first is not None and second is not None
    assert first.group_id != second.group_id


def test_no_checkpoint_group_in_strategize() -> None:
    decision = Decision(
        plan_id=PLAN,
        parent_decision_id=PARENT,
        decision_type=DecisionType.RESOURCE_SELECTION,
        phase=Phase.STRATEGIZE,
        question="which file?",
        chosen_option="src/app.py",
        context_snapshot=snapshot(),
    )
    assert decision.context_snapshot.actor_state_ref is not None
    assert checkpoint_group_for(decision) is None


def test_no_checkpoint_group_without_actor_state() -> None:
    assert checkpoint_group_for(execute_decision(snapshot(checkpoint=False))) is None


# Phase transitions

ALLOWED_TRANSITIONS = {
    (Phase.STRATEGIZE, Phase.EXECUTE),
    (Phase.EXECUTE, Phase.APPLY),
    (Phase.EXECUTE, Phase.STRATEGIZE),
}
ALL_TRANSITIONS = [(current, target) for current in Phase for target in Phase]


@pytest.mark.parametrize(("current", "target"), sorted(ALLOWED_TRANSITIONS))
def test_phase_transition_allowed(current: Phase, target: Phase) -> None:
    check_phase_transition(current, target, 0)


@pytest.mark.parametrize(("current", "target"), [t for t in ALL_TRANSITIONS if t not in ALLOWED_TRANSITIONS])
def test_phase_transition_refused(current: Phase, target: Phase) -> None:
    with pytest.raises(RuleViolation, match=rf"not {current.value} -> {target.value}") as caught:
        check_phase_transition(current, target, 0)
    assert caught.value.rule == "phase_transition"


@pytest.mark.parametrize(("current", "target"), sorted(ALLOWED_TRANSITIONS))
@pytest.mark.parametrize("pending", [1, 3])
def test_phase_transition_refused_with_pending_reviews(current: Phase, target: Phase, pending: int) -> None:
    with pytest.raises(RuleViolation, match=rf"{pending} pending review") as caught:
        check_phase_transition(current, target, pending)
    assert caught.value.rule == "no_pending_reviews"


# Idempotency keys

KEY_INPUTS = ("thread-1", "", "checkpoint-1", "strategy_choice", "which strategy?")


def test_derived_idempotency_key_is_deterministic() -> None:
    assert derive_idempotency_key(*KEY_INPUTS) == derive_idempotency_key(*KEY_INPUTS)


@pytest.mark.parametrize("position", range(len(KEY_INPUTS)))
def test_derived_idempotency_key_differs_when_any_input_differs(position: int) -> None:
    changed = list(KEY_INPUTS)
    changed[position] += "x"
    assert derive_idempotency_key(*changed) != derive_idempotency_key(*KEY_INPUTS)


def test_derived_idempotency_key_keeps_inputs_apart() -> None:
    assert derive_idempotency_key("ab", "c", "d", "e", "f") != derive_idempotency_key("a", "bc", "d", "e", "f")


# Captured context


def test_captured_context_hash_is_sha256_of_content() -> None:
    content = '{"messages": ["héllo"]}'
    assert CapturedContext(content).context_hash == hashlib.sha256(content.encode("utf-8")).hexdigest()


def test_captured_context_ref_round_trips() -> None:
    captured = CapturedContext("the whole context")
    assert context_hash_of(captured.ref) == captured.context_hash


def test_context_hash_of_refuses_foreign_ref() -> None:
    foreign = snapshot().hot_context_ref
    with pytest.raises(ValidationFailed, match=r"^hot_context_ref: .* is not a decisiontrail context reference") as caught:
        context_hash_of(foreign)
    assert caught.value.field == "hot_context_ref"


def test_custom_guidance_equal_to_the_actors_choice_is_not_its_own_alternative() -> None:
    decision, status = resolution(review(), ReviewAction.CUSTOM, "  rewrite ")

    assert status is ReviewStatus.CUSTOM
    assert decision.chosen_option == "rewrite"
    assert decision.alternatives_considered == ("patch", "leave it")


def test_idempotency_key_parts_cannot_run_into_each_other() -> None:
    assert derive_idempotency_key("a\x1fb", "", "c", "t", "q") != derive_idempotency_key("a", "b", "c", "t", "q")
    assert derive_idempotency_key("a", "b|c", "d", "t", "q") != derive_idempotency_key("a", "b", "c|d", "t", "q")
