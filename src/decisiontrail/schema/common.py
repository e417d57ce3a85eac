"""GraphQL types shared by the nouns: the domain's enums as served, a context snapshot and its references, counts by type."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from datetime import datetime

import strawberry

from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome
from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.recording import ReviewAction, ReviewStatus
from decisiontrail.events import EventKind as DecisionEventKind

from decisiontrail.domain.decision import ContextSnapshot as DomainContextSnapshot
from decisiontrail.domain.invariants import Scope as DomainScope


# The domain's enums, served as they are (GraphQL shows their member names: STRATEGY_CHOICE).

# The domain's enums, served as they are (GraphQL shows their member names: STRATEGY_CHOICE).
strawberry.enum(DecisionType)
strawberry.enum(Phase)
strawberry.enum(
    DomainScope, name="InvariantScope", description="Where an invariant is declared; precedence PLAN > ACTION > PROJECT > GLOBAL."
)
strawberry.enum(CorrectionMode)
strawberry.enum(ReplayOutcome)
strawberry.enum(ReviewAction)
strawberry.enum(ReviewStatus)
strawberry.enum(DecisionEventKind, name="DecisionEventKind")


@strawberry.enum(description="The nine types an actor records; prompt_definition and user_intervention are the system's.")
class ActorDecisionType(Enum):
    INVARIANT_ENFORCED = "invariant_enforced"
    STRATEGY_CHOICE = "strategy_choice"
    IMPLEMENTATION_CHOICE = "implementation_choice"
    RESOURCE_SELECTION = "resource_selection"
    SUBPLAN_SPAWN = "subplan_spawn"
    SUBPLAN_PARALLEL_SPAWN = "subplan_parallel_spawn"
    TOOL_INVOCATION = "tool_invocation"
    ERROR_RECOVERY = "error_recovery"
    VALIDATION_RESPONSE = "validation_response"


@strawberry.enum
class DecisionStatus(Enum):
    CURRENT = "current"
    SUPERSEDED = "superseded"


@strawberry.type
class ResourceRef:
    resource_id: str
    path: str | None


@strawberry.type
class CheckpointGroup:
    """What an Execute-phase recording checkpointed: the actor's checkpoint and the resources in play."""

    group_id: str
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    resources: list[str]


@strawberry.type
class ArtifactRef:
    """Something a decision produced: where (a path or URI), what kind, and its content digest if given."""

    artifact_path: str
    artifact_type: str
    digest: str | None
    attached_at: datetime | None = strawberry.field(
        description="when it was attached after the decision was recorded (attachArtifacts); null: recorded with it"
    )


@strawberry.type
class CheckpointRef:
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


@strawberry.type
class ContextSnapshot:
    hot_context_hash: str
    hot_context_ref: str
    relevant_resources: list[ResourceRef]
    actor_state_ref: CheckpointRef | None


def checkpoint_of(ref: Any) -> CheckpointRef | None:
    return (
        None
        if ref is None
        else CheckpointRef(thread_id=ref.thread_id, checkpoint_ns=ref.checkpoint_ns, checkpoint_id=ref.checkpoint_id)
    )


def snapshot_of(s: DomainContextSnapshot) -> ContextSnapshot:
    return ContextSnapshot(
        hot_context_hash=s.hot_context_hash,
        hot_context_ref=s.hot_context_ref,
        relevant_resources=[ResourceRef(resource_id=r.resource_id, path=r.path) for r in s.relevant_resources],
        actor_state_ref=checkpoint_of(s.actor_state_ref),
    )


@strawberry.type
class CountByType:
    decision_type: DecisionType
    count: int


def counts(by_type: Mapping[str, int]) -> list[CountByType]:
    return [CountByType(decision_type=DecisionType(t), count=n) for t, n in sorted(by_type.items())]
