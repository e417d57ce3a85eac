"""The decision model: pydantic records and pure rules, with no I/O."""

from __future__ import annotations

from decisiontrail.domain.decision import (
    ArtifactRef,
    CheckpointRef,
    ContextSnapshot,
    Decision,
    DecisionType,
    Phase,
    ResourceRef,
)
from decisiontrail.domain.ids import Ulid, new_ulid
from decisiontrail.domain.invariants import Invariant, Scope
from decisiontrail.domain.plan import AutomationProfile, Plan
from decisiontrail.domain.tree import DecisionTree, TreeNode

__all__ = [
    "ArtifactRef",
    "AutomationProfile",
    "CheckpointRef",
    "ContextSnapshot",
    "Decision",
    "DecisionTree",
    "DecisionType",
    "Invariant",
    "Phase",
    "Plan",
    "ResourceRef",
    "Scope",
    "TreeNode",
    "Ulid",
    "new_ulid",
]
