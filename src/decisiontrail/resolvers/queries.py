"""Query resolvers: parse arguments, call the store or a service, map to types."""

from __future__ import annotations

import strawberry
from strawberry.types import Info

from decisiontrail.resolvers.context import Context
from decisiontrail.resolvers.errors import call
from decisiontrail.schema.types import Decision, Impact, Lineage, Plan, Review
from decisiontrail.services import correction, reviews


async def decision(info: Info[Context, None], id: strawberry.ID) -> Decision | None:
    found = await info.context.decisions.load(str(id))
    return Decision(model=found) if found else None


async def plan(info: Info[Context, None], id: strawberry.ID) -> Plan | None:
    found = await info.context.plans.load(str(id))
    return Plan(model=found) if found else None


async def impact(info: Info[Context, None], decision_id: strawberry.ID) -> Impact:
    """What correcting the decision would invalidate; writes nothing."""
    return Impact(model=await call(correction.preview, info.context.store, str(decision_id)))


async def pending_reviews(info: Info[Context, None], plan_id: strawberry.ID) -> list[Review]:
    return [Review(model=r) for r in await call(reviews.pending_reviews, info.context.store, str(plan_id))]


async def lineage(info: Info[Context, None], decision_id: strawberry.ID) -> Lineage:
    """Ancestors to the root and upward through parent plans, plus DEPENDS_ON upstream."""
    decision_ids, plan_ids = await call(info.context.store.lineage, str(decision_id))
    return Lineage(decision_ids=decision_ids, plan_ids=plan_ids)
