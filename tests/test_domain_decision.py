"""The Decision record's validation rules (decision-model-reference "Validation Rules", ADR-007)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from factories import decision, snapshot
from pydantic import ValidationError

from decisiontrail.domain import ContextSnapshot, Decision, DecisionType, Phase, new_ulid
from decisiontrail.domain.decision import PHASES_BY_TYPE, partial_decision
from decisiontrail.exceptions import ValidationFailed, validation_failed

PLAN = new_ulid()
PARENT = new_ulid()
HASH = hashlib.sha256(b"context").hexdigest()


def child(**fields: Any) -> Decision:
    """A valid non-root decision, so parent_decision_id may be set."""
    plan_id = fields.pop("plan_id", PLAN)
    decision_type = fields.pop("decision_type", DecisionType.STRATEGY_CHOICE)
    return decision(plan_id, decision_type, fields.pop("parent_decision_id", PARENT), **fields)


# ULID fields


ULID_FIELDS: list[tuple[str, dict[str, Any]]] = [
    ("decision_id", {}),
    ("plan_id", {}),
    ("parent_decision_id", {}),
    ("corrects_decision_id", {"is_correction": True}),
    ("superseded_by", {}),
]


@pytest.mark.parametrize(("field", "extra"), ULID_FIELDS)
def test_ulid_field_accepts_ulid_and_normalises_case(field: str, extra: dict[str, Any]) -> None:
    value = new_ulid()
    record = child(**{field: value.lower(), **extra})
    assert getattr(record, field) == value


@pytest.mark.parametrize(("field", "extra"), ULID_FIELDS)
@pytest.mark.parametrize("bad", ["not-a-ulid", "8" + new_ulid()[1:], new_ulid()[:-1] + "U"])
def test_ulid_field_rejects_non_ulid(field: str, extra: dict[str, Any], bad: str) -> None:
    with pytest.raises(ValidationError, match=rf"{field}\n.*must be a ULID"):
        child(**{field: bad, **extra})


def test_depends_on_accepts_ulids() -> None:
    first, second = new_ulid(), new_ulid()
    assert child(depends_on=[first.lower(), second]).depends_on == (first, second)


def test_depends_on_rejects_non_ulid_item() -> None:
    with pytest.raises(ValidationError, match=r"depends_on\.1\n.*must be a ULID"):
        child(depends_on=[new_ulid(), "nope"])


def test_depends_on_rejects_duplicates() -> None:
    dependency = new_ulid()
    with pytest.raises(ValidationError, match=r"depends_on\n.*same decision more than once"):
        child(depends_on=[dependency, dependency])


def test_depends_on_duplicates_are_found_after_normalising_case() -> None:
    dependency = new_ulid()
    with pytest.raises(ValidationError, match="same decision more than once"):
        child(depends_on=[dependency, dependency.lower()])


# Content


@pytest.mark.parametrize("field", ["question", "chosen_option"])
def test_content_field_accepts_text(field: str) -> None:
    assert getattr(child(**{field: " x "}), field) == " x "


@pytest.mark.parametrize("field", ["question", "chosen_option"])
@pytest.mark.parametrize("blank", ["", " ", "\t\n "])
def test_content_field_rejects_empty_or_whitespace(field: str, blank: str) -> None:
    with pytest.raises(ValidationError, match=rf"{field}\n.*must not be empty or only whitespace"):
        child(**{field: blank})


@pytest.mark.parametrize("score", [0, 0.0, 0.5, 1, 1.0, None])
def test_confidence_score_accepts_unit_interval_and_none(score: float | None) -> None:
    assert child(confidence_score=score).confidence_score == score


@pytest.mark.parametrize("score", [-0.01, 1.01, float("nan"), float("inf"), -float("inf")])
def test_confidence_score_rejects_outside_unit_interval(score: float) -> None:
    with pytest.raises(ValidationError, match="confidence_score"):
        child(confidence_score=score)


def test_sequence_number_rejects_negative() -> None:
    assert child(sequence_number=0).sequence_number == 0
    with pytest.raises(ValidationError, match="sequence_number"):
        child(sequence_number=-1)


# Cross-field rules


def test_prompt_definition_accepted_without_parent() -> None:
    root = decision(PLAN, DecisionType.PROMPT_DEFINITION)
    assert root.parent_decision_id is None


def test_prompt_definition_rejected_with_parent() -> None:
    with pytest.raises(ValidationError, match="parent_decision_id: a prompt_definition is the root"):
        decision(PLAN, DecisionType.PROMPT_DEFINITION, PARENT)


def test_correction_with_both_flag_and_target_accepted() -> None:
    corrected = new_ulid()
    record = child(is_correction=True, corrects_decision_id=corrected, correction_reason="wrong")
    assert record.is_correction
    assert record.corrects_decision_id == corrected


def test_neither_correction_flag_nor_target_accepted() -> None:
    record = child()
    assert not record.is_correction
    assert record.corrects_decision_id is None


def test_correction_flag_without_target_rejected() -> None:
    with pytest.raises(ValidationError, match="corrects_decision_id: a correction .* must name the decision"):
        child(is_correction=True)


def test_correction_target_without_flag_rejected() -> None:
    with pytest.raises(ValidationError, match="is_correction: must be True when corrects_decision_id is set"):
        child(corrects_decision_id=new_ulid())


def test_decision_cannot_correct_itself() -> None:
    own = new_ulid()
    with pytest.raises(ValidationError, match="corrects_decision_id: a decision cannot correct itself"):
        child(decision_id=own, is_correction=True, corrects_decision_id=own.lower())


def test_decision_cannot_be_its_own_parent() -> None:
    own = new_ulid()
    with pytest.raises(ValidationError, match="parent_decision_id: a decision cannot be its own parent"):
        decision(PLAN, DecisionType.STRATEGY_CHOICE, own.lower(), decision_id=own)


def test_decision_cannot_depend_on_itself() -> None:
    own = new_ulid()
    with pytest.raises(ValidationError, match="depends_on: a decision cannot depend on itself"):
        child(decision_id=own, depends_on=[new_ulid(), own])


# Phases (ADR-007's phase column)

SINGLE_PHASE = {
    DecisionType.PROMPT_DEFINITION: Phase.STRATEGIZE,
    DecisionType.INVARIANT_ENFORCED: Phase.STRATEGIZE,
    DecisionType.STRATEGY_CHOICE: Phase.STRATEGIZE,
    DecisionType.IMPLEMENTATION_CHOICE: Phase.EXECUTE,
    DecisionType.SUBPLAN_SPAWN: Phase.STRATEGIZE,
    DecisionType.SUBPLAN_PARALLEL_SPAWN: Phase.STRATEGIZE,
    DecisionType.TOOL_INVOCATION: Phase.EXECUTE,
    DecisionType.ERROR_RECOVERY: Phase.EXECUTE,
    DecisionType.VALIDATION_RESPONSE: Phase.EXECUTE,
}


def typed(decision_type: DecisionType, **fields: Any) -> Decision:
    parent = None if decision_type is DecisionType.PROMPT_DEFINITION else PARENT
    return decision(PLAN, decision_type, parent, **fields)


@pytest.mark.parametrize("decision_type", list(DecisionType))
def test_phase_defaults_to_first_phase_of_type(decision_type: DecisionType) -> None:
    assert typed(decision_type).phase is PHASES_BY_TYPE[decision_type][0]


@pytest.mark.parametrize(("decision_type", "phase"), SINGLE_PHASE.items())
def test_single_phase_type_defaults_to_and_accepts_its_phase(decision_type: DecisionType, phase: Phase) -> None:
    assert typed(decision_type).phase is phase
    assert typed(decision_type, phase=phase.value).phase is phase


@pytest.mark.parametrize(
    ("decision_type", "phase"),
    [(t, p) for t, allowed in SINGLE_PHASE.items() for p in Phase if p is not allowed],
)
def test_single_phase_type_rejects_other_phases(decision_type: DecisionType, phase: Phase) -> None:
    expected = rf"phase: a {decision_type.value} decision is made in .*not {phase.value}"
    with pytest.raises(ValidationError, match=expected):
        typed(decision_type, phase=phase)


def test_tool_invocation_in_strategize_rejected() -> None:
    with pytest.raises(ValidationError, match="phase: a tool_invocation decision is made in execute, not strategize"):
        typed(DecisionType.TOOL_INVOCATION, phase=Phase.STRATEGIZE)


@pytest.mark.parametrize("phase", [Phase.STRATEGIZE, Phase.EXECUTE])
def test_resource_selection_accepts_strategize_and_execute(phase: Phase) -> None:
    assert typed(DecisionType.RESOURCE_SELECTION, phase=phase).phase is phase


def test_resource_selection_rejects_apply() -> None:
    with pytest.raises(ValidationError, match="phase: a resource_selection decision is made in strategize, execute"):
        typed(DecisionType.RESOURCE_SELECTION, phase=Phase.APPLY)


@pytest.mark.parametrize("phase", list(Phase))
def test_user_intervention_accepts_every_phase(phase: Phase) -> None:
    assert typed(DecisionType.USER_INTERVENTION, phase=phase).phase is phase


def test_unknown_phase_rejected() -> None:
    with pytest.raises(ValidationError, match="phase"):
        child(phase="review")


# Context snapshot


def test_hot_context_hash_accepts_lower_case_sha256() -> None:
    assert ContextSnapshot(hot_context_hash=HASH, hot_context_ref="ref").hot_context_hash == HASH


@pytest.mark.parametrize("bad", [HASH.upper(), HASH[:63], HASH + "0", "g" * 64, HASH + "\n", ""])
def test_hot_context_hash_rejects_anything_else(bad: str) -> None:
    with pytest.raises(ValidationError, match="hot_context_hash"):
        ContextSnapshot(hot_context_hash=bad, hot_context_ref="ref")


def test_hot_context_ref_rejects_blank() -> None:
    with pytest.raises(ValidationError, match="hot_context_ref"):
        ContextSnapshot(hot_context_hash=HASH, hot_context_ref="  ")


# Timestamps


def test_created_at_defaults_to_utc_now() -> None:
    before = datetime.now(UTC)
    created = child().created_at
    assert created.tzinfo is UTC
    assert before <= created <= datetime.now(UTC)


def test_naive_created_at_rejected() -> None:
    with pytest.raises(ValidationError, match=r"created_at\n.*timezone"):
        child(created_at=datetime(2024, 5, 1, 12, 0))


def test_aware_created_at_converted_to_utc() -> None:
    local = datetime(2024, 5, 1, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    created = child(created_at=local).created_at
    assert created.utcoffset() == timedelta(0)
    assert created == local
    assert (created.hour, created.minute) == (12, 30)


# Types, shape, immutability


def test_there_are_eleven_decision_types_named_as_in_the_spec() -> None:
    assert {t.value for t in DecisionType} == {
        "prompt_definition",
        "invariant_enforced",
        "strategy_choice",
        "implementation_choice",
        "resource_selection",
        "subplan_spawn",
        "subplan_parallel_spawn",
        "tool_invocation",
        "error_recovery",
        "validation_response",
        "user_intervention",
    }
    assert len(DecisionType) == 11


def test_decision_type_accepted_by_name() -> None:
    record = Decision(
        plan_id=PLAN,
        parent_decision_id=PARENT,
        decision_type="error_recovery",
        question="q",
        chosen_option="o",
        context_snapshot=snapshot(),
    )
    assert record.decision_type is DecisionType.ERROR_RECOVERY
    assert record.phase is Phase.EXECUTE


def test_unknown_decision_type_rejected() -> None:
    with pytest.raises(ValidationError, match="decision_type"):
        Decision(
            plan_id=PLAN,
            parent_decision_id=PARENT,
            decision_type="gut_feeling",
            question="q",
            chosen_option="o",
            context_snapshot=snapshot(),
        )


def test_unknown_field_rejected() -> None:
    with pytest.raises(ValidationError, match=r"mood\n.*Extra inputs are not permitted"):
        child(mood="optimistic")


def test_decision_is_frozen() -> None:
    record = child()
    with pytest.raises(ValidationError, match="frozen"):
        record.chosen_option = "another"  # type: ignore[misc]
    assert record.chosen_option == "this one"


def test_context_snapshot_is_frozen() -> None:
    with pytest.raises(ValidationError, match="frozen"):
        snapshot().hot_context_ref = "elsewhere"  # type: ignore[misc]


def test_is_current_until_superseded() -> None:
    assert child().is_current
    assert not child(superseded_by=new_ulid()).is_current


# validation_failed


def validation_error(**fields: Any) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        child(**fields)
    return caught.value


def test_validation_failed_names_bad_field() -> None:
    failure = validation_failed(validation_error(confidence_score=1.5))
    assert isinstance(failure, ValidationFailed)
    assert failure.code == "VALIDATION_FAILED"
    assert failure.field == "confidence_score"
    assert failure.message.startswith("confidence_score: ")
    assert "Value error" not in failure.message


def test_validation_failed_names_field_of_cross_field_rule() -> None:
    with pytest.raises(ValidationError) as caught:
        decision(PLAN, DecisionType.PROMPT_DEFINITION, PARENT)
    failure = validation_failed(caught.value)
    assert failure.field == "parent_decision_id"
    assert failure.message == "parent_decision_id: a prompt_definition is the root of its plan and has no parent"


def test_validation_failed_names_position_in_list() -> None:
    failure = validation_failed(validation_error(depends_on=[new_ulid(), "bad"]))
    assert failure.field == "depends_on.1"


def test_validation_failed_counts_further_problems() -> None:
    failure = validation_failed(validation_error(question="", chosen_option="", confidence_score=2))
    assert failure.field == "question"
    assert failure.message.endswith("(and 2 more problems)")


def test_validation_failed_of_plain_error_has_no_field() -> None:
    failure = validation_failed(ValueError("broken"))
    assert failure.field is None
    assert failure.message == "broken"


def test_confidence_score_nan_is_named_as_nan() -> None:
    with pytest.raises(ValidationError, match="not NaN"):
        child(confidence_score=float("nan"))


def test_a_partial_decision_is_what_pydantic_copying_the_template_with_its_values_gives() -> None:
    values: dict[str, Any] = {"decision_id": new_ulid(), "plan_id": "P1", "sequence_number": 3, "depends_on": ("D0",)}

    partial = partial_decision(**values)
    copied = Decision.model_construct(created_at=None).model_copy(update=values)

    assert partial == copied and partial.__pydantic_fields_set__ == copied.__pydantic_fields_set__ == {*values, "created_at"}
    assert partial.created_at is None and partial.is_current and partial.superseded_by is None
    # Built without pydantic's copy: right only while a Decision has no private attributes and no extra fields.
    assert Decision.__private_attributes__ == {} and Decision.model_config.get("extra") == "forbid"
    assert partial_decision(plan_id="P2").plan_id == "P2" and partial.plan_id == "P1"  # each its own fields
