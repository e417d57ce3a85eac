"""Recording a decision on an actor's behalf: the one function behind the LangGraph tool and the API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jsonschema
from pydantic import ValidationError

from decisiontrail.domain import ContextSnapshot, Decision, DecisionType
from decisiontrail.domain.recording import (
    ACTOR_DECISION_TYPES,
    CapturedContext,
    Proposal,
    Review,
    check_actor_may_record,
    check_own_context_ref,
    check_snapshot_for_actor,
    derive_idempotency_key,
)
from decisiontrail.exceptions import ValidationFailed, validation_failed
from decisiontrail.graphdb import DecisionStore

TOOL_NAME = "record_decision"
"""ADR-033 registers the tool as ``local/record-decision``; model APIs allow no ``/`` in a tool name."""

TOOL_DESCRIPTION = (
    "Record a decision made during plan reasoning. Call this tool whenever you identify a choice "
    "point — a question where multiple valid approaches exist and a specific option must be "
    "selected to proceed."
)

# ADR-033's input and output schema, verbatim.
RECORD_DECISION_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision_type": {"type": "string", "enum": [t.value for t in ACTOR_DECISION_TYPES]},
        "question": {"type": "string", "description": "What question or ambiguity is being resolved"},
        "chosen_option": {"type": "string", "description": "The selected approach or answer"},
        "alternatives_considered": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Other options that were evaluated and rejected",
        },
        "confidence_score": {
            "type": "number",
            "minimum": 0.0,
            "maximum": 1.0,
            "description": "How confident the actor is in this choice (0.0-1.0)",
        },
        "rationale": {"type": "string", "description": "Why this option was chosen over the alternatives"},
        "parent_decision_id": {
            "type": "string",
            "description": "ULID of the parent decision in the tree structure. If omitted, the system "
            "infers the parent from the current decision context.",
        },
    },
    "required": ["decision_type", "question", "chosen_option", "rationale"],
}

RECORD_DECISION_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decision_id": {"type": "string", "description": "The ULID of the created decision record"}},
}

_VALIDATOR = jsonschema.Draft202012Validator(RECORD_DECISION_INPUT_SCHEMA)


def validate_arguments(arguments: Mapping[str, Any]) -> None:
    """Refuse tool input that does not match ADR-033's schema, naming the field."""
    errors = sorted(_VALIDATOR.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    if error.validator == "required":
        field = str(error.message).split("'")[1]
        message = f"{field}: is required"
    else:
        field = ".".join(str(p) for p in error.absolute_path) or "input"
        message = f"{field}: {error.message}"
    if field == "decision_type" and isinstance(arguments.get("decision_type"), str):
        check_actor_may_record(_known_type(arguments["decision_type"]))
    raise ValidationFailed(message, field=field)


def _known_type(value: str) -> DecisionType:
    try:
        return DecisionType(value)
    except ValueError:
        allowed = ", ".join(t.value for t in ACTOR_DECISION_TYPES)
        raise ValidationFailed(f"decision_type: {value!r} is not one of {allowed}", field="decision_type") from None


def propose(
    arguments: Mapping[str, Any],
    *,
    plan_id: str,
    snapshot: ContextSnapshot | None,
    idempotency_key: str | None = None,
    depends_on: Sequence[str] = (),
    actor_reasoning: str | None = None,
    step_id: str | None = None,
    artifacts_produced: Sequence[Mapping[str, str]] = (),
) -> Proposal:
    """Validate an actor's record_decision call and make it a Proposal (nothing is written)."""
    validate_arguments(arguments)
    snapshot = check_snapshot_for_actor(snapshot)
    decision_type = DecisionType(arguments["decision_type"])
    check_actor_may_record(decision_type)
    state = snapshot.actor_state_ref
    assert state is not None  # check_snapshot_for_actor guarantees it
    key = idempotency_key or derive_idempotency_key(
        state.thread_id, state.checkpoint_ns, step_id or state.checkpoint_id, decision_type.value, arguments["question"]
    )
    try:
        return Proposal(
            plan_id=plan_id,
            decision_type=decision_type,
            question=arguments["question"],
            chosen_option=arguments["chosen_option"],
            alternatives_considered=tuple(arguments.get("alternatives_considered") or ()),
            confidence_score=arguments.get("confidence_score"),
            rationale=arguments["rationale"],
            parent_decision_id=arguments.get("parent_decision_id"),
            depends_on=tuple(depends_on),
            context_snapshot=snapshot,
            actor_reasoning=actor_reasoning,
            artifacts_produced=tuple(artifacts_produced),  # type: ignore[arg-type]  # validated into ArtifactRef
            idempotency_key=key,
        )
    except ValidationError as e:
        raise validation_failed(e) from e


def record_decision(
    store: DecisionStore,
    arguments: Mapping[str, Any],
    *,
    plan_id: str,
    snapshot: ContextSnapshot | None,
    context: CapturedContext | None = None,
    idempotency_key: str | None = None,
    depends_on: Sequence[str] = (),
    actor_reasoning: str | None = None,
    step_id: str | None = None,
) -> Decision | Review:
    """Record what an actor decided, as ADR-033's record_decision does.

    ``arguments`` is the tool input the actor gave; the rest the runtime captured. Returns
    the persisted Decision, or the pending Review when the plan's automation profile asks a
    person first. The same idempotency key (given, or derived from the actor's thread,
    step and question; ``step_id`` names the step, by default the checkpoint) always returns
    what the first call produced.
    """
    proposal = propose(
        arguments,
        plan_id=plan_id,
        snapshot=snapshot,
        idempotency_key=idempotency_key,
        depends_on=depends_on,
        actor_reasoning=actor_reasoning,
        step_id=step_id,
    )
    return record_proposal(store, proposal, context)


def record_proposal(store: DecisionStore, proposal: Proposal, context: CapturedContext | None = None) -> Decision | Review:
    """One proposal (from ``propose``) with the context captured for it, if any."""
    check_own_context_ref(proposal.context_snapshot.hot_context_ref, context)
    return store.record_proposal(proposal, context=context)


MAX_BATCH = 500


def record_decisions(store: DecisionStore, items: Sequence[tuple[Proposal, CapturedContext | None]]) -> list[Decision | Review]:
    """A batch of proposals (from ``propose``), each with its captured context if any, in one
    transaction: all or none."""
    if len(items) > MAX_BATCH:
        raise ValidationFailed(f"inputs: at most {MAX_BATCH} decisions per batch, got {len(items)}", field="inputs")
    for proposal, context in items:
        check_own_context_ref(proposal.context_snapshot.hot_context_ref, context)
    return store.record_proposals(list(items))
