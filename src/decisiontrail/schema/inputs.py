"""GraphQL input objects: what mutations take."""

from __future__ import annotations


import strawberry
from strawberry.scalars import JSON

from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome
from decisiontrail.domain.recording import ReviewAction

from decisiontrail.domain.invariants import Invariant as DomainInvariant
from decisiontrail.domain.invariants import Scope as DomainScope

from decisiontrail.schema.common import ActorDecisionType


@strawberry.input
class AutomationProfileInput:
    edit_code: float = 0.0
    execute_command: float = 0.0


@strawberry.input
class InvariantInput:
    name: str
    statement: str
    scope: DomainScope = DomainScope.PLAN

    def model(self) -> DomainInvariant:
        return DomainInvariant(name=self.name, statement=self.statement, scope=self.scope)


@strawberry.input(
    description="A missing constraint added to a plan in Strategize (ADR-007): declared, and enforced by a decision."
)
class AddInvariantInput:
    plan_id: strawberry.ID
    name: str
    statement: str
    scope: DomainScope = DomainScope.PLAN
    reason: str = ""


@strawberry.input
class InstantiatePlanInput:
    description: str
    arguments: JSON | None = None
    parent_decision_id: strawberry.ID | None = None
    automation_profile: AutomationProfileInput | None = None
    invariants: list[InvariantInput] | None = None
    project: str | None = strawberry.field(
        default=None,
        description="the project the plan belongs to (a token limited to a project: that one); a child plan inherits its parent plan's",
    )


@strawberry.input
class CheckpointRefInput:
    thread_id: str
    checkpoint_id: str
    checkpoint_ns: str = ""


@strawberry.input
class ResourceRefInput:
    resource_id: str
    path: str | None = None


@strawberry.input
class ContextSnapshotInput:
    hot_context_hash: str
    hot_context_ref: str
    actor_state_ref: CheckpointRefInput
    relevant_resources: list[ResourceRefInput] | None = None
    hot_context: str | None = strawberry.field(
        default=None, description="the full context; stored content-addressed when its SHA-256 is hotContextHash"
    )


@strawberry.input
class RecordDecisionInput:
    plan_id: strawberry.ID
    decision_type: ActorDecisionType
    question: str
    chosen_option: str
    rationale: str
    context_snapshot: ContextSnapshotInput
    alternatives_considered: list[str] | None = None
    confidence_score: float | None = None
    parent_decision_id: strawberry.ID | None = None
    depends_on: list[strawberry.ID] | None = None
    idempotency_key: str | None = None
    actor_reasoning: str | None = None
    artifacts_produced: list[ArtifactInput] | None = None


@strawberry.input
class ResolveReviewInput:
    """Who resolves it is the caller (its token's name), never a name given here. `digest`, when
    given, is the review's `digest` as you read it: the answer is refused (CONFLICT, nothing
    written) unless the review proposes exactly that action."""

    review_id: strawberry.ID
    action: ReviewAction
    option: str | None = None
    digest: str | None = None


@strawberry.input
class ArtifactInput:
    """Something the decision produced (during Execute): where it is (a path or URI), what kind it
    is, and optionally its content digest, written `algorithm:hex` (`sha256:9f86d0...`)."""

    artifact_path: str
    artifact_type: str
    digest: str | None = None


@strawberry.input
class RecordReplayInput:
    """How replaying a correction's frontier went: its outcome, the decisions it recorded, a note."""

    attempt_id: strawberry.ID
    outcome: ReplayOutcome
    decision_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    detail: str | None = None


@strawberry.input
class AddGuidanceInput:
    """Guidance for a plan without correcting anything: recorded as a user_intervention under ``parentDecisionId``."""

    plan_id: strawberry.ID
    guidance: str
    parent_decision_id: strawberry.ID
    reason: str = ""


@strawberry.input
class CorrectDecisionInput:
    decision_id: strawberry.ID
    mode: CorrectionMode
    guidance: str
    reason: str = ""
    description: str | None = strawberry.field(
        default=None,
        description="a prompt correction's new description (default: the guidance); the plan's description becomes it",
    )
    arguments: JSON | None = strawberry.field(
        default=None, description="a prompt correction's new arguments (default: the plan's); the plan's arguments become them"
    )
    idempotency_key: str | None = strawberry.field(
        default=None,
        description="the same request sent again with this key (unique in the corrected decision's plan) is answered "
        "with what the first did, writing nothing; the key with another request is refused (IDEMPOTENCY_KEY_MISMATCH)",
    )
