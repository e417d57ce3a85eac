"""GraphQL Decision: a typed choice point, its fields mapped from the domain record and its relations read
through the request's DataLoaders; the decision connection and tree entries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types import Info

from decisiontrail.domain import Decision as DomainDecision
from decisiontrail.domain.decision import partial_decision
from decisiontrail.domain.as_of import attempt_as_it_stood, existed
from decisiontrail.domain.correction import as_it_stood
from decisiontrail.domain.decision import DecisionType, Phase

from decisiontrail.schema.context import Context
from decisiontrail.schema.execution import Identities
from decisiontrail.schema.selection import IDS, asks_only

from decisiontrail.schema.common import (
    ArtifactRef,
    CheckpointGroup,
    ContextSnapshot,
    CountByType,
    DecisionStatus,
    counts,
    snapshot_of,
)
from decisiontrail.schema.pages import PageInfo, counted

if TYPE_CHECKING:
    from decisiontrail.schema.correction import CorrectionAttempt
    from decisiontrail.schema.plan import Plan


@strawberry.type
class Decision:
    """A typed choice point in a plan's decision tree."""

    model: strawberry.Private[DomainDecision]
    # Set when the model is an outline (Plan.tree's one-statement path): its plan's other
    # decisions, so children and dependsOn resolve from memory.
    outline: strawberry.Private[PlanOutline | None] = None
    as_of: strawberry.Private[datetime | None] = None
    """The moment an as-of read asked about (``decision(asOf:)``, ``lineage(asOf:)``, a plan's tree
    then, ...): the model is as it stood then (``as_it_stood``), and every relation read through it
    answers as of the same moment (None: as things stand)."""

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
        return snapshot_of(self.model.context_snapshot)

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
            ArtifactRef(artifact_path=a.artifact_path, artifact_type=a.artifact_type, digest=a.digest, attached_at=a.attached_at)
            for a in self.model.artifacts_produced
        ]

    @strawberry.field
    async def downstream_decision_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        ids = list(self.model.downstream_decision_ids)
        if info.context.limited or self.as_of is not None:  # dependents may lie in plans the caller may not see, or be younger
            ids = [d.model.decision_id for d in await self._dependents(info)]
        return [strawberry.ID(i) for i in ids]

    @strawberry.field
    async def downstream_plan_ids(self, info: Info[Context, None]) -> list[strawberry.ID]:
        ids = list(self.model.downstream_plan_ids)
        if info.context.limited or self.as_of is not None:
            found = await info.context.plans.load_many(ids)
            ids = [p.plan_id for p in found if p is not None and existed(p.created_at, self.as_of)]
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

    @strawberry.field(graphql_type=strawberry.ID | None)  # type: ignore[untyped-decorator]
    def superseded_by_id(self, info: Info[Context, None]) -> strawberry.ID | None | Awaitable[strawberry.ID | None]:
        """The successor's id; null when current, or when the successor lies in a plan the caller
        may not see (a correction in another project superseding this one through DEPENDS_ON).
        Answered at once unless the caller is limited (an async resolver per decision of a tree costs)."""
        if self.model.superseded_by is None:
            return None
        if not info.context.limited:
            return strawberry.ID(self.model.superseded_by)
        return self._successor_seen(info, self.model.superseded_by)

    async def _successor_seen(self, info: Info[Context, None], successor_id: str) -> strawberry.ID | None:
        return strawberry.ID(successor_id) if await info.context.decisions.load(successor_id) is not None else None

    @strawberry.field
    def superseded_at(self) -> datetime | None:
        return self.model.superseded_at

    @strawberry.field
    def status(self) -> DecisionStatus:
        return DecisionStatus.CURRENT if self.model.is_current else DecisionStatus.SUPERSEDED

    # -- relations, each through this request's DataLoaders --------------------------------

    @strawberry.field
    async def plan(self, info: Info[Context, None]) -> Annotated["Plan", strawberry.lazy("decisiontrail.schema.plan")]:
        from decisiontrail.schema.plan import plan_as_of

        plan = await info.context.plans.load(self.model.plan_id)
        assert plan is not None  # a decision's plan always exists (and existed before it)
        return await plan_as_of(info, plan, self.as_of)

    @strawberry.field
    async def parent(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, self.model.parent_decision_id, self.as_of)

    # children and dependsOn answer synchronously when an outline holds the answer: an async
    # resolver costs a coroutine and a task per decision, half the time of a 1,000-decision tree.

    @strawberry.field(graphql_type=list["Decision"])  # type: ignore[untyped-decorator]
    def children(self, info: Info[Context, None]) -> list[Decision] | Awaitable[list[Decision]]:
        if self.outline is not None:
            return self.outline.children.get(self.model.decision_id, [])
        return _children(info, self.model.decision_id, self.as_of)

    @strawberry.field(graphql_type=list["Decision"])  # type: ignore[untyped-decorator]
    def depends_on(self, info: Info[Context, None]) -> list[Decision] | Awaitable[list[Decision]]:
        if self.outline is not None:
            return self.outline.depends_on(info, self.model)
        if self.as_of is not None:
            return decisions_then(info, list(self.model.depends_on), self.as_of)
        return load_decisions(info, list(self.model.depends_on))

    @strawberry.field
    async def dependents(self, info: Info[Context, None]) -> list[Decision]:
        return await self._dependents(info)

    async def _dependents(self, info: Info[Context, None]) -> list[Decision]:
        """The decisions depending on this one (as of a moment: those that did then, recorded by then
        and, for a dependency added later, added by then)."""
        found = await decisions_then(info, list(self.model.downstream_decision_ids), self.as_of)
        return [d for d in found if self.as_of is None or self.model.decision_id in d.model.depends_on]

    @strawberry.field
    async def downstream_plans(
        self, info: Info[Context, None]
    ) -> list[Annotated["Plan", strawberry.lazy("decisiontrail.schema.plan")]]:
        from decisiontrail.schema.plan import plan_as_of

        plans = await info.context.plans.load_many(list(self.model.downstream_plan_ids))
        return [await plan_as_of(info, p, self.as_of) for p in plans if p is not None and existed(p.created_at, self.as_of)]

    @strawberry.field
    async def corrects(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, self.model.corrects_decision_id, self.as_of)

    @strawberry.field
    async def superseded_by(self, info: Info[Context, None]) -> Decision | None:
        return await load_decision(info, self.model.superseded_by, self.as_of)

    @strawberry.field
    async def corrections(
        self, info: Info[Context, None]
    ) -> list[Annotated["CorrectionAttempt", strawberry.lazy("decisiontrail.schema.correction")]]:
        """The correction attempts on this decision's chain, oldest first (one statement for the
        request's decisions: ``Context.corrections``); as of a moment, those made by then."""
        from decisiontrail.schema.correction import CorrectionAttempt

        attempts = await info.context.corrections.load(self.model.decision_id)
        return [CorrectionAttempt.of(attempt_as_it_stood(a, self.as_of)) for a in attempts if existed(a.at, self.as_of)]


async def load_decision(info: Info[Context, None], decision_id: str | None, as_of: datetime | None = None) -> Decision | None:
    """The decision, if the caller may see it (and, ``as_of`` a moment, it existed then: as it stood then)."""
    if decision_id is None:
        return None
    found = await info.context.decisions.load(decision_id)
    if found is None or not existed(found.created_at, as_of):
        return None
    return Decision(model=as_it_stood(found, as_of), as_of=as_of)


async def load_decisions(info: Info[Context, None], decision_ids: list[str]) -> list[Decision]:
    found = decisions_now(info, decision_ids)
    return list(found) if isinstance(found, Identities) else await found


def decisions_now(info: Info[Context, None], decision_ids: list[str]) -> Identities | Awaitable[list[Decision]]:
    """The decisions, at once when the ids are the answer (built only if more than their ids is
    read: ``schema.execution.Identities``), else once loaded: so a field that returns it is
    completed directly when it can be."""
    if ids_are_the_answer(info):
        return Identities(decision_ids, _decision_known_by_id)
    return _loaded_decisions(info, decision_ids)


def decisions_as_of(
    info: Info[Context, None], decision_ids: list[str], as_of: datetime | None
) -> Identities | Awaitable[list[Decision]]:
    """``_decisions_now``, each decision as it stood ``as_of`` (``as_it_stood``; their ids are the same)."""
    if as_of is None or ids_are_the_answer(info):
        return decisions_now(info, decision_ids)
    return _loaded_as_of(info, decision_ids, as_of)


async def _loaded_as_of(info: Info[Context, None], decision_ids: list[str], as_of: datetime) -> list[Decision]:
    return [Decision(model=as_it_stood(d, as_of), as_of=as_of) for d in await visible_decisions(info, decision_ids)]


async def decisions_then(info: Info[Context, None], decision_ids: list[str], as_of: datetime | None) -> list[Decision]:
    """Those of the decisions that existed ``as_of`` (a relation read as of a moment: a child or a
    dependent recorded later was not there), each as it stood then; as they stand when None."""
    if as_of is None:
        return await load_decisions(info, decision_ids)
    found = await visible_decisions(info, decision_ids)
    return [Decision(model=as_it_stood(d, as_of), as_of=as_of) for d in found if existed(d.created_at, as_of)]


def _decision_known_by_id(decision_id: str) -> Decision:
    return Decision(model=partial_decision(decision_id=decision_id))


async def _loaded_decisions(info: Info[Context, None], decision_ids: list[str]) -> list[Decision]:
    return [Decision(model=d) for d in await visible_decisions(info, decision_ids)]


def ids_are_the_answer(info: Info[Context, None]) -> bool:
    """Only ids are selected, and nothing is hidden from this caller: the ids a walk found answer it."""
    return not info.context.limited and all(asks_only(f.selections, IDS) for f in info.selected_fields)


async def visible_decisions(info: Info[Context, None], decision_ids: Sequence[str]) -> list[DomainDecision]:
    """Those of ``decision_ids`` the caller may see (the loader answers the others as missing)."""
    return [d for d in await info.context.decisions.load_many(list(decision_ids)) if d is not None]


async def counts_seen(info: Info[Context, None], decision_ids: Sequence[str], by_type: Mapping[str, int]) -> list[CountByType]:
    """Counts by type of ``decision_ids`` (``by_type``, already counted), or for a caller some plans
    are hidden from, of those it may see: a count must not tell of hidden plans either."""
    if not info.context.limited:
        return counts(by_type)
    return counts(Counter(d.decision_type.value for d in await visible_decisions(info, decision_ids)))


async def _children(info: Info[Context, None], decision_id: str, as_of: datetime | None) -> list[Decision]:
    return await decisions_then(info, await info.context.children.load(decision_id), as_of)


class PlanOutline:
    """One plan's decisions as outlines, each wrapped once, with their children in sequence order.

    Only selections within ``selection.OUTLINE`` may reach these. PARENT never leaves a plan, so
    every child is here; a dependency in another plan is loaded, and judged visible, as ever.
    """

    def __init__(self, decisions: list[DomainDecision], as_of: datetime | None = None) -> None:
        self.as_of = as_of
        if as_of is not None:  # a child recorded after the moment was not there (an as-of outline has its times)
            decisions = [d for d in decisions if existed(d.created_at, as_of)]
        self.nodes = {d.decision_id: Decision(model=d, outline=self, as_of=as_of) for d in decisions}
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
        loaded = {d.model.decision_id: d for d in await decisions_then(info, elsewhere, self.as_of)}
        found = (self.nodes.get(i) or loaded.get(i) for i in ids)
        return [d for d in found if d is not None]


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
class TreeEntry:
    depth: int
    decision: Decision
