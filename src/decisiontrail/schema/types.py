"""GraphQL types: the decision model as clients see it (camelCase fields, UPPER_CASE enums)."""

from __future__ import annotations

import base64
import json
from collections import Counter
from dataclasses import replace
from collections.abc import Awaitable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from decisiontrail.domain import Decision as DomainDecision
from decisiontrail.domain.decision import partial_decision
from decisiontrail.domain.plan import partial_plan
from decisiontrail.domain.correction import CorrectionMode, ReplayOutcome, as_it_stood
from decisiontrail.domain.decision import DecisionType, Phase
from decisiontrail.domain.recording import ReviewAction, ReviewStatus
from decisiontrail import events
from decisiontrail.events import EventKind as DecisionEventKind

__all__ = ["CorrectionMode", "DecisionEventKind", "DecisionType", "Phase", "ReviewAction", "ReviewStatus"]
from decisiontrail.domain import Plan as DomainPlan
from decisiontrail.domain.correction import CorrectionAttempt as DomainCorrectionAttempt
from decisiontrail.domain.correction import CorrectionResult as DomainCorrectionResult
from decisiontrail.domain.correction import FrontierPoint as DomainFrontierPoint
from decisiontrail.domain.correction import Impact as DomainImpact
from decisiontrail.domain.decision import ContextSnapshot as DomainContextSnapshot
from decisiontrail.domain.invariants import Invariant as DomainInvariant
from decisiontrail.domain.invariants import InvariantSet as DomainInvariantSet
from decisiontrail.domain.invariants import Scope as DomainScope
from decisiontrail.domain.recording import Review as DomainReview
from decisiontrail.domain.pages import DecisionPage, page_size
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.schema.context import Context
from decisiontrail.schema.execution import Identities
from decisiontrail.schema.errors import call, client_error
from decisiontrail.schema.analytics import AnalyticsScope, PlanAnalytics
from decisiontrail.schema.selection import IDS, TREE_OF_OUTLINES, asks_for, asks_only
from decisiontrail.services import analysis, reading
from decisiontrail.services import correction as correction_service

if TYPE_CHECKING:
    from decisiontrail.schema.dataset import CorrectionExample
    from decisiontrail.schema.runs import PlanRun

MAX_TOP = 100


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


def _checkpoint(ref: Any) -> CheckpointRef | None:
    return (
        None
        if ref is None
        else CheckpointRef(thread_id=ref.thread_id, checkpoint_ns=ref.checkpoint_ns, checkpoint_id=ref.checkpoint_id)
    )


@strawberry.type
class Decision:
    """A typed choice point in a plan's decision tree."""

    model: strawberry.Private[DomainDecision]
    # Set when the model is an outline (Plan.tree's one-statement path): its plan's other
    # decisions, so children and dependsOn resolve from memory.
    outline: strawberry.Private[PlanOutline | None] = None

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.model.decision_id)

    @strawberry.field
    def plan_id(self) -> strawberry.ID:
        return strawberry.ID(self.model.plan_id)

    @strawberry.field
    def parent_decision_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.model.parent_decision_id) if self.model.parent_decision_id else None

    @strawberry.field
    def sequence_number(self) -> int:
        return self.model.sequence_number or 0

    @strawberry.field
    def decision_type(self) -> DecisionType:
        return DecisionType(self.model.decision_type.value)

    @strawberry.field
    def phase(self) -> Phase:
        return Phase(self.model.phase.value)

    @strawberry.field
    def question(self) -> str:
        return self.model.question

    @strawberry.field
    def chosen_option(self) -> str:
        return self.model.chosen_option

    @strawberry.field
    def alternatives_considered(self) -> list[str]:
        return list(self.model.alternatives_considered)

    @strawberry.field
    def confidence_score(self) -> float | None:
        return self.model.confidence_score

    @strawberry.field
    def rationale(self) -> str:
        return self.model.rationale

    @strawberry.field
    def actor_reasoning(self) -> str | None:
        return self.model.actor_reasoning

    @strawberry.field
    def context_snapshot(self) -> ContextSnapshot:
        return _snapshot(self.model.context_snapshot)

    @strawberry.field
    def action_digest(self) -> str:
        """`sha256:<hex>` of what this decision authorises (its plan, type, phase, question, chosen
        option, parent, dependencies and context hash, as canonical JSON): a review's
        `approvedDigest` equals it for the decision the review resolved as."""
        return self.model.action_digest

    @strawberry.field
    async def checkpoint_group(self, info: Info[Context, None]) -> CheckpointGroup | None:
        """The checkpoint group an Execute-phase decision was recorded with (null in Strategize)."""
        group = await info.context.checkpoint_groups.load(self.model.decision_id)
        if group is None:
            return None
        return CheckpointGroup(
            group_id=group.group_id,
            thread_id=group.thread_id,
            checkpoint_ns=group.checkpoint_ns,
            checkpoint_id=group.checkpoint_id,
            resources=list(group.resources),
        )

    @strawberry.field
    async def context(self, info: Info[Context, None]) -> str | None:
        """The full context the snapshot's hash names, when the service stores it (sent as
        ``hotContext``); null when the context lives elsewhere (``hotContextRef``). One read for the
        request's decisions (``Context.contexts``)."""
        return await info.context.contexts.load(self.model.context_snapshot.hot_context_hash)

    @strawberry.field
    def artifacts_produced(self) -> list[ArtifactRef]:
        return [
            ArtifactRef(artifact_path=a.artifact_path, artifact_type=a.artifact_type, digest=a.digest)
            for a in self.model.artifacts_produced
        ]

    @strawberry.field
    async def downstream_decision_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        ids = list(self.model.downstream_decision_ids)
        if info.context.limited:  # dependents may lie in plans the caller may not see
            ids = [d.model.decision_id for d in await _decisions(info, ids)]
        return [strawberry.ID(i) for i in ids]

    @strawberry.field
    async def downstream_plan_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        ids = list(self.model.downstream_plan_ids)
        if info.context.limited:
            ids = [p.plan_id for p in await info.context.plans.load_many(ids) if p is not None]
        return [strawberry.ID(i) for i in ids]

    @strawberry.field
    def created_at(self) -> datetime:
        return self.model.created_at

    @strawberry.field
    def is_correction(self) -> bool:
        return self.model.is_correction

    @strawberry.field
    def corrects_decision_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.model.corrects_decision_id) if self.model.corrects_decision_id else None

    @strawberry.field
    def correction_reason(self) -> str | None:
        return self.model.correction_reason

    @strawberry.field
    def superseded_by_id(self) -> strawberry.ID | None:
        return strawberry.ID(self.model.superseded_by) if self.model.superseded_by else None

    @strawberry.field
    def superseded_at(self) -> datetime | None:
        return self.model.superseded_at

    @strawberry.field
    def status(self) -> DecisionStatus:
        return DecisionStatus.CURRENT if self.model.is_current else DecisionStatus.SUPERSEDED

    # -- relations, each through this request's DataLoaders --------------------------------

    @strawberry.field
    async def plan(self, info: Info[Context, None]) -> Plan:
        plan = await info.context.plans.load(self.model.plan_id)
        assert plan is not None  # a decision's plan always exists
        return Plan(model=plan)

    @strawberry.field
    async def parent(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, self.model.parent_decision_id)

    # children and dependsOn answer synchronously when an outline holds the answer: an async
    # resolver costs a coroutine and a task per decision, half the time of a 1,000-decision tree.

    @strawberry.field(graphql_type=list["Decision"])  # type: ignore[untyped-decorator]
    def children(self, info: Info[Context, None]) -> list[Decision] | Awaitable[list[Decision]]:
        if self.outline is not None:
            return self.outline.children.get(self.model.decision_id, [])
        return _children(info, self.model.decision_id)

    @strawberry.field(graphql_type=list["Decision"])  # type: ignore[untyped-decorator]
    def depends_on(self, info: Info[Context, None]) -> list[Decision] | Awaitable[list[Decision]]:
        if self.outline is not None:
            return self.outline.depends_on(info, self.model)
        return _decisions(info, list(self.model.depends_on))

    @strawberry.field
    async def dependents(self, info: Info[Context, None]) -> list[Decision]:
        return await _decisions(info, list(self.model.downstream_decision_ids))

    @strawberry.field
    async def downstream_plans(self, info: Info[Context, None]) -> list[Plan]:
        plans = await info.context.plans.load_many(list(self.model.downstream_plan_ids))
        return [Plan(model=p) for p in plans if p is not None]

    @strawberry.field
    async def corrects(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, self.model.corrects_decision_id)

    @strawberry.field
    async def superseded_by(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, self.model.superseded_by)

    @strawberry.field
    async def corrections(self, info: Info[Context, None]) -> list[CorrectionAttempt]:
        """The correction attempts on this decision's chain, oldest first (one statement for the
        request's decisions: ``Context.corrections``)."""
        return [CorrectionAttempt.of(a) for a in await info.context.corrections.load(self.model.decision_id)]


async def _decision(info: Info[Context, None], decision_id: str | None) -> Decision | None:
    if decision_id is None:
        return None
    found = await info.context.decisions.load(decision_id)
    return Decision(model=found) if found else None


async def _review(info: Info[Context, None], review_id: str | None) -> Review | None:
    """The review, if it exists and lies in a plan the caller may see."""
    if review_id is None:
        return None
    found = await call(reading.get_reviews, info.context.trail, [review_id], info.context.principal)
    return Review(model=found[0]) if found else None


async def _decisions(info: Info[Context, None], decision_ids: list[str]) -> list[Decision]:
    found = _decisions_now(info, decision_ids)
    return list(found) if isinstance(found, Identities) else await found


def _decisions_now(info: Info[Context, None], decision_ids: list[str]) -> Identities | Awaitable[list[Decision]]:
    """The decisions, at once when the ids are the answer (built only if more than their ids is
    read: ``schema.execution.Identities``), else once loaded: so a field that returns it is
    completed directly when it can be."""
    if _ids_are_the_answer(info):
        return Identities(decision_ids, _decision_known_by_id)
    return _loaded_decisions(info, decision_ids)


def _decisions_as_of(
    info: Info[Context, None], decision_ids: list[str], as_of: datetime | None
) -> Identities | Awaitable[list[Decision]]:
    """``_decisions_now``, each decision as it stood ``as_of`` (``as_it_stood``; their ids are the same)."""
    if as_of is None or _ids_are_the_answer(info):
        return _decisions_now(info, decision_ids)
    return _loaded_as_of(info, decision_ids, as_of)


async def _loaded_as_of(info: Info[Context, None], decision_ids: list[str], as_of: datetime) -> list[Decision]:
    return [Decision(model=as_it_stood(d, as_of)) for d in await _visible_decisions(info, decision_ids)]


def _decision_known_by_id(decision_id: str) -> Decision:
    return Decision(model=partial_decision(decision_id=decision_id))


async def _loaded_decisions(info: Info[Context, None], decision_ids: list[str]) -> list[Decision]:
    return [Decision(model=d) for d in await _visible_decisions(info, decision_ids)]


async def _plans(info: Info[Context, None], plan_ids: list[str]) -> list[Plan]:
    found = _plans_now(info, plan_ids)
    return list(found) if isinstance(found, Identities) else await found


def _plans_now(info: Info[Context, None], plan_ids: list[str]) -> Identities | Awaitable[list[Plan]]:
    """The plans, at once when the ids are the answer (as ``_decisions_now``), else once loaded."""
    if _ids_are_the_answer(info):
        return Identities(plan_ids, _plan_known_by_id)
    return _loaded_plans(info, plan_ids)


def _plan_known_by_id(plan_id: str) -> Plan:
    return Plan(model=partial_plan(plan_id=plan_id))


def _ids_are_the_answer(info: Info[Context, None]) -> bool:
    """Only ids are selected, and nothing is hidden from this caller: the ids a walk found answer it."""
    return not info.context.limited and all(asks_only(f.selections, IDS) for f in info.selected_fields)


async def _loaded_plans(info: Info[Context, None], plan_ids: list[str]) -> list[Plan]:
    return [Plan(model=p) for p in await _visible_plans(info, plan_ids)]


async def _visible_decisions(info: Info[Context, None], decision_ids: Sequence[str]) -> list[DomainDecision]:
    """Those of ``decision_ids`` the caller may see (the loader answers the others as missing)."""
    return [d for d in await info.context.decisions.load_many(list(decision_ids)) if d is not None]


async def _visible_plans(info: Info[Context, None], plan_ids: Sequence[str]) -> list[DomainPlan]:
    """Those of ``plan_ids`` the caller may see."""
    return [p for p in await info.context.plans.load_many(list(plan_ids)) if p is not None]


async def _counts_seen(info: Info[Context, None], decision_ids: Sequence[str], by_type: Mapping[str, int]) -> list[CountByType]:
    """Counts by type of ``decision_ids`` (``by_type``, already counted), or for a caller some plans
    are hidden from, of those it may see: a count must not tell of hidden plans either."""
    if not info.context.limited:
        return counts(by_type)
    return counts(Counter(d.decision_type.value for d in await _visible_decisions(info, decision_ids)))


async def _children(info: Info[Context, None], decision_id: str) -> list[Decision]:
    return await _decisions(info, await info.context.children.load(decision_id))


class PlanOutline:
    """One plan's decisions as outlines, each wrapped once, with their children in sequence order.

    Only selections within ``selection.OUTLINE`` may reach these. PARENT never leaves a plan, so
    every child is here; a dependency in another plan is loaded, and judged visible, as ever.
    """

    def __init__(self, decisions: list[DomainDecision]) -> None:
        self.nodes = {d.decision_id: Decision(model=d, outline=self) for d in decisions}
        self.children: dict[str, list[Decision]] = {}
        for d in decisions:  # in sequence order, as decision/children_of gives them
            if d.parent_decision_id is not None:
                self.children.setdefault(d.parent_decision_id, []).append(self.nodes[d.decision_id])

    def depends_on(self, info: Info[Context, None], decision: DomainDecision) -> list[Decision] | Awaitable[list[Decision]]:
        if not decision.depends_on:
            return []
        elsewhere = [i for i in decision.depends_on if i not in self.nodes]
        if not elsewhere:
            return [self.nodes[i] for i in decision.depends_on]
        return self._with_loaded(info, decision.depends_on, elsewhere)

    async def _with_loaded(self, info: Info[Context, None], ids: tuple[str, ...], elsewhere: list[str]) -> list[Decision]:
        loaded = {d.model.decision_id: d for d in await _decisions(info, elsewhere)}
        found = (self.nodes.get(i) or loaded.get(i) for i in ids)
        return [d for d in found if d is not None]


@strawberry.type
class AutomationProfile:
    edit_code: float
    execute_command: float


@strawberry.type
class Invariant:
    name: str
    statement: str
    scope: DomainScope

    @classmethod
    def of(cls, invariant: DomainInvariant) -> Invariant:
        return cls(name=invariant.name, statement=invariant.statement, scope=invariant.scope)


@strawberry.type(description="The global set of invariants, or a project's: what plans instantiated afterwards gather.")
class InvariantSet:
    scope: DomainScope
    project: str | None
    invariants: list[Invariant]
    updated_at: datetime | None
    updated_by: str | None

    @classmethod
    def of(cls, found: DomainInvariantSet) -> InvariantSet:
        return cls(
            scope=found.scope,
            project=found.project,
            invariants=[Invariant.of(i) for i in found.invariants],
            updated_at=found.updated_at,
            updated_by=found.updated_by,
        )


@strawberry.type
class PhaseChange:
    """One change of a plan's phase: from, to, why, when and who asked (a correction names itself)."""

    from_phase: Phase
    to_phase: Phase
    reason: str
    at: datetime
    by: str | None


@strawberry.type
class Plan:
    """A unit of work whose decisions form one tree."""

    model: strawberry.Private[DomainPlan]

    @strawberry.field
    async def phase_history(self, info: Info[Context, None]) -> list[PhaseChange]:
        """Every change of the plan's phase, oldest first."""
        changes = await info.context.phase_changes.load(self.model.plan_id)
        return [
            PhaseChange(
                from_phase=Phase(c["from_phase"]),
                to_phase=Phase(c["to_phase"]),
                reason=c["reason"] or "",
                at=c["at"].to_native(),
                by=c["by"],
            )
            for c in changes
        ]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.model.plan_id)

    @strawberry.field
    def description(self) -> str:
        return self.model.description

    @strawberry.field
    def arguments(self) -> JSON:
        return json.loads(json.dumps(self.model.arguments))  # type: ignore[no-any-return]

    @strawberry.field
    def phase(self) -> Phase:
        return Phase(self.model.phase.value)

    @strawberry.field
    def automation_profile(self) -> AutomationProfile:
        p = self.model.automation_profile
        return AutomationProfile(edit_code=p.edit_code, execute_command=p.execute_command)

    @strawberry.field
    def invariants(self) -> list[Invariant]:
        return [Invariant.of(i) for i in self.model.invariants]

    @strawberry.field
    def created_at(self) -> datetime:
        return self.model.created_at

    @strawberry.field
    def invalidated_at(self) -> datetime | None:
        return self.model.invalidated_at

    @strawberry.field(  # type: ignore[untyped-decorator]
        description="The runtime's run of this plan (runPlan, or a child plan it spawned); null for a plan clients record."
    )
    async def run(self, info: Info[Context, None]) -> Annotated["PlanRun", strawberry.lazy("decisiontrail.schema.runs")] | None:
        from decisiontrail.schema import runs

        found = await info.context.runs.load(self.model.plan_id)
        return runs.PlanRun.of(found) if found is not None else None

    @strawberry.field
    def project(self) -> str | None:
        return self.model.project  # a child plan's is its parent plan's

    @strawberry.field
    async def parent_plan(self, info: Info[Context, None]) -> Plan | None:
        if self.model.parent_plan_id is None:
            return None
        parent = await info.context.plans.load(self.model.parent_plan_id)
        return Plan(model=parent) if parent else None

    @strawberry.field
    async def spawned_by(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, self.model.spawned_by_decision_id)

    @strawberry.field
    async def decisions(
        self,
        info: Info[Context, None],
        first: int | None = None,
        after: str | None = None,
        filter: DecisionFilter | None = None,
    ) -> DecisionConnection:
        """The plan's decisions in sequence order, a page at a time (at most 100)."""
        page = replace(decision_page(first, after, filter), count=asks_for_total(info))
        total, ids = await call(reading.page_decisions, info.context.trail, self.model.plan_id, page)
        more = len(ids) > page.first - 1
        ids = ids[: page.first - 1]
        nodes = await _decisions(info, ids)
        edges = [DecisionEdge(cursor=_cursor("decision", n.model.sequence_number or 0), node=n) for n in nodes]
        return DecisionConnection(
            edges=edges,
            page_info=PageInfo(has_next_page=more, end_cursor=edges[-1].cursor if edges else None),
            total=total,
        )

    @strawberry.field
    async def tree(self, info: Info[Context, None], as_of: datetime | None = None) -> list[TreeEntry]:
        """The current tree in pre-order with depths; ``asOf`` gives the tree as it stood then."""
        if asks_only(info.selected_fields, TREE_OF_OUTLINES):
            # Ids, types and relations only: one statement of outlines instead of whole records.
            outline_tree, outlines = await call(reading.get_tree_outline, info.context.trail, self.model.plan_id, as_of=as_of)
            if outline_tree is None:
                return []  # an invalidated plan has no current tree
            nodes = PlanOutline(outlines).nodes
            return [TreeEntry(depth=depth, decision=nodes[node.decision.decision_id]) for depth, node in outline_tree.root.walk()]
        tree = await call(reading.get_tree, info.context.trail, self.model.plan_id, as_of=as_of)
        if tree is None:
            return []
        entries = []
        for depth, node in tree.root.walk():
            if as_of is None:  # as it stood then is not as it stands: kept out of the request's loader
                info.context.decisions.prime(node.decision.decision_id, node.decision)
            entries.append(TreeEntry(depth=depth, decision=Decision(model=node.decision)))
        return entries

    @strawberry.field
    async def analytics(
        self, info: Info[Context, None], scope: AnalyticsScope = AnalyticsScope.PLAN, top: int = 10
    ) -> PlanAnalytics:
        """Counts by type and phase, confidence, corrections, depth and fan-out, blast radius and
        reviews, of this plan or of its whole hierarchy (the plans below it that you may see)."""
        if not 0 <= top <= MAX_TOP:
            raise client_error(ValidationFailed(f"top: between 0 and {MAX_TOP}", field="top"))
        result = await call(
            analysis.analyze,
            info.context.trail,
            LoadScope(scope.value),
            self.model.plan_id,
            top=top,
            principal=info.context.principal,
            progress=False,
        )
        return PlanAnalytics.of(result)

    @strawberry.field
    async def correction_examples(
        self, info: Info[Context, None], hierarchy: bool = False
    ) -> list[Annotated["CorrectionExample", strawberry.lazy("decisiontrail.schema.dataset")]]:
        """Every correction made in the plan (with ``hierarchy``, in the plans below it too that you
        may see) as an evaluation example, oldest first."""
        from decisiontrail.schema.dataset import CorrectionExample
        from decisiontrail.services import dataset

        found = await call(
            dataset.correction_examples,
            info.context.trail,
            plan_id=self.model.plan_id,
            hierarchy=hierarchy,
            principal=info.context.principal,
        )
        return [CorrectionExample.of(e) for e in found]

    @strawberry.field
    async def root_decision(self, info: Info[Context, None]) -> Decision | None:
        current = await _plan_decisions(info, self.model.plan_id, DecisionStatus.CURRENT, None)
        return next((d for d in current if d.model.parent_decision_id is None), None)

    @strawberry.field
    async def child_plans(self, info: Info[Context, None]) -> list[Plan]:
        ids = await info.context.child_plans.load(self.model.plan_id)
        found = await info.context.plans.load_many(ids)
        return [Plan(model=p) for p in found if p is not None]

    @strawberry.field
    async def ancestors(self, info: Info[Context, None]) -> list[Plan]:
        """The plans above this one, its parent first."""
        chain: list[Plan] = []
        parent_id = self.model.parent_plan_id
        while parent_id is not None:
            parent = await info.context.plans.load(parent_id)
            if parent is None:
                break
            chain.append(Plan(model=parent))
            parent_id = parent.parent_plan_id
        return chain

    @strawberry.field
    async def descendants(self, info: Info[Context, None], max_depth: int = 10) -> list[Plan]:
        """The plans below this one, level by level (one batched query per level), to ``maxDepth``."""
        found: list[Plan] = []
        level = [self.model.plan_id]
        for _ in range(max(0, min(max_depth, 50))):
            children = [c for ids in await info.context.child_plans.load_many(level) for c in ids]
            if not children:
                break
            found += [Plan(model=p) for p in await info.context.plans.load_many(children) if p is not None]
            level = children
        return found


async def _plan_decisions(
    info: Info[Context, None], plan_id: str, status: DecisionStatus | None, as_of: datetime | None
) -> list[Decision]:
    found = await call(
        reading.list_decisions, info.context.trail, plan_id, current_only=status is DecisionStatus.CURRENT, as_of=as_of
    )
    if status is DecisionStatus.SUPERSEDED:
        found = [d for d in found if not d.is_current]
    if as_of is None:  # as it stood then is not as it stands: kept out of the request's loader
        for d in found:
            info.context.decisions.prime(d.decision_id, d)
    return [Decision(model=d) for d in found]


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class DecisionEdge:
    cursor: str
    node: Decision


@strawberry.type
class DecisionConnection:
    edges: list[DecisionEdge]
    page_info: PageInfo
    total: strawberry.Private[int | None]
    """None when the selection does not ask for ``totalCount``: then nothing was counted."""

    @strawberry.field
    def total_count(self) -> int:
        return counted(self.total)

    @strawberry.field
    def nodes(self) -> list[Decision]:
        return [e.node for e in self.edges]


@strawberry.type
class PlanEdge:
    cursor: str
    node: Plan


@strawberry.type
class PlanConnection:
    edges: list[PlanEdge]
    page_info: PageInfo
    total: strawberry.Private[int | None]
    """None when the selection does not ask for ``totalCount``: then nothing was counted."""

    @strawberry.field
    def total_count(self) -> int:
        return counted(self.total)

    @strawberry.field
    def nodes(self) -> list[Plan]:
        return [e.node for e in self.edges]


@strawberry.type
class TreeEntry:
    depth: int
    decision: Decision


@strawberry.input
class DecisionFilter:
    types: list[DecisionType] | None = None
    phases: list[Phase] | None = None
    status: DecisionStatus | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    text: str | None = strawberry.field(default=None, description="in the question or the chosen option, any case")


def _cursor(kind: str, value: object) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{value}".encode()).decode()


def plan_cursor(plan_id: str) -> str:
    return _cursor("plan", plan_id)


def review_cursor(review_id: str) -> str:
    return _cursor("review", review_id)


def parse_cursor(kind: str, cursor: str | None) -> str | None:
    """The value an opaque cursor of ``kind`` carries; VALIDATION_FAILED for a foreign one."""
    if cursor is None:
        return None
    try:
        found, value = base64.urlsafe_b64decode(cursor.encode()).decode().split(":", 1)
    except (ValueError, UnicodeDecodeError):
        found, value = "", ""
    if found != kind or not value:
        raise client_error(ValidationFailed(f"after: {cursor!r} is not a cursor of this list", field="after"))
    return value


def asks_for_total(info: Info[Context, None]) -> bool:
    """Whether the connection's selection asks for ``totalCount``: a page is counted only then (a
    count reads everything that matches; the page only itself)."""
    return any(asks_for(f.selections, "totalCount") for f in info.selected_fields)


def counted(total: int | None) -> int:
    """A connection's total, which was counted because its selection asked for it."""
    if total is None:
        raise RuntimeError("totalCount was read but not counted: asks_for_total judged the selection wrong")
    return total


def decision_page(first: int | None, after: str | None, filter: DecisionFilter | None) -> DecisionPage:
    try:
        size = page_size(first)
    except ValidationFailed as e:
        raise client_error(e) from e
    cursor = parse_cursor("decision", after)
    f = filter or DecisionFilter()
    return DecisionPage(
        first=size + 1,  # one more than asked: whether there is a next page
        after=int(cursor) if cursor is not None and cursor.isdigit() else None,
        types=tuple(f.types) if f.types else None,
        phases=tuple(f.phases) if f.phases else None,
        current=None if f.status is None else f.status is DecisionStatus.CURRENT,
        min_confidence=f.min_confidence,
        max_confidence=f.max_confidence,
        created_from=f.created_from,
        created_to=f.created_to,
        text=f.text,
    )


@strawberry.type
class Review:
    """A decision held for a person because its confidence was below the plan's threshold."""

    model: strawberry.Private[DomainReview]

    @strawberry.field
    def id(self) -> strawberry.ID:
        return strawberry.ID(self.model.review_id)

    @strawberry.field
    def plan_id(self) -> strawberry.ID:
        return strawberry.ID(self.model.plan_id)

    @strawberry.field
    def status(self) -> ReviewStatus:
        return ReviewStatus(self.model.status.value)

    @strawberry.field
    def decision_type(self) -> DecisionType:
        return DecisionType(self.model.proposal.decision_type.value)

    @strawberry.field
    def question(self) -> str:
        return self.model.proposal.question

    @strawberry.field
    def chosen_option(self) -> str:
        return self.model.proposal.chosen_option

    @strawberry.field
    def alternatives_considered(self) -> list[str]:
        return list(self.model.proposal.alternatives_considered)

    @strawberry.field
    def confidence_score(self) -> float | None:
        return self.model.proposal.confidence_score

    @strawberry.field
    def reason(self) -> str:
        return self.model.reason

    @strawberry.field
    async def decision(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, self.model.decision_id)

    @strawberry.field
    def created_at(self) -> datetime:
        return self.model.created_at

    @strawberry.field
    def resolved_at(self) -> datetime | None:
        """When a reviewer resolved it, or a correction cancelled it."""
        return self.model.resolved_at

    @strawberry.field
    def rationale(self) -> str:
        return self.model.proposal.rationale

    @strawberry.field
    def phase(self) -> Phase:
        """The phase the proposal was made in."""
        return Phase(self.model.phase.value)

    @strawberry.field
    def threshold(self) -> float:
        """The plan's confidence threshold for that phase, which the proposal fell below."""
        return self.model.threshold

    @strawberry.field
    async def parent(self, info: Info[Context, None]) -> Decision | None:
        """The decision the proposal would hang under once resolved."""
        return await _decision(info, self.model.parent_decision_id)

    @strawberry.field
    def context_snapshot(self) -> ContextSnapshot:
        return _snapshot(self.model.proposal.context_snapshot)

    @strawberry.field
    def resolved_by(self) -> str | None:
        """Who resolved it: the caller's principal (its token's name), never a name the client
        gives; null while pending or when cancelled."""
        return self.model.resolved_by

    @strawberry.field
    async def cancelled_by(self, info: Info[Context, None]) -> Decision | None:
        """The correction decision that made this review moot (status CANCELLED)."""
        return await _decision(info, self.model.cancelled_by)

    @strawberry.field
    def digest(self) -> str:
        """`sha256:<hex>` of the action approving it records (see `Decision.actionDigest`): give it
        to `resolveReview` as `digest` to approve exactly what you read."""
        return self.model.digest

    @strawberry.field
    def approved_digest(self) -> str | None:
        """The `actionDigest` of the decision it resolved as: what the person authorised; null until resolved."""
        return self.model.approved_digest

    @strawberry.field
    async def lapsed_by(self, info: Info[Context, None]) -> Decision | None:
        """The correction that superseded a decision this approval rested on (status LAPSED)."""
        return await _decision(info, self.model.lapsed_by)

    @strawberry.field
    def lapsed_at(self) -> datetime | None:
        return self.model.lapsed_at

    @strawberry.field
    def lapsed_from(self) -> ReviewStatus | None:
        """How it had been resolved before it lapsed."""
        return ReviewStatus(self.model.lapsed_from.value) if self.model.lapsed_from is not None else None

    @strawberry.field
    async def reopens(self, info: Info[Context, None]) -> Review | None:
        """The lapsed review whose question this one asks again (after the correction), if any."""
        return await _review(info, self.model.reopens)

    @strawberry.field
    async def reopened_by(self, info: Info[Context, None]) -> Review | None:
        """The review that asks this lapsed one's question again, once the plan reached it."""
        return await _review(info, self.model.reopened_by)


def _snapshot(s: DomainContextSnapshot) -> ContextSnapshot:
    return ContextSnapshot(
        hot_context_hash=s.hot_context_hash,
        hot_context_ref=s.hot_context_ref,
        relevant_resources=[ResourceRef(resource_id=r.resource_id, path=r.path) for r in s.relevant_resources],
        actor_state_ref=_checkpoint(s.actor_state_ref),
    )


@strawberry.type
class ReviewEdge:
    cursor: str
    node: Review


@strawberry.type
class ReviewConnection:
    edges: list[ReviewEdge]
    page_info: PageInfo
    total: strawberry.Private[int | None]
    """None when the selection does not ask for ``totalCount``: then nothing was counted."""

    @strawberry.field
    def total_count(self) -> int:
        return counted(self.total)

    @strawberry.field
    def nodes(self) -> list[Review]:
        return [e.node for e in self.edges]


@strawberry.type
class CountByType:
    decision_type: DecisionType
    count: int


def counts(by_type: Mapping[str, int]) -> list[CountByType]:
    return [CountByType(decision_type=DecisionType(t), count=n) for t, n in sorted(by_type.items())]


@strawberry.type(description="One edge of the walk from the corrected decision: the record it reaches and how.")
class PathStep:
    relationship: str = strawberry.field(
        description="PARENT, DEPENDS_ON, SPAWNED_BY or IN_PLAN: how the record reached hangs on the one before it"
    )
    node_id: strawberry.ID = strawberry.field(description="the decision or plan reached")


@strawberry.type(description="Why a decision is downstream of the corrected one: a shortest chain of edges to it.")
class InvalidationPath:
    decision_id: strawberry.ID
    steps: list[PathStep]


async def _paths(
    info: Info[Context, None], origin_id: str, decision_ids: list[str], plan_ids: list[str]
) -> list[InvalidationPath]:
    """The invalidation path of each decision, in order; for a caller some plans are hidden from,
    only paths through records it may see."""
    found = await call(correction_service.explain, info.context.trail, origin_id, [*decision_ids, *plan_ids])
    paths = [(d, found[d]) for d in decision_ids if d in found]
    if info.context.limited:
        named = sorted({step.node_id for _, steps in paths for step in steps})
        decisions = {d.decision_id for d in await info.context.decisions.load_many(named) if d is not None}
        plans = {p.plan_id for p in await info.context.plans.load_many(named) if p is not None}
        paths = [(d, steps) for d, steps in paths if all(s.node_id in decisions | plans for s in steps)]
    return [
        InvalidationPath(
            decision_id=strawberry.ID(d),
            steps=[PathStep(relationship=s.relationship, node_id=strawberry.ID(s.node_id)) for s in steps],
        )
        for d, steps in paths
    ]


@strawberry.type
class Impact:
    """What correcting a decision would invalidate."""

    model: strawberry.Private[DomainImpact]
    as_of: strawberry.Private[datetime | None] = None
    """The moment an ``impact(asOf:)`` was asked about: its decisions read as they stood then."""

    @strawberry.field(graphql_type=list[Decision])  # type: ignore[untyped-decorator]
    def decisions(self, info: Info[Context, None]) -> Identities | Awaitable[list[Decision]]:
        return _decisions_as_of(info, list(self.model.decision_ids), self.as_of)

    @strawberry.field(graphql_type=list[Plan])  # type: ignore[untyped-decorator]
    def plans(self, info: Info[Context, None]) -> Identities | Awaitable[list[Plan]]:
        return _plans_now(info, list(self.model.plan_ids))

    @strawberry.field
    async def counts_by_type(self, info: Info[Context, None]) -> list[CountByType]:
        return await _counts_seen(info, self.model.decision_ids, self.model.counts_by_type)

    @strawberry.field
    async def paths(self, info: Info[Context, None]) -> list[InvalidationPath]:
        """Why each decision would be invalidated: the chain of edges from the corrected one."""
        origin = self.model.decision_id
        downstream = [d for d in self.model.decision_ids if d != origin]
        return await _paths(info, origin, downstream, list(self.model.plan_ids))


@strawberry.type
class Lineage:
    """Where a decision comes from: ancestors (through parent plans) and what it depends on."""

    decision_ids: strawberry.Private[list[str]]
    plan_ids: strawberry.Private[list[str]]
    as_of: strawberry.Private[datetime | None] = None
    """The moment a ``lineage(asOf:)`` was asked about: its decisions read as they stood then."""

    @strawberry.field(graphql_type=list[Decision])  # type: ignore[untyped-decorator]
    def decisions(self, info: Info[Context, None]) -> Identities | Awaitable[list[Decision]]:
        return _decisions_as_of(info, self.decision_ids, self.as_of)

    @strawberry.field(graphql_type=list[Plan])  # type: ignore[untyped-decorator]
    def plans(self, info: Info[Context, None]) -> Identities | Awaitable[list[Plan]]:
        return _plans_now(info, self.plan_ids)


@strawberry.type
class ReplayPoint:
    plan_id: strawberry.ID
    thread_id: str
    checkpoint: CheckpointRef | None
    first_invalidated_decision_id: strawberry.ID
    decision_type: DecisionType

    @classmethod
    def of(cls, point: DomainFrontierPoint) -> ReplayPoint:
        return cls(
            plan_id=strawberry.ID(point.plan_id),
            thread_id=point.thread_id,
            checkpoint=_checkpoint(point.checkpoint),
            first_invalidated_decision_id=strawberry.ID(point.first_invalidated_decision_id),
            decision_type=DecisionType(point.decision_type.value),
        )


@strawberry.type
class CorrectionAttempt:
    model: strawberry.Private[DomainCorrectionAttempt]
    attempt_id: strawberry.ID
    attempt_number: int
    mode: CorrectionMode
    guidance: str
    reason: str
    requested_by: str
    at: datetime

    # What the correction invalidated is counted as the caller may see it: a count must not tell
    # of decisions or plans in plans hidden from it, any more than a list of ids may.
    @strawberry.field
    async def invalidated_decision_count(self, info: Info[Context, None]) -> int:
        if not info.context.limited:
            return len(self.model.invalidated_decision_ids)
        return len(await _visible_decisions(info, self.model.invalidated_decision_ids))

    @strawberry.field
    async def invalidated_plan_count(self, info: Info[Context, None]) -> int:
        if not info.context.limited:
            return len(self.model.invalidated_plan_ids)
        return len(await _visible_plans(info, self.model.invalidated_plan_ids))

    @strawberry.field
    async def counts_by_type(self, info: Info[Context, None]) -> list[CountByType]:
        return await _counts_seen(info, self.model.invalidated_decision_ids, self.model.counts_by_type)

    replay_outcome: str
    original_decision_id: strawberry.ID
    corrected_decision_id: strawberry.ID
    correction_decision_id: strawberry.ID
    replay_detail: str | None

    @strawberry.field
    async def replayed_decision_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        """The decisions the replay recorded, as the replaying actor reported them: those the caller may see."""
        ids = self.model.replayed_decision_ids
        if info.context.limited:
            seen = {d.decision_id for d in await _visible_decisions(info, ids)}
            ids = tuple(i for i in ids if i in seen)
        return [strawberry.ID(i) for i in ids]

    @strawberry.field(
        description="Where the invalidated work re-runs: each actor run's first invalidated decision and its checkpoint (those the caller may see)."
    )  # type: ignore[untyped-decorator]
    async def replay_frontier(self, info: Info[Context, None]) -> list[ReplayPoint]:
        points = self.model.replay_frontier
        if info.context.limited:
            seen = {p.plan_id for p in await _visible_plans(info, [p.plan_id for p in points])}
            points = tuple(p for p in points if p.plan_id in seen)
        return [ReplayPoint.of(p) for p in points]

    @classmethod
    def of(cls, a: DomainCorrectionAttempt) -> CorrectionAttempt:
        return cls(
            original_decision_id=strawberry.ID(a.original_decision_id),
            corrected_decision_id=strawberry.ID(a.corrected_decision_id),
            correction_decision_id=strawberry.ID(a.correction_decision_id),
            replay_detail=a.replay_detail,
            attempt_id=strawberry.ID(a.attempt_id),
            attempt_number=a.attempt_number,
            mode=CorrectionMode(a.mode.value),
            guidance=a.guidance,
            reason=a.reason,
            requested_by=a.requested_by,
            at=a.at,
            model=a,
            replay_outcome=a.replay_outcome.value,
        )


@strawberry.type
class CorrectionPayload:
    model: strawberry.Private[DomainCorrectionResult]

    @strawberry.field
    def correction(self) -> Decision:
        return Decision(model=self.model.correction)

    @strawberry.field
    async def invalidated(self, info: Info[Context, None]) -> list[Decision]:
        return await _decisions(info, list(self.model.invalidated))

    @strawberry.field
    async def invalidated_plans(self, info: Info[Context, None]) -> list[Plan]:
        return await _plans(info, list(self.model.invalidated_plans))

    @strawberry.field
    async def paths(self, info: Info[Context, None]) -> list[InvalidationPath]:
        """Why each decision was invalidated: the chain of edges from the corrected one."""
        origin = self.model.attempt.corrected_decision_id
        downstream = [d for d in self.model.invalidated if d != origin]
        return await _paths(info, origin, downstream, list(self.model.invalidated_plans))

    @strawberry.field
    def attempt(self) -> CorrectionAttempt:
        return CorrectionAttempt.of(self.model.attempt)

    @strawberry.field
    async def replay_frontier(self, info: Info[Context, None]) -> list[ReplayPoint]:
        """Where each invalidated plan's actor resumes; only plans the caller may see."""
        points = self.model.replay_frontier
        if info.context.limited:
            seen = {p.plan_id for p in await _visible_plans(info, [point.plan_id for point in points])}
            points = tuple(point for point in points if point.plan_id in seen)
        return [ReplayPoint.of(p) for p in points]

    @strawberry.field
    async def cancelled_reviews(self, info: Info[Context, None]) -> list[Review]:
        """Pending reviews the correction made moot, now CANCELLED with it: those in plans you may see
        (a correction's downstream can reach plans of other owners or projects through DEPENDS_ON)."""
        reviews = await call(reading.get_reviews, info.context.trail, list(self.model.cancelled_reviews), info.context.principal)
        return [Review(model=r) for r in reviews]

    @strawberry.field
    async def lapsed_approvals(self, info: Info[Context, None]) -> list[Review]:
        """Resolved reviews whose approval lapsed, now LAPSED: each resolved as a decision the
        correction superseded, so a person approved it on grounds that changed. When the plan asks
        such a question again it is held for a person, whatever the confidence (`Review.reopens`).
        Those in plans you may see."""
        reviews = await call(reading.get_reviews, info.context.trail, list(self.model.lapsed_reviews), info.context.principal)
        return [Review(model=r) for r in reviews]


@strawberry.type
class RecordDecisionPayload:
    """``decision`` when it was persisted; ``review`` when the automation profile held it for a person."""

    decision: Decision | None
    review: Review | None


@strawberry.type
class ResolveReviewPayload:
    review: Review
    decision: Decision


# -- inputs ----------------------------------------------------------------------------------


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


@strawberry.type
class DecisionEvent:
    kind: DecisionEventKind
    plan_id: strawberry.ID
    decision_id: strawberry.ID | None
    review_id: strawberry.ID | None
    at: datetime = strawberry.field(description="when the change was written (just before its commit)")
    cursor: str = strawberry.field(
        description="the event's place in commit order: subscribe again with after: this cursor to receive what came after it"
    )

    @classmethod
    def of(cls, event: events.DecisionEvent) -> DecisionEvent:
        assert event.at is not None and event.seq is not None  # every event published comes from the outbox
        return cls(
            kind=DecisionEventKind(event.kind.value),
            plan_id=strawberry.ID(event.plan_id),
            decision_id=strawberry.ID(event.decision_id) if event.decision_id else None,
            review_id=strawberry.ID(event.review_id) if event.review_id else None,
            at=event.at,
            cursor=str(event.seq),
        )

    @strawberry.field
    async def decision(self, info: Info[Context, None]) -> Decision | None:
        return await _decision(info, str(self.decision_id) if self.decision_id else None)
