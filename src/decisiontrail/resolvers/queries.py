"""Query resolvers: parse arguments, call a service, map to types."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from typing import cast

import strawberry
from strawberry.types import Info

from decisiontrail.domain import Phase as DomainPhase
from decisiontrail.domain.as_of import existed
from decisiontrail.domain.audit import AuditPage as AuditWanted
from decisiontrail.domain.pages import DecisionSearch, PlanPage, ReviewPage, page_size, search_text
from decisiontrail.domain.invariants import Scope
from decisiontrail.domain.recording import ReviewStatus
from decisiontrail import events
from decisiontrail.events import FellBehind
from decisiontrail.exceptions import Unavailable, ValidationFailed
from decisiontrail.schema.audit import AuditEdge, AuditEntry, AuditPage, audit_cursor, parse_audit_cursor
from decisiontrail.schema.context import Context
from decisiontrail.schema.dataset import CorrectionExample
from decisiontrail.schema.errors import call, client_error
from decisiontrail.domain.decision import Phase
from decisiontrail.schema.correction import Impact, Lineage
from decisiontrail.schema.decision import Decision, DecisionConnection, DecisionEdge, load_decision
from decisiontrail.schema.pages import (
    PageInfo,
    asks_for_total,
    parse_cursor,
    parse_search_cursor,
    plan_cursor,
    review_cursor,
    search_cursor,
)
from decisiontrail.schema.payloads import DecisionEvent
from decisiontrail.schema.plan import InvariantSet, Plan, PlanConnection, PlanEdge, plan_as_of
from decisiontrail.schema.review import Review, ReviewConnection, ReviewEdge
from decisiontrail.schema.runs import PlanRun
from decisiontrail.schema.viewer import Viewer
from decisiontrail.services import audit, correction, dataset, reading, relay, reviews, runs
from decisiontrail.services import invariants as invariants_service


def viewer(info: Info[Context, None]) -> Viewer:
    """The caller itself: any caller the request's authentication found may read its own."""
    return Viewer.of(info.context.caller)


async def decision(info: Info[Context, None], id: strawberry.ID, as_of: datetime | None = None) -> Decision | None:
    """A decision by id; ``asOf`` a past moment, as it stood then, with every relation read through
    it as of then too (null if it was not recorded yet)."""
    return await load_decision(info, str(id), as_of)


async def plan(info: Info[Context, None], id: strawberry.ID, as_of: datetime | None = None) -> Plan | None:
    """A plan by id; ``asOf`` a past moment, as it stood then (its phase, its tree, its decisions and
    their statuses), every relation read through it as of then too (null if it did not exist yet)."""
    found = await info.context.plans.load(str(id))
    if found is None or not existed(found.created_at, as_of):
        return None
    return await plan_as_of(info, found, as_of)


async def run(info: Info[Context, None], id: strawberry.ID) -> PlanRun | None:
    """A run by id; null for one that does not exist or lies in a plan the caller may not see."""
    found = await call(runs.find_run, info.context.trail, str(id), info.context.caller)
    return PlanRun.of(found) if found is not None else None


async def impact(info: Info[Context, None], decision_id: strawberry.ID, as_of: datetime | None = None) -> Impact:
    """What correcting the decision would invalidate (with ``asOf``: would have, then); writes nothing."""
    found = await call(correction.preview, info.context.trail, str(decision_id), principal=info.context.caller, as_of=as_of)
    return Impact(model=found, as_of=as_of)


async def review(info: Info[Context, None], id: strawberry.ID, as_of: datetime | None = None) -> Review | None:
    """A review by id (with ``asOf``: as it stood then); null for one that does not exist (did not
    yet) or lies in a plan the caller may not see."""
    found = await call(reading.get_reviews, info.context.trail, [str(id)], info.context.caller, as_of=as_of)
    return Review(model=found[0], as_of=as_of) if found else None


async def pending_reviews(info: Info[Context, None], plan_id: strawberry.ID) -> list[Review]:
    found = await call(reviews.pending_reviews, info.context.trail, str(plan_id), principal=info.context.caller)
    return [Review(model=r) for r in found]


async def lineage(info: Info[Context, None], decision_id: strawberry.ID, as_of: datetime | None = None) -> Lineage:
    """Ancestors to the root and upward through parent plans, plus DEPENDS_ON upstream."""
    decision_ids, plan_ids = await call(reading.lineage, info.context.trail, str(decision_id), info.context.caller, as_of=as_of)
    return Lineage(decision_ids=decision_ids, plan_ids=plan_ids, as_of=as_of)


async def plans(
    info: Info[Context, None],
    first: int | None = None,
    after: str | None = None,
    phase: Phase | None = None,
    top_level: bool | None = None,
    search: str | None = None,
    newest_first: bool | None = False,
    project: str | None = None,
    has_corrections: bool | None = None,
    has_pending_reviews: bool | None = None,
    max_confidence: float | None = None,
) -> PlanConnection:
    """Plans in creation order (``newestFirst``: newest first), a page at a time (at most 100);
    ``topLevel`` keeps hierarchy roots, ``search`` those whose description, id or project contains it
    (case-insensitive), ``project`` a project's, ``hasCorrections`` those holding a correction (false:
    none), ``hasPendingReviews`` those with a review waiting (false: none), ``maxConfidence`` those
    with a current decision of a confidence at most it."""
    try:
        size = page_size(first)
        search = search_text(search)
    except ValidationFailed as e:
        raise client_error(e) from e
    page = PlanPage(
        first=size + 1,
        after=parse_cursor("plan", after),
        phase=DomainPhase(phase.value) if phase else None,
        top_level=top_level,
        project=project,
        search=search,
        has_corrections=has_corrections,
        has_pending_reviews=has_pending_reviews,
        max_confidence=max_confidence,
        count=asks_for_total(info),
        newest_first=bool(newest_first),
    )
    total, ids = await call(reading.page_plans, info.context.trail, page, info.context.caller)
    more = len(ids) > size
    found = await info.context.plans.load_many(ids[:size])
    edges = [PlanEdge(cursor=plan_cursor(p.plan_id), node=Plan(model=p)) for p in found if p is not None]
    return PlanConnection(
        edges=edges, page_info=PageInfo(has_next_page=more, end_cursor=edges[-1].cursor if edges else None), total=total
    )


async def search_decisions(
    info: Info[Context, None],
    text: str,
    first: int | None = 20,
    after: str | None = None,
    project: str | None = None,
    plan_id: strawberry.ID | None = None,
) -> DecisionConnection:
    """Decisions across plans whose question, chosen option or rationale holds every word of
    ``text`` (whole words, any case), or whose id it is (any case), best first: the decision of that
    id, then by how well the words match (a question weighs most, then the chosen option), a page at
    a time (at most 100). Superseded decisions are found too; ``project`` and ``planId`` narrow it."""
    try:
        size = page_size(first)
    except ValidationFailed as e:
        raise client_error(e) from e
    try:
        wanted = search_text(text)
    except ValidationFailed as e:
        raise client_error(ValidationFailed(str(e).replace("search:", "text:", 1), field="text")) from e
    after_hit = parse_search_cursor(after)
    if wanted is None:  # nothing to look for: nothing found
        return DecisionConnection(edges=[], page_info=PageInfo(has_next_page=False, end_cursor=None), total=0)
    search = DecisionSearch(
        text=wanted,
        first=size + 1,
        after=after_hit,
        plan_id=str(plan_id) if plan_id is not None else None,
        project=project,
        count=asks_for_total(info),
    )
    total, hits = await call(reading.search_decisions, info.context.trail, search, info.context.caller)
    page = hits[:size]
    found = await info.context.decisions.load_many([h.decision_id for h in page])
    edges = [DecisionEdge(cursor=search_cursor(h), node=Decision(model=d)) for h, d in zip(page, found, strict=True) if d]
    return DecisionConnection(
        edges=edges,
        page_info=PageInfo(has_next_page=len(hits) > size, end_cursor=search_cursor(page[-1]) if page else None),
        total=total,
    )


async def review_inbox(
    info: Info[Context, None],
    status: ReviewStatus | None = None,
    plan_id: strawberry.ID | None = None,
    project: str | None = None,
    first: int | None = None,
    after: str | None = None,
    as_of: datetime | None = None,
) -> ReviewConnection:
    """The reviewer's inbox across plans, oldest first, a page at a time (at most 100): filtered by
    status, plan and project, and limited to the plans the caller may see. With ``asOf``: the
    reviews created by then, each as it stood then (the status filter too)."""
    try:
        size = page_size(first)
    except ValidationFailed as e:
        raise client_error(e) from e
    page = ReviewPage(
        first=size + 1,
        after=parse_cursor("review", after),
        status=status.value if status else None,
        plan_id=str(plan_id) if plan_id is not None else None,
        project=project,
        count=asks_for_total(info),
        as_of=as_of,
    )
    total, found = await call(reading.page_reviews, info.context.trail, page, info.context.caller)
    edges = [ReviewEdge(cursor=review_cursor(r.review_id), node=Review(model=r, as_of=as_of)) for r in found[:size]]
    return ReviewConnection(
        edges=edges,
        page_info=PageInfo(has_next_page=len(found) > size, end_cursor=edges[-1].cursor if edges else None),
        total=total,
    )


async def decision_events(
    info: Info[Context, None], plan_id: strawberry.ID, after: str | None = None
) -> AsyncGenerator[DecisionEvent, None]:
    """A plan's recorded, superseded and review events, in commit order, from every process
    serving this database: from now on, or, given the ``cursor`` of the last event seen, first
    every event committed after it (what a subscriber that reconnects missed)."""
    bus = info.context.events
    if bus is None:
        raise client_error(Unavailable("this server publishes no events"))
    cursor = _cursor(after)
    await info.context.require_plan(str(plan_id))
    trail, principal = info.context.trail, info.context.caller
    live = bus.listen(str(plan_id))  # listening before the outbox is read: nothing falls between the two
    try:
        # The plan's events numbered up to ``last`` are given (or were before it began); those after it are owed.
        if cursor is None:
            missed_before, last = [], await call(relay.end, trail.database)
        else:
            caught_up = await call(relay.missed, trail.database, str(plan_id), cursor, principal=principal)
            missed_before, last = caught_up.events, caught_up.through
        live.begin_after(last)
        if trail.relay is not None:
            trail.relay.wake()  # a relay with nobody listening waits for where to begin
        for event in missed_before:
            yield DecisionEvent.of(event)
        while True:
            try:
                event = await anext(live)
            except FellBehind:
                # Too slow for the queue: what it lost is in the outbox, after the last event given.
                caught_up = await call(relay.missed, trail.database, str(plan_id), last, principal=principal)
                for missed in caught_up.events:
                    yield DecisionEvent.of(missed)
                last = caught_up.through
                continue
            if event.seq is not None and event.seq <= last:
                continue  # read from the outbox already, or committed before this subscriber began
            last = event.seq if event.seq is not None else last
            yield _given(event)
    finally:
        live.close()


def _given(event: events.DecisionEvent) -> DecisionEvent:
    """A live event as the schema has it: one object for every subscriber here, who are all given
    the same event, so a subscription's answer to it is made once for all with the same key
    (``schema.sharing``)."""
    given = event.made.get(DecisionEvent)
    if given is None:
        given = event.made.setdefault(DecisionEvent, DecisionEvent.of(event))
    return cast(DecisionEvent, given)


def _cursor(after: str | None) -> int | None:
    if after is None:
        return None
    if not after.isascii() or not after.isdigit() or len(after) > 18:  # a sequence number fits Neo4j's 64-bit integers
        raise client_error(ValidationFailed(f"after: {after[:40]!r} is not a cursor (an event's cursor field)", field="after"))
    return int(after)


async def correction_dataset(info: Info[Context, None], project: str) -> list[CorrectionExample]:
    """A project's corrections as evaluation examples, oldest first, across the plans the caller may see."""
    found = await call(dataset.correction_examples, info.context.trail, project=project, principal=info.context.caller)
    return [CorrectionExample.of(e) for e in found]


async def invariant_set(info: Info[Context, None], scope: Scope, project: str | None = None) -> InvariantSet | None:
    """The global set of invariants or a project's; null when it was never set (or is another project's
    than the caller's)."""
    found = await call(invariants_service.invariant_set, info.context.trail, scope, project, info.context.caller)
    return InvariantSet.of(found) if found is not None else None


async def audit_trail(
    info: Info[Context, None],
    first: int | None = None,
    after: str | None = None,
    plan_id: strawberry.ID | None = None,
    principal: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    request_id: str | None = None,
) -> AuditPage:
    """Every write's audit entry, newest first, a page at a time (at most 100): of a plan, by a
    principal (its name), written at or after ``since`` and before ``until``, in a request. Admins only."""
    try:
        size = page_size(first)
    except ValidationFailed as e:
        raise client_error(e) from e
    wanted = AuditWanted(
        first=size + 1,
        after=parse_audit_cursor(after),
        plan_id=str(plan_id) if plan_id is not None else None,
        principal=principal,
        since=since,
        until=until,
        request_id=request_id,
    )
    found = await call(audit.audit_trail, info.context.trail, wanted, info.context.caller)
    edges = [AuditEdge(cursor=audit_cursor(e), node=AuditEntry.of(e)) for e in found[:size]]
    return AuditPage(
        edges=edges, page_info=PageInfo(has_next_page=len(found) > size, end_cursor=edges[-1].cursor if edges else None)
    )
