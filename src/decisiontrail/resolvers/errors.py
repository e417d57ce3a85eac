"""Expected failures as GraphQL errors a client can act on: a code in ``extensions``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from graphql import GraphQLError
from pydantic import ValidationError

from decisiontrail.domain import Decision, Plan
from decisiontrail.exceptions import DecisionTrailError, NotFound, RuleViolation, ValidationFailed, validation_failed
from decisiontrail.resolvers.context import Context, in_thread

T = TypeVar("T")

PHASE_RULES = frozenset({"type_allowed_in_phase", "apply_accepts_no_decisions", "phase_transition", "no_pending_reviews"})


def client_error(error: DecisionTrailError) -> GraphQLError:
    """The GraphQL error for one of ours: its message, and ``extensions.code`` plus the field or rule."""
    extensions: dict[str, Any] = {"code": error.code}
    if isinstance(error, ValidationFailed) and error.field:
        extensions["field"] = error.field
    if isinstance(error, RuleViolation):
        extensions["rule"] = error.rule
        extensions["code"] = "PHASE_VIOLATION" if error.rule in PHASE_RULES else "VALIDATION_FAILED"
    if error.code == "UNAVAILABLE":
        extensions["retryable"] = True
    return GraphQLError(error.message, extensions=extensions)


async def call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a service call off the event loop, turning our failures into client errors."""
    try:
        return await in_thread(function, *args, **kwargs)
    except DecisionTrailError as e:
        raise client_error(e) from e
    except ValidationError as e:
        raise client_error(validation_failed(e)) from e


async def require_plan(context: Context, plan_id: str) -> Plan:
    """The plan, if it exists and the caller may see it; else NOT_FOUND, as for a plan that does not exist."""
    plan = await context.plans.load(plan_id)
    if plan is None:
        raise client_error(NotFound("plan", plan_id))
    return plan


async def require_decision(context: Context, decision_id: str) -> Decision:
    """The decision, if it exists and the caller may see its plan; else NOT_FOUND."""
    decision = await context.decisions.load(decision_id)
    if decision is None:
        raise client_error(NotFound("decision", decision_id))
    return decision


def should_mask(error: GraphQLError) -> bool:
    """Mask everything but our client errors and GraphQL's own (syntax, unknown field, ...)."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)
