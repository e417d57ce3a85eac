"""Mapping between domain records and Neo4j properties.

Neo4j properties hold scalars and lists of scalars, so nested parts (resources, artifacts,
plan arguments) are stored as JSON text and the checkpoint reference as three properties.
Ids of related records are never stored as lists: they are relationships, read back here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from neo4j.time import DateTime

from decisiontrail.domain.correction import CorrectionAttempt, FrontierPoint, ImpactedDecision
from decisiontrail.domain.decision import partial_decision
from decisiontrail.domain.recording import Proposal, Review
from decisiontrail.domain import (
    ArtifactRef,
    AutomationProfile,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Invariant,
    Phase,
    Plan,
    ResourceRef,
)


def decision_properties(
    decision: Decision, idempotency_key: str | None = None, request_digest: str | None = None
) -> dict[str, Any]:
    """The Decision node's own properties (None values are simply not stored)."""
    snapshot = decision.context_snapshot
    state = snapshot.actor_state_ref
    return {
        "decision_id": decision.decision_id,
        "plan_id": decision.plan_id,
        "sequence_number": decision.sequence_number,
        "decision_type": decision.decision_type.value,
        "phase": decision.phase.value,
        "question": decision.question,
        "chosen_option": decision.chosen_option,
        "alternatives_considered": list(decision.alternatives_considered),
        "confidence_score": decision.confidence_score,
        "hot_context_hash": snapshot.hot_context_hash,
        "hot_context_ref": snapshot.hot_context_ref,
        "relevant_resources": json_text([r.model_dump() for r in snapshot.relevant_resources]),
        "actor_state_thread_id": state.thread_id if state else None,
        "actor_state_checkpoint_ns": state.checkpoint_ns if state else None,
        "actor_state_checkpoint_id": state.checkpoint_id if state else None,
        "rationale": decision.rationale,
        "actor_reasoning": decision.actor_reasoning,
        "artifacts_produced": json_text([artifact_json(a) for a in decision.artifacts_produced]),
        "created_at": decision.created_at,
        "is_correction": decision.is_correction,
        "correction_reason": decision.correction_reason,
        "idempotency_key": idempotency_key,
        "request_digest": request_digest,
    }


def decision_from_record(record: Mapping[str, Any]) -> Decision:
    """Rebuild a Decision from a row of ``decision/get_decisions`` or ``list_plan_decisions``.

    Built without validation, as the outline below is: the store validated every value when it
    wrote it, and validating again (ULIDs, hashes, nested models) was most of the time a read of
    many decisions took. Enums and tuples are made here, so the record is the one validation
    would have built.
    """
    props = record["decision"]
    superseded_at = props.get("superseded_at")
    return Decision.model_construct(
        decision_id=props["decision_id"],
        plan_id=props["plan_id"],
        parent_decision_id=record["parent_decision_id"],
        sequence_number=props["sequence_number"],
        decision_type=DecisionType(props["decision_type"]),
        phase=Phase(props["phase"]),
        question=props["question"],
        chosen_option=props["chosen_option"],
        alternatives_considered=tuple(props.get("alternatives_considered") or ()),
        confidence_score=props.get("confidence_score"),
        context_snapshot=ContextSnapshot.model_construct(
            hot_context_hash=props["hot_context_hash"],
            hot_context_ref=props["hot_context_ref"],
            relevant_resources=tuple(ResourceRef.model_construct(**r) for r in json.loads(props["relevant_resources"])),
            actor_state_ref=_checkpoint(props),
        ),
        rationale=props.get("rationale") or "",
        actor_reasoning=props.get("actor_reasoning"),
        depends_on=tuple(decision_id for _, decision_id, _ in sorted(record["depends_on"])),
        dependencies_added=_dependencies_added(record["depends_on"]),
        downstream_decision_ids=tuple(sorted(record["downstream_decision_ids"])),
        downstream_plan_ids=tuple(sorted(record["downstream_plan_ids"])),
        artifacts_produced=tuple(_artifact(a) for a in json.loads(props["artifacts_produced"])),
        created_at=native_datetime(props["created_at"]),
        is_correction=props.get("is_correction", False),
        corrects_decision_id=record["corrects_decision_id"],
        correction_reason=props.get("correction_reason"),
        superseded_by=record["superseded_by"],
        superseded_at=native_datetime(superseded_at) if superseded_at is not None else None,
    )


def _dependencies_added(depends_on: Sequence[Sequence[Any]]) -> tuple[tuple[str, datetime], ...]:
    """The dependencies added after their decision was recorded, with when (``[ordinal, id, at]`` rows; at null for the others)."""
    return tuple((decision_id, native_datetime(at)) for _, decision_id, at in depends_on if at is not None)


def artifact_json(artifact: ArtifactRef) -> dict[str, Any]:
    """An artifact as its decision's ``artifacts_produced`` JSON holds it: the date an attached one
    carries as ISO 8601 text, none for one recorded with its decision."""
    stored = {"artifact_path": artifact.artifact_path, "artifact_type": artifact.artifact_type, "digest": artifact.digest}
    if artifact.attached_at is not None:
        stored["attached_at"] = artifact.attached_at.isoformat()
    return stored


def _artifact(stored: Mapping[str, Any]) -> ArtifactRef:
    # One stored before digests (or dates) existed gets the default (None).
    if (attached_at := stored.get("attached_at")) is not None:
        return ArtifactRef.model_construct(**{**stored, "attached_at": datetime.fromisoformat(attached_at)})
    return ArtifactRef.model_construct(**stored)


# By stored value: a dict lookup, where calling the enum costs several (an outline is read per decision of a plan).
_DECISION_TYPES: Final = {t.value: t for t in DecisionType}
_PHASES: Final = {p.value: p for p in Phase}


def decision_outline_from_record(
    record: Sequence[Any], plan_id: str, created_at: Any = None, superseded_at: Any = None
) -> Decision:
    """A decision of ``plan_id`` as ``decision/plan_outline`` returns it (a list of its id, sequence
    number, type, phase, parent, dependencies and successor), and (in an as-of read only) its times.

    Built without validation (the store validated the values when it wrote them) and partial:
    the content fields are missing, the times None outside an as-of read, and the rest hold
    their defaults, so only the fields named here may be read. The GraphQL tree serves a
    selection from outlines only when it asks for no more (``schema.selection.OUTLINE``).
    """
    decision_id, sequence_number, decision_type, phase, parent_decision_id, depends_on, superseded_by = record
    values: dict[str, Any] = {
        "decision_id": decision_id,
        "plan_id": plan_id,
        "parent_decision_id": parent_decision_id,
        "sequence_number": sequence_number,
        "decision_type": _DECISION_TYPES[decision_type],
        "phase": _PHASES[phase],
        "depends_on": tuple(dependency_id for _, dependency_id, _ in sorted(depends_on)) if depends_on else (),
        "dependencies_added": _dependencies_added(depends_on) if depends_on else (),
        "superseded_by": superseded_by,
        # None, not a made-up time, unless the read was as of a moment (and given, created_at
        # spares model_construct its default factory: a third of the time of 1,000 outlines).
        "created_at": native_datetime(created_at) if created_at is not None else None,
        "superseded_at": native_datetime(superseded_at) if superseded_at is not None else None,
    }
    return partial_decision(**values)


def review_properties(review: Review) -> dict[str, Any]:
    """The Review node's properties; the proposal is kept whole, as JSON."""
    return {
        "review_id": review.review_id,
        "plan_id": review.plan_id,
        "proposal": review.proposal.model_dump_json(),
        "parent_decision_id": review.parent_decision_id,
        # The proposal's dependencies beside it, searchable: a correction superseding one of them
        # finds the review wherever it waits (migration 0035 added them to earlier reviews).
        "depends_on_ids": list(review.proposal.depends_on),
        "phase": review.phase.value,
        "threshold": review.threshold,
        "status": review.status.value,
        "created_at": review.created_at,
        "idempotency_key": review.proposal.idempotency_key,
        "request_digest": review.proposal.request_digest,
        "reopens": review.reopens,
    }


def review_from_record(record: Mapping[str, Any]) -> Review:
    """Rebuild a Review from a row of ``review/get_reviews`` and its kin."""
    props = record["review"]
    resolved_at, lapsed_at = props.get("resolved_at"), props.get("lapsed_at")
    return Review(
        review_id=props["review_id"],
        plan_id=props["plan_id"],
        proposal=Proposal.model_validate_json(props["proposal"]),
        parent_decision_id=props.get("parent_decision_id"),
        phase=props["phase"],
        threshold=props["threshold"],
        status=props["status"],
        created_at=native_datetime(props["created_at"]),
        resolved_at=native_datetime(resolved_at) if resolved_at is not None else None,
        resolved_option=props.get("resolved_option"),
        decision_id=record["decision_id"],
        cancelled_by=props.get("cancelled_by"),
        resolved_by=props.get("resolved_by"),
        approved_digest=props.get("approved_digest"),
        lapsed_by=props.get("lapsed_by"),
        lapsed_from=props.get("lapsed_from"),
        lapsed_at=native_datetime(lapsed_at) if lapsed_at is not None else None,
        reopens=props.get("reopens"),
        reopened_by=props.get("reopened_by"),
    )


def plan_properties(plan: Plan) -> dict[str, Any]:
    """The Plan node's own properties; its parent and spawning decision are relationships."""
    return {
        "plan_id": plan.plan_id,
        "description": plan.description,
        "arguments": json_text(plan.arguments),
        "phase": plan.phase.value,
        "automation_edit_code": plan.automation_profile.edit_code,
        "automation_execute_command": plan.automation_profile.execute_command,
        "invariants": json_text([i.model_dump(mode="json") for i in plan.invariants]),
        "removed_invariants": list(plan.removed_invariants),
        "created_at": plan.created_at,
        "owner": plan.owner,
        "project": plan.project,
    }


def plan_from_record(record: Mapping[str, Any]) -> Plan:
    """Rebuild a Plan from a row of ``plan/get_plan``."""
    props = record["plan"]
    return Plan(
        plan_id=props["plan_id"],
        description=props["description"],
        arguments=json.loads(props["arguments"]),
        parent_plan_id=record["parent_plan_id"],
        spawned_by_decision_id=record["spawned_by_decision_id"],
        phase=props["phase"],
        automation_profile=AutomationProfile(
            edit_code=props["automation_edit_code"],
            execute_command=props["automation_execute_command"],
        ),
        invariants=invariants_of(props.get("invariants")),
        removed_invariants=tuple(props.get("removed_invariants") or ()),
        created_at=native_datetime(props["created_at"]),
        invalidated_at=native_datetime(props["invalidated_at"]) if props.get("invalidated_at") is not None else None,
        owner=props.get("owner"),
        project=props.get("project"),
    )


def impacted_from_row(row: Sequence[Any]) -> ImpactedDecision:
    """A decision as the correction walks return it (``correction/downstream`` and its kin): the
    list ``[decision_id, decision_type, plan_id, sequence_number, phase, actor_state_thread_id,
    actor_state_checkpoint_ns, actor_state_checkpoint_id]``, what invalidating and replaying it need.

    A list rather than a map (the driver decodes a map's keys again for every decision), built
    without validation: the values are ones the store validated when it wrote them, and a
    correction may read a hundred thousand of them.
    """
    decision_id, decision_type, plan_id, sequence_number, phase, thread_id, checkpoint_ns, checkpoint_id = row
    return ImpactedDecision(
        decision_id,
        _DECISION_TYPES[decision_type],
        plan_id,
        sequence_number,
        _PHASES[phase],
        thread_id,
        checkpoint_ns or "",
        checkpoint_id,
    )


_KEPT_WHEN_GIVEN = ("cancelled_review_ids", "lapsed_review_ids", "idempotency_key", "request_digest")
"""An attempt's properties absent from its node when it has none (most corrections cancel no
review and name no key)."""


def attempt_properties(attempt: CorrectionAttempt) -> dict[str, Any]:
    """A correction attempt as node properties (nested parts as JSON)."""
    return {
        **attempt.model_dump(
            mode="python",
            exclude={
                "counts_by_type",
                "replay_frontier",
                "replay_detail",
                "replayed_decision_ids",
                "invalidated_decision_ids",
                "invalidated_plan_ids",
                *_KEPT_WHEN_GIVEN,
            },
        ),
        **{
            name: list(value) if isinstance(value, tuple) else value
            for name in _KEPT_WHEN_GIVEN
            if (value := getattr(attempt, name))
        },
        "mode": attempt.mode.value,
        "replay_outcome": attempt.replay_outcome.value,
        "invalidated_decision_ids": list(attempt.invalidated_decision_ids),
        "invalidated_plan_ids": list(attempt.invalidated_plan_ids),
        "counts_by_type": json_text(attempt.counts_by_type),
        "replay_frontier": json_text([p.model_dump(mode="json") for p in attempt.replay_frontier]),
    }


def attempt_from_properties(props: Mapping[str, Any]) -> CorrectionAttempt:
    """Rebuild a correction attempt from its node's properties."""
    return CorrectionAttempt(
        **{k: v for k, v in props.items() if k not in ("counts_by_type", "replay_frontier", "at", "replayed_at")},
        at=native_datetime(props["at"]),
        replayed_at=native_datetime(props["replayed_at"]) if props.get("replayed_at") is not None else None,
        counts_by_type=json.loads(props["counts_by_type"]),
        replay_frontier=tuple(FrontierPoint(**p) for p in json.loads(props["replay_frontier"])),
    )


def _checkpoint(props: Mapping[str, Any]) -> CheckpointRef | None:
    if props.get("actor_state_checkpoint_id") is None:
        return None
    return CheckpointRef.model_construct(
        thread_id=props["actor_state_thread_id"],
        checkpoint_ns=props.get("actor_state_checkpoint_ns") or "",
        checkpoint_id=props["actor_state_checkpoint_id"],
    )


def json_text(value: Any) -> str:
    return _JSON_TEXT.encode(value)


# One encoder: json.dumps with options builds a JSONEncoder per call, which was most of the cost
# of a recording's two JSON properties.
_JSON_TEXT = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def native_datetime(value: DateTime | datetime | str) -> datetime:
    """A stored time as Python's: from the driver's DateTime, or from Cypher's ``toString`` of one
    (ISO 8601 with an offset; a zone name in brackets after it adds nothing the offset does not say)."""
    if isinstance(value, str):
        return datetime.fromisoformat(value.split("[", 1)[0])
    return value.to_native() if isinstance(value, DateTime) else value


def invariants_of(stored: str | None) -> tuple[Invariant, ...]:
    """A plan's declared invariants, as its ``invariants`` property holds them (JSON text)."""
    return tuple(Invariant(**i) for i in json.loads(stored or "[]"))
