"""GraphQL Plan: a unit of work whose decisions form one tree, its invariants, phase history and hierarchy;
the plan connection."""

from __future__ import annotations

import json
from dataclasses import replace
from collections.abc import Awaitable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from decisiontrail.domain.as_of import PhaseChange as PhaseMove
from decisiontrail.domain.as_of import existed, plan_as_it_stood
from decisiontrail.domain.plan import partial_plan
from decisiontrail.domain.decision import Phase

from decisiontrail.domain import Plan as DomainPlan
from decisiontrail.domain.invariants import Invariant as DomainInvariant
from decisiontrail.domain.invariants import InvariantSet as DomainInvariantSet
from decisiontrail.domain.invariants import Scope as DomainScope
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.schema.context import Context
from decisiontrail.schema.execution import Identities
from decisiontrail.schema.errors import call, client_error
from decisiontrail.schema.analytics import AnalyticsScope, PlanAnalytics
from decisiontrail.schema.selection import TREE_OF_OUTLINES, asks_only
from decisiontrail.services import analysis, reading

from decisiontrail.schema.common import DecisionStatus
from decisiontrail.schema.decision import (
    Decision,
    DecisionConnection,
    DecisionEdge,
    PlanOutline,
    TreeEntry,
    decisions_then,
    ids_are_the_answer,
    load_decision,
)
from decisiontrail.schema.pages import DecisionFilter, PageInfo, asks_for_total, counted, decision_page, opaque_cursor

if TYPE_CHECKING:
    from decisiontrail.schema.dataset import CorrectionExample
    from decisiontrail.schema.runs import PlanRun

MAX_TOP = 100


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
    as_of: strawberry.Private[datetime | None] = None
    """The moment an as-of read asked about (``plan(asOf:)``, or a decision read as of one): the model
    is as it stood then (``plan_as_it_stood``: its phase, not yet invalidated), and every relation
    read through it answers as of the same moment (None: as things stand)."""

    @strawberry.field
    async def phase_history(self, info: Info[Context, None]) -> list[PhaseChange]:
        """Every change of the plan's phase, oldest first (as of a moment, those made by then)."""
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
            if existed(c["at"].to_native(), self.as_of)
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

        _not_dated(self.as_of, "run")
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
        return await plan_as_of(info, parent, self.as_of) if parent else None

    @strawberry.field
    async def spawned_by(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, self.model.spawned_by_decision_id, self.as_of)

    @strawberry.field
    async def decisions(
        self,
        info: Info[Context, None],
        first: int | None = None,
        after: str | None = None,
        filter: DecisionFilter | None = None,
    ) -> DecisionConnection:
        """The plan's decisions in sequence order, a page at a time (at most 100); as of a moment,
        those recorded by then, each as it stood then (its status filtered as of then too)."""
        page = replace(decision_page(first, after, filter), count=asks_for_total(info), as_of=self.as_of)
        total, ids = await call(reading.page_decisions, info.context.trail, self.model.plan_id, page, info.context.caller)
        more = len(ids) > page.first - 1
        ids = ids[: page.first - 1]
        nodes = await decisions_then(info, ids, self.as_of)
        edges = [DecisionEdge(cursor=opaque_cursor("decision", n.model.sequence_number or 0), node=n) for n in nodes]
        return DecisionConnection(
            edges=edges,
            page_info=PageInfo(has_next_page=more, end_cursor=edges[-1].cursor if edges else None),
            total=total,
        )

    @strawberry.field
    async def tree(self, info: Info[Context, None], as_of: datetime | None = None) -> list[TreeEntry]:
        """The current tree in pre-order with depths; ``asOf`` gives the tree as it stood then (by
        default the moment the plan itself is read as of)."""
        as_of = as_of or self.as_of
        if asks_only(info.selected_fields, TREE_OF_OUTLINES):
            # Ids, types and relations only: one statement of outlines instead of whole records.
            outline_tree, outlines = await call(
                reading.get_tree_outline, info.context.trail, self.model.plan_id, info.context.caller, as_of=as_of
            )
            if outline_tree is None:
                return []  # an invalidated plan has no current tree
            nodes = PlanOutline(outlines, as_of).nodes
            return [TreeEntry(depth=depth, decision=nodes[node.decision.decision_id]) for depth, node in outline_tree.root.walk()]
        tree = await call(reading.get_tree, info.context.trail, self.model.plan_id, info.context.caller, as_of=as_of)
        if tree is None:
            return []
        entries = []
        for depth, node in tree.root.walk():
            if as_of is None:  # as it stood then is not as it stands: kept out of the request's loader
                info.context.decisions.prime(node.decision.decision_id, node.decision)
            entries.append(TreeEntry(depth=depth, decision=Decision(model=node.decision, as_of=as_of)))
        return entries

    @strawberry.field
    async def analytics(
        self, info: Info[Context, None], scope: AnalyticsScope = AnalyticsScope.PLAN, top: int = 10
    ) -> PlanAnalytics:
        """Counts by type and phase, confidence, corrections, depth and fan-out, blast radius and
        reviews, of this plan or of its whole hierarchy (the plans below it that you may see)."""
        _not_dated(self.as_of, "analytics")
        if not 0 <= top <= MAX_TOP:
            raise client_error(ValidationFailed(f"top: between 0 and {MAX_TOP}", field="top"))
        result = await call(
            analysis.analyze,
            info.context.trail,
            LoadScope(scope.value),
            self.model.plan_id,
            top=top,
            principal=info.context.caller,
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

        _not_dated(self.as_of, "correctionExamples")
        found = await call(
            dataset.correction_examples,
            info.context.trail,
            plan_id=self.model.plan_id,
            hierarchy=hierarchy,
            principal=info.context.caller,
        )
        return [CorrectionExample.of(e) for e in found]

    @strawberry.field
    async def root_decision(self, info: Info[Context, None]) -> Decision | None:
        current = await _plan_decisions(info, self.model.plan_id, DecisionStatus.CURRENT, self.as_of)
        return next((d for d in current if d.model.parent_decision_id is None), None)

    @strawberry.field
    async def child_plans(self, info: Info[Context, None]) -> list[Plan]:
        ids = await info.context.child_plans.load(self.model.plan_id)
        return await plans_then(info, ids, self.as_of)

    @strawberry.field
    async def ancestors(self, info: Info[Context, None]) -> list[Plan]:
        """The plans above this one, its parent first."""
        chain: list[Plan] = []
        parent_id = self.model.parent_plan_id
        while parent_id is not None:
            parent = await info.context.plans.load(parent_id)
            if parent is None:
                break
            chain.append(await plan_as_of(info, parent, self.as_of))
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
            then = await plans_then(info, children, self.as_of)
            found += then
            level = [p.model.plan_id for p in then]
        return found


async def _plan_decisions(
    info: Info[Context, None], plan_id: str, status: DecisionStatus | None, as_of: datetime | None
) -> list[Decision]:
    found = await call(
        reading.list_decisions,
        info.context.trail,
        plan_id,
        info.context.caller,
        current_only=status is DecisionStatus.CURRENT,
        as_of=as_of,
    )
    if status is DecisionStatus.SUPERSEDED:
        found = [d for d in found if not d.is_current]
    if as_of is None:  # as it stood then is not as it stands: kept out of the request's loader
        for d in found:
            info.context.decisions.prime(d.decision_id, d)
    return [Decision(model=d, as_of=as_of) for d in found]


async def plan_as_of(info: Info[Context, None], plan: DomainPlan, as_of: datetime | None) -> Plan:
    """``plan`` as it stood ``as_of`` (its phase from its dated phase changes), or as it stands (None)."""
    if as_of is None:
        return Plan(model=plan)
    changes = [
        PhaseMove(Phase(c["from_phase"]), Phase(c["to_phase"]), c["at"].to_native())
        for c in await info.context.phase_changes.load(plan.plan_id)
    ]
    return Plan(model=plan_as_it_stood(plan, changes, as_of), as_of=as_of)


async def plans_then(info: Info[Context, None], plan_ids: list[str], as_of: datetime | None) -> list[Plan]:
    """Those of the plans the caller may see that existed ``as_of``, each as it stood then."""
    found = await visible_plans(info, plan_ids)
    return [await plan_as_of(info, p, as_of) for p in found if existed(p.created_at, as_of)]


def _not_dated(as_of: datetime | None, field: str) -> None:
    """Refuse a field the store does not date, read as of a moment: answered as it stands, it would
    be an answer as of another moment."""
    if as_of is not None:
        raise client_error(ValidationFailed(f"{field}: not kept as of a past moment; read it without asOf", field=field))


async def load_plans(info: Info[Context, None], plan_ids: list[str]) -> list[Plan]:
    found = plans_now(info, plan_ids)
    return list(found) if isinstance(found, Identities) else await found


def plans_now(info: Info[Context, None], plan_ids: list[str]) -> Identities | Awaitable[list[Plan]]:
    """The plans, at once when the ids are the answer (as ``_decisions_now``), else once loaded."""
    if ids_are_the_answer(info):
        return Identities(plan_ids, _plan_known_by_id)
    return _loaded_plans(info, plan_ids)


def _plan_known_by_id(plan_id: str) -> Plan:
    return Plan(model=partial_plan(plan_id=plan_id))


async def _loaded_plans(info: Info[Context, None], plan_ids: list[str]) -> list[Plan]:
    return [Plan(model=p) for p in await visible_plans(info, plan_ids)]


async def visible_plans(info: Info[Context, None], plan_ids: Sequence[str]) -> list[DomainPlan]:
    """Those of ``plan_ids`` the caller may see."""
    return [p for p in await info.context.plans.load_many(list(plan_ids)) if p is not None]


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
