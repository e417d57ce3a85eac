"""The GraphQL schema: Query and Mutation assembled in one place from the resolvers."""

from __future__ import annotations

import strawberry
from strawberry.extensions import MaskErrors, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter

from decisiontrail.resolvers import mutations, queries
from decisiontrail.resolvers.errors import should_mask
from decisiontrail.schema.types import (
    CorrectionPayload,
    Decision,
    Impact,
    Lineage,
    Plan,
    PlanConnection,
    RecordDecisionPayload,
    ResolveReviewPayload,
    Review,
)

MAX_DEPTH = 12
MAX_ALIASES = 30
MAX_TOKENS = 5000


@strawberry.type
class Query:
    decision: Decision | None = strawberry.field(resolver=queries.decision, description="A decision by id.")
    plan: Plan | None = strawberry.field(resolver=queries.plan, description="A plan by id.")
    plans: PlanConnection = strawberry.field(resolver=queries.plans, description="Plans, a page at a time.")
    impact: Impact = strawberry.field(
        resolver=queries.impact, description="What correcting a decision would invalidate (writes nothing)."
    )
    pending_reviews: list[Review] = strawberry.field(
        resolver=queries.pending_reviews, description="Decisions of a plan waiting for a person."
    )
    lineage: Lineage = strawberry.field(
        resolver=queries.lineage, description="Where a decision comes from: ancestors through parent plans, and dependencies."
    )


@strawberry.type
class Mutation:
    instantiate_plan: Plan = strawberry.mutation(resolver=mutations.instantiate_plan)
    record_decision: RecordDecisionPayload = strawberry.mutation(resolver=mutations.record_decision)
    record_decisions: list[RecordDecisionPayload] = strawberry.mutation(resolver=mutations.record_decisions)
    add_dependency: Decision = strawberry.mutation(resolver=mutations.add_dependency)
    resolve_review: ResolveReviewPayload = strawberry.mutation(resolver=mutations.resolve_review)
    correct_decision: CorrectionPayload = strawberry.mutation(resolver=mutations.correct_decision)
    advance_phase: Plan = strawberry.mutation(resolver=mutations.advance_phase)


schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: MaskErrors(should_mask_error=should_mask),
    ],
)
