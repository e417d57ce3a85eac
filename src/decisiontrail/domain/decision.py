"""The Decision record and its parts, as decision-model-reference and ADR-007 define them."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Self, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.exceptions import RuleViolation, ValidationFailed


class DecisionType(StrEnum):
    """The eleven kinds of choice point (ADR-007); there are no untyped decisions."""

    PROMPT_DEFINITION = "prompt_definition"
    INVARIANT_ENFORCED = "invariant_enforced"
    STRATEGY_CHOICE = "strategy_choice"
    IMPLEMENTATION_CHOICE = "implementation_choice"
    RESOURCE_SELECTION = "resource_selection"
    SUBPLAN_SPAWN = "subplan_spawn"
    SUBPLAN_PARALLEL_SPAWN = "subplan_parallel_spawn"
    TOOL_INVOCATION = "tool_invocation"
    ERROR_RECOVERY = "error_recovery"
    VALIDATION_RESPONSE = "validation_response"
    USER_INTERVENTION = "user_intervention"


class Phase(StrEnum):
    """A plan's lifecycle phase; decisions are made in Strategize and Execute."""

    STRATEGIZE = "strategize"
    EXECUTE = "execute"
    APPLY = "apply"


# ADR-007's phase column. The first phase listed is the default for a decision of that type.
PHASES_BY_TYPE: dict[DecisionType, tuple[Phase, ...]] = {
    DecisionType.PROMPT_DEFINITION: (Phase.STRATEGIZE,),
    DecisionType.INVARIANT_ENFORCED: (Phase.STRATEGIZE,),
    DecisionType.STRATEGY_CHOICE: (Phase.STRATEGIZE,),
    DecisionType.IMPLEMENTATION_CHOICE: (Phase.EXECUTE,),
    DecisionType.RESOURCE_SELECTION: (Phase.STRATEGIZE, Phase.EXECUTE),
    DecisionType.SUBPLAN_SPAWN: (Phase.STRATEGIZE,),
    DecisionType.SUBPLAN_PARALLEL_SPAWN: (Phase.STRATEGIZE,),
    DecisionType.TOOL_INVOCATION: (Phase.EXECUTE,),
    DecisionType.ERROR_RECOVERY: (Phase.EXECUTE,),
    DecisionType.VALIDATION_RESPONSE: (Phase.EXECUTE,),
    DecisionType.USER_INTERVENTION: (Phase.STRATEGIZE, Phase.EXECUTE, Phase.APPLY),
}

SPAWNING_TYPES = frozenset({DecisionType.SUBPLAN_SPAWN, DecisionType.SUBPLAN_PARALLEL_SPAWN})


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]
Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
# A content digest as OCI and Subresource Integrity write it: the algorithm, a colon, the hex digest.
Digest = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9+._-]*:[0-9a-f]{32,128}$")]


def utc_now() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_as_utc)]


def _distinct(value: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(value)) != len(value):
        raise ValueError("lists the same decision more than once")
    return value


DecisionIds = Annotated[tuple[Ulid, ...], AfterValidator(_distinct)]
"""Decisions a decision depends on: ULIDs, each once."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


class ResourceRef(_Record):
    """A resource the actor had in play: a file, symbol or knowledge entity, optionally a path in it."""

    resource_id: NonBlank
    path: str | None = None


class ArtifactRef(_Record):
    """Something a decision produced during Execute: where it is (a path or URI), what kind it is,
    and optionally its content digest (``sha256:<hex>``), so a reader can tell whether what is at
    the path now is what the decision produced."""

    artifact_path: NonBlank
    artifact_type: NonBlank
    digest: Digest | None = None
    attached_at: UtcDatetime | None = Field(
        default=None, description="when it was attached after the decision was recorded (None: recorded with it)"
    )


class CheckpointRef(_Record):
    """A LangGraph checkpoint: enough to load the actor's state back from its checkpointer."""

    thread_id: NonBlank
    checkpoint_ns: str = ""
    checkpoint_id: NonBlank


class ContextSnapshot(_Record):
    """What replaying a decision in isolation needs (ADR-007 Constraints).

    ``actor_state_ref`` is absent only for decisions the system creates without an actor
    (a plan's prompt_definition, a user_intervention).
    """

    hot_context_hash: Sha256Hex = Field(description="SHA-256 (lower-case hex) of the context window")
    hot_context_ref: NonBlank = Field(description="where the full serialised context is stored")
    relevant_resources: tuple[ResourceRef, ...] = ()
    actor_state_ref: CheckpointRef | None = None


class Decision(_Record):
    """One typed choice point in a plan's decision tree.

    ``sequence_number`` is assigned by the store when the decision is recorded.
    ``downstream_decision_ids``, ``downstream_plan_ids`` and ``superseded_by`` are derived
    from relationships when a decision is read; they are never written from this record.
    """

    # Identity
    decision_id: Ulid = Field(default_factory=new_ulid)
    plan_id: Ulid
    parent_decision_id: Ulid | None = None
    sequence_number: int | None = Field(default=None, ge=0)

    # Classification
    decision_type: DecisionType
    # Filled in from the type by _default_phase when not given; the store sets the plan's phase.
    phase: Phase = Field(default=Phase.STRATEGIZE, description="defaults to the first phase ADR-007 gives the type")

    # Content
    question: NonBlank
    chosen_option: NonBlank
    alternatives_considered: tuple[str, ...] = ()
    confidence_score: float | None = Field(default=None, ge=0.0, le=1.0)

    # Context snapshot
    context_snapshot: ContextSnapshot

    # Rationale
    rationale: str = ""
    actor_reasoning: str | None = None

    # Influence (DEPENDS_ON) and downstream impact
    depends_on: DecisionIds = ()
    dependencies_added: tuple[tuple[Ulid, UtcDatetime], ...] = Field(
        default=(),
        description="dependencies added after the decision was recorded (addDependency, a replay's report), with when; read, never written from here",
    )
    downstream_decision_ids: tuple[Ulid, ...] = ()
    downstream_plan_ids: tuple[Ulid, ...] = ()
    artifacts_produced: tuple[ArtifactRef, ...] = ()

    # Timestamps
    created_at: UtcDatetime = Field(default_factory=utc_now)

    # Correction metadata
    is_correction: bool = False
    corrects_decision_id: Ulid | None = None
    correction_reason: str | None = None
    superseded_by: Ulid | None = None
    superseded_at: UtcDatetime | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_phase(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("phase") is None and "decision_type" in data:
            try:
                decision_type = DecisionType(data["decision_type"])
            except ValueError:
                return data  # the field validator reports the bad type
            data = {**data, "phase": PHASES_BY_TYPE[decision_type][0]}
        return data

    @field_validator("confidence_score", mode="before")
    @classmethod
    def _finite_confidence(cls, value: Any) -> Any:
        # Before the bounds check, which would call NaN merely "not <= 1".
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("must be a number in [0, 1], not NaN")
        return value

    @model_validator(mode="after")
    def _rules(self) -> Self:
        if self.decision_type is DecisionType.PROMPT_DEFINITION and self.parent_decision_id is not None:
            raise ValueError("parent_decision_id: a prompt_definition is the root of its plan and has no parent")
        if self.is_correction and self.corrects_decision_id is None:
            raise ValueError("corrects_decision_id: a correction (is_correction=True) must name the decision it corrects")
        if self.corrects_decision_id is not None and not self.is_correction:
            raise ValueError("is_correction: must be True when corrects_decision_id is set")
        if self.corrects_decision_id is not None and self.corrects_decision_id == self.decision_id:
            raise ValueError("corrects_decision_id: a decision cannot correct itself")
        if self.parent_decision_id is not None and self.parent_decision_id == self.decision_id:
            raise ValueError("parent_decision_id: a decision cannot be its own parent")
        if self.decision_id in self.depends_on:
            raise ValueError("depends_on: a decision cannot depend on itself")
        allowed = PHASES_BY_TYPE[self.decision_type]
        if self.phase not in allowed:
            names = ", ".join(p.value for p in allowed)
            raise ValueError(f"phase: a {self.decision_type.value} decision is made in {names}, not {self.phase.value}")
        return self

    @property
    def is_current(self) -> bool:
        """True while no correction has superseded this decision."""
        return self.superseded_by is None

    @property
    def action_digest(self) -> str:
        """What this decision authorises, as ``action_digest`` computes it: a resolved review's
        ``approved_digest`` is this digest of the decision it resolved as."""
        return action_digest(
            plan_id=self.plan_id,
            decision_type=self.decision_type,
            phase=self.phase,
            question=self.question,
            chosen_option=self.chosen_option,
            parent_decision_id=self.parent_decision_id,
            depends_on=self.depends_on,
            hot_context_hash=self.context_snapshot.hot_context_hash,
        )


def action_digest(
    *,
    plan_id: str,
    decision_type: DecisionType,
    phase: Phase,
    question: str,
    chosen_option: str,
    parent_decision_id: str | None,
    depends_on: Sequence[str],
    hot_context_hash: str,
) -> str:
    """The digest of an action a person approves: what is chosen, for which question, of which
    type, in which plan and phase, under which parent, resting on which decisions, seen in which
    context. SHA-256 of its canonical JSON (keys sorted, no whitespace), written ``sha256:<hex>``.

    Not the confidence or the rationale (they argue for the action; they are not it), nor the
    alternatives (an override moves the original choice among them).

    >>> a = dict(plan_id="p", decision_type=DecisionType.TOOL_INVOCATION, phase=Phase.EXECUTE, question="q",
    ...          chosen_option="deploy", parent_decision_id="s", depends_on=(), hot_context_hash="0" * 64)
    >>> action_digest(**a) == action_digest(**{**a, "chosen_option": "deploy"})
    True
    >>> action_digest(**a) == action_digest(**{**a, "parent_decision_id": "t"})
    False
    """
    action = {
        "plan_id": plan_id,
        "decision_type": decision_type.value,
        "phase": phase.value,
        "question": question,
        "chosen_option": chosen_option,
        "parent_decision_id": parent_decision_id,
        "depends_on": list(depends_on),
        "hot_context_hash": hot_context_hash,
    }
    canonical = json.dumps(action, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def with_artifacts(decision: Decision, phase: Phase, artifacts: Sequence[ArtifactRef], at: datetime) -> tuple[ArtifactRef, ...]:
    """The decision's artifacts with ``artifacts`` added, each dated ``at``, produced while its plan is in ``phase``.

    Artifacts are produced during Execute, by a decision no correction has superseded; nothing
    else about the decision changes. An artifact the decision already names (the same path, type
    and digest) is not added again and keeps its date: attaching is idempotent, and a read as of
    a moment (``as_it_stood``) leaves out only what was attached after it.
    """
    if not artifacts:
        raise ValidationFailed("artifacts: name at least one artifact", field="artifacts")
    if decision.superseded_by is not None:
        raise RuleViolation(
            f"decision {decision.decision_id} has been superseded by {decision.superseded_by}; attach to the current one",
            rule="decision_is_current",
        )
    if phase is not Phase.EXECUTE:
        raise RuleViolation(
            f"artifacts are produced during execute; plan {decision.plan_id} is in {phase.value}", rule="type_allowed_in_phase"
        )
    named = {_artifact_key(a) for a in decision.artifacts_produced}
    added: dict[tuple[str, str, str | None], ArtifactRef] = {}
    for artifact in artifacts:
        if (key := _artifact_key(artifact)) not in named:
            added.setdefault(key, artifact.model_copy(update={"attached_at": at}))
    return (*decision.artifacts_produced, *added.values())


def _artifact_key(artifact: ArtifactRef) -> tuple[str, str, str | None]:
    return artifact.artifact_path, artifact.artifact_type, artifact.digest


def partial_decision(**values: Any) -> Decision:
    """A Decision holding only ``values``, unvalidated, the other fields at their defaults (and
    ``created_at`` None unless given): what a read that returns less than a whole record builds,
    where only the fields it was given are read (an outline, a list of ids). Built by
    ``partial_copy`` of one template."""
    return partial_copy(_PARTIAL, values)


M = TypeVar("M", bound=BaseModel)


def partial_copy(template: M, values: dict[str, Any]) -> M:
    """``template`` with ``values``, unvalidated: what pydantic's ``model_copy(update=values)`` of
    it builds (a shallow copy of its fields, updated, with ``values`` added to the fields set), in
    one step instead of a copy and an update. Filling every default anew (``model_construct``)
    cost more than the rest of answering a thousand ids, and the copy and update half the time of
    a 1,000-decision outline. Only for a model with no private attributes and no extra fields.
    """
    copied = _new(type(template))
    _set(copied, "__dict__", {**template.__dict__, **values})
    _set(copied, "__pydantic_fields_set__", template.__pydantic_fields_set__ | values.keys())
    _set(copied, "__pydantic_extra__", None)  # no extra fields
    _set(copied, "__pydantic_private__", None)  # and no private attributes
    return copied


_new, _set = object.__new__, object.__setattr__
_DEFAULTS: dict[str, Any] = {"created_at": None}  # no made-up time; the other fields at their defaults
_PARTIAL = Decision.model_construct(**_DEFAULTS)
