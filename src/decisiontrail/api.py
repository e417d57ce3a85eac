"""The GraphQL API: Query, Mutation and Subscription assembled in one place from the resolvers and the schema's types."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncGenerator, Iterator
from datetime import UTC, datetime
from typing import Any

import strawberry
from graphql import GraphQLError, OperationDefinitionNode
from strawberry.schema.config import StrawberryConfig
from strawberry.types import ExecutionContext
from strawberry.schema.types.base_scalars import DateTimeDefinition
from strawberry.types import Info
from strawberry.extensions import (
    AddValidationRules,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)

from decisiontrail.resolvers import mutations, queries
from decisiontrail.resolvers.writes import ReadsAfterWrite
from decisiontrail.resolvers.permissions import Authenticated
from decisiontrail.resolvers.trends import trends as trends_resolver
from decisiontrail.schema.audit import AuditPage
from decisiontrail.schema.context import Context
from decisiontrail.schema.dataset import CorrectionExample
from decisiontrail.schema.runs import PlanRun
from decisiontrail.schema.errors import should_mask
from decisiontrail.schema.execution import DirectFieldsExecutionContext
from decisiontrail.schema.input_plans import build_inputs_directly
from decisiontrail.schema.correction import CorrectionAttempt, CorrectionPayload, Impact, Lineage
from decisiontrail.schema.decision import Decision, DecisionConnection
from decisiontrail.schema.payloads import DecisionEvent, RecordDecisionPayload, ResolveReviewPayload
from decisiontrail.schema.plan import InvariantSet, Plan, PlanConnection
from decisiontrail.schema.review import Review, ReviewConnection
from decisiontrail.schema.viewer import Viewer

log = logging.getLogger(__name__)

MAX_DEPTH = 12
MAX_ALIASES = 30
MAX_TOKENS = 5000


@strawberry.type
class Query:
    viewer: Viewer = strawberry.field(
        resolver=queries.viewer,
        description="The caller: its token's name, role and project, and the actions its role allows.",
        permission_classes=[Authenticated],
    )
    decision: Decision | None = strawberry.field(
        resolver=queries.decision,
        description="A decision by id; with asOf, as it stood then, and every relation read through it as of then too.",
        permission_classes=[Authenticated],
    )
    plan: Plan | None = strawberry.field(
        resolver=queries.plan,
        description="A plan by id; with asOf, as it stood then (phase, tree, decisions and their statuses), every relation as of then too.",
        permission_classes=[Authenticated],
    )
    plans: PlanConnection = strawberry.field(
        resolver=queries.plans,
        description=(
            "Plans, a page at a time, in creation order (newestFirst: newest first); search finds them by description, "
            "id or project; project, phase, hasCorrections, hasPendingReviews and maxConfidence filter them."
        ),
        permission_classes=[Authenticated],
    )
    search_decisions: DecisionConnection = strawberry.field(
        resolver=queries.search_decisions,
        description=(
            "Decisions across plans found by the words of their question, chosen option or rationale, or by id "
            "(any case), best first; superseded ones too."
        ),
        permission_classes=[Authenticated],
    )
    impact: Impact = strawberry.field(
        resolver=queries.impact,
        description="What correcting a decision would invalidate (writes nothing).",
        permission_classes=[Authenticated],
    )
    reviews: ReviewConnection = strawberry.field(
        resolver=queries.review_inbox,
        description="The reviewer's inbox across plans: reviews by status, plan and project, oldest first.",
        permission_classes=[Authenticated],
    )
    review: Review | None = strawberry.field(
        resolver=queries.review,
        description="A review by id: what it proposes (and its digest), who resolved it, whether its approval lapsed.",
        permission_classes=[Authenticated],
    )
    pending_reviews: list[Review] = strawberry.field(
        resolver=queries.pending_reviews,
        description="Decisions of a plan waiting for a person.",
        permission_classes=[Authenticated],
    )
    invariant_set: InvariantSet | None = strawberry.field(
        resolver=queries.invariant_set,
        description="The global set of invariants (scope GLOBAL) or a project's (scope PROJECT).",
        permission_classes=[Authenticated],
    )
    lineage: Lineage = strawberry.field(
        resolver=queries.lineage,
        description="Where a decision comes from: ancestors through parent plans, and dependencies.",
        permission_classes=[Authenticated],
    )
    run: PlanRun | None = strawberry.field(
        resolver=queries.run, description="A plan run by id (Plan.run names a plan's).", permission_classes=[Authenticated]
    )
    correction_dataset: list[CorrectionExample] = strawberry.field(
        resolver=queries.correction_dataset,
        description="A project's corrections as evaluation examples (LangSmith, Langfuse, Phoenix), oldest first.",
        permission_classes=[Authenticated],
    )
    trends = strawberry.field(
        resolver=trends_resolver,
        description="A project's trends: the trends page's plots (docs/trends.md).",
        permission_classes=[Authenticated],
    )
    audit_trail: AuditPage = strawberry.field(
        resolver=queries.audit_trail,
        description=(
            "Every write's audit entry (who, what, when, the request id), newest first; planId, principal, since, "
            "until and requestId filter it (admins: docs/security.md, Audit trail)."
        ),
        permission_classes=[Authenticated],
    )


def write(**kwargs: Any) -> Any:
    """A mutation field: it forgets the request's reads before it runs (``ReadsAfterWrite``)."""
    return strawberry.mutation(**kwargs, extensions=[ReadsAfterWrite()])


@strawberry.type
class Mutation:
    instantiate_plan: Plan = write(resolver=mutations.instantiate_plan, permission_classes=[Authenticated])
    run_plan: Plan = write(
        resolver=mutations.run_plan,
        description="Instantiate a plan and run it in the service: reconciliation, strategy, reviews, child plans, execution, Apply (Plan.run).",
        permission_classes=[Authenticated],
    )
    cancel_run: PlanRun = write(
        resolver=mutations.cancel_run,
        description="Stop a run that has not finished; its plan stays as far as it got.",
        permission_classes=[Authenticated],
    )
    record_decision: RecordDecisionPayload = write(resolver=mutations.record_decision, permission_classes=[Authenticated])
    record_decisions: list[RecordDecisionPayload] = write(resolver=mutations.record_decisions, permission_classes=[Authenticated])
    add_dependency: Decision = write(resolver=mutations.add_dependency, permission_classes=[Authenticated])
    resolve_review: ResolveReviewPayload = write(resolver=mutations.resolve_review, permission_classes=[Authenticated])
    correct_decision: CorrectionPayload = write(resolver=mutations.correct_decision, permission_classes=[Authenticated])
    advance_phase: Plan = write(resolver=mutations.advance_phase, permission_classes=[Authenticated])
    record_replay: CorrectionAttempt = write(
        resolver=mutations.record_replay,
        description="How a correction's replay went (REPLAYED, FAILED, NOT_NEEDED) and which decisions it recorded.",
        permission_classes=[Authenticated],
    )
    add_guidance: Decision = write(
        resolver=mutations.add_guidance,
        description="Guidance without a correction (ADR-033's `agents plan prompt`): a user_intervention the actor's next decisions can depend on.",
        permission_classes=[Authenticated],
    )
    attach_artifacts: Decision = write(
        resolver=mutations.attach_artifacts,
        description="Artifacts a decision produced later, during Execute (each added once); nothing else about it changes.",
        permission_classes=[Authenticated],
    )
    set_invariants: InvariantSet = write(
        resolver=mutations.set_invariants,
        description="Replace the global set of invariants or a project's; plans instantiated afterwards gather it (admins).",
        permission_classes=[Authenticated],
    )
    add_invariant: Decision = write(
        resolver=mutations.add_invariant,
        description="ADR-007's missing constraint: a plan in Strategize declares it and an invariant_enforced records it.",
        permission_classes=[Authenticated],
    )
    remove_invariant: CorrectionPayload = write(
        resolver=mutations.remove_invariant,
        description="ADR-007's invariant that should not apply: its invariant_enforced is corrected away, and the plan stops declaring it.",
        permission_classes=[Authenticated],
    )


@strawberry.type
class Subscription:
    @strawberry.subscription(  # type: ignore[untyped-decorator]
        description=(
            "A plan's recorded, superseded and review events over graphql-transport-ws, in commit order, whichever "
            "process serving this database made them; with after: the cursor of the last event seen, first every "
            "event committed after it."
        ),
        permission_classes=[Authenticated],
    )
    async def decision_events(
        self, info: Info[Context, None], plan_id: strawberry.ID, after: str | None = None
    ) -> AsyncGenerator[DecisionEvent, None]:
        async for event in queries.decision_events(info, plan_id, after):
            yield event


# The limits' validation rules are built once, not per request: a document's validation is then
# cached across requests (the cache keys on the rules as well as on the document).
LIMIT_RULES = [
    *QueryDepthLimiter(max_depth=MAX_DEPTH).validation_rules,
    *MaxAliasesLimiter(max_alias_count=MAX_ALIASES).validation_rules,
]
QUERY_CACHE_SIZE = 512  # distinct documents kept parsed and validated; bounded against floods of unique queries


def _parse_datetime(value: object) -> datetime:
    """strawberry's DateTime, read in UTC when it gives no offset: every stored time is UTC, and
    comparing one with a naive time would fail (``tree(asOf: "2024-01-01T00:00:00")`` was a masked error)."""
    assert DateTimeDefinition.parse_value is not None
    parsed: datetime = DateTimeDefinition.parse_value(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


DateTime = dataclasses.replace(DateTimeDefinition, parse_value=_parse_datetime)


class OperationNamed(SchemaExtension):
    """A document of several operations is refused without ``operationName`` (GraphQL, Executing
    Requests: GetOperation). strawberry gives graphql-core the first operation's name when none
    was sent, so "Attach" then "Apply" sent together ran only the first and answered 200."""

    def on_validate(self) -> Iterator[None]:
        # Before validation: strawberry answers with the errors it finds set, and validates no further.
        context = self.execution_context
        document = context.graphql_document
        if not context.pre_execution_errors and document is not None and context._provided_operation_name is None:
            if sum(isinstance(d, OperationDefinitionNode) for d in document.definitions) > 1:
                context.pre_execution_errors = [
                    GraphQLError("Must provide operation name if query contains multiple operations.")
                ]
        yield


class Schema(strawberry.Schema):
    """The schema, logging only what is the server's fault.

    strawberry logs every error with its traceback. A client error (NOT_FOUND, VALIDATION_FAILED,
    a malformed document, ...) is the caller's answer, not an operator's concern: it goes to
    debug. What gets masked is a bug and keeps its traceback at error level.
    """

    def process_errors(self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None) -> None:
        for error in errors:
            if should_mask(error):
                super().process_errors([error], execution_context)
            else:
                log.debug("client error: %s", error.message)


schema = Schema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    config=StrawberryConfig(scalar_map={datetime: DateTime}),
    execution_context_class=DirectFieldsExecutionContext,
    extensions=[
        lambda: AddValidationRules(LIMIT_RULES),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: ParserCache(maxsize=QUERY_CACHE_SIZE),
        lambda: ValidationCache(maxsize=QUERY_CACHE_SIZE),
        OperationNamed,
        lambda: MaskErrors(should_mask_error=should_mask),
    ],
)
build_inputs_directly(schema)
