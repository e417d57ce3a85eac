"""A plan: the unit of work whose decisions form one tree, linked into hierarchies by spawning."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from decisiontrail.domain.decision import NonBlank, Phase, UtcDatetime, partial_copy, utc_now
from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.domain.invariants import Invariant


class AutomationProfile(BaseModel):
    """Confidence thresholds (ADR-017): a decision below the phase's threshold waits for a person.

    0.0 decides everything automatically; 1.0 asks the user for every decision.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    edit_code: float = Field(default=0.0, ge=0.0, le=1.0, description="threshold during Strategize")
    execute_command: float = Field(default=0.0, ge=0.0, le=1.0, description="threshold during Execute")


MAX_PROJECT = 200
"""Characters of a project name: it is indexed, and Neo4j cannot index a value of about 8 KB."""


class Plan(BaseModel):
    """A plan instantiated from an action, or spawned as a child by a subplan decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: Ulid = Field(default_factory=new_ulid)
    description: NonBlank
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    parent_plan_id: Ulid | None = None
    spawned_by_decision_id: Ulid | None = None
    phase: Phase = Phase.STRATEGIZE
    automation_profile: AutomationProfile = Field(default_factory=AutomationProfile)
    invariants: tuple[Invariant, ...] = Field(default=(), description="declared at any scope; reconciled at Strategize entry")
    removed_invariants: tuple[str, ...] = Field(
        default=(), description="names removed from it (removeInvariant): kept out when it gathers the scopes again"
    )
    created_at: UtcDatetime = Field(default_factory=utc_now)
    owner: str | None = Field(default=None, description="who instantiated it through the API; actors see only their own")
    project: NonBlank | None = Field(
        default=None,
        max_length=MAX_PROJECT,
        description="the project it belongs to (a child plan's is its parent's); tokens may be limited to one",
    )
    invalidated_at: UtcDatetime | None = Field(
        default=None, description="set when a correction superseded the decision that spawned this plan"
    )

    @property
    def is_invalidated(self) -> bool:
        return self.invalidated_at is not None

    @model_validator(mode="after")
    def _spawn_link_is_whole(self) -> Self:
        if (self.parent_plan_id is None) != (self.spawned_by_decision_id is None):
            raise ValueError(
                "spawned_by_decision_id: a child plan names both its parent plan and the decision "
                "that spawned it, a top-level plan neither"
            )
        if self.parent_plan_id is not None and self.parent_plan_id == self.plan_id:
            raise ValueError("parent_plan_id: a plan cannot be its own parent")
        return self


def partial_plan(**values: Any) -> Plan:
    """A Plan holding only ``values``, unvalidated, the other fields at their defaults (and
    ``created_at`` None): what a read that returns only ids builds, where only those are read.
    Copied from one template, as ``decision.partial_decision`` is."""
    return partial_copy(_PARTIAL_PLAN, values)


_PLAN_DEFAULTS: dict[str, Any] = {"created_at": None}  # no made-up time; the other fields at their defaults
_PARTIAL_PLAN = Plan.model_construct(**_PLAN_DEFAULTS)
