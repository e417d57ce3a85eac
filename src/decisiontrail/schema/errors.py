"""Expected failures as GraphQL errors a client can act on: a code in ``extensions``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from graphql import GraphQLError
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from decisiontrail.exceptions import DecisionTrailError, RuleViolation, ValidationFailed, validation_failed

T = TypeVar("T")

PHASE_RULES = frozenset(
    {
        "type_allowed_in_phase",
        "apply_accepts_no_decisions",
        "phase_transition",
        "no_pending_reviews",
        "strategy_before_execute",
        "invariants_enforced_before_execute",
        "execute_under_strategize",
        "spawn_in_execute",
    }
)


RETRYABLE = frozenset({"UNAVAILABLE", "IDEMPOTENCY_KEY_IN_USE"})
"""Codes of a request worth sending again unchanged: ``extensions.retryable``."""


def unauthenticated() -> GraphQLError:
    """The answer to an operation asked without a known caller (no bearer token, or an unknown one)."""
    return GraphQLError("a bearer token is required (Authorization: Bearer <token>)", extensions={"code": "UNAUTHENTICATED"})


def client_error(error: DecisionTrailError) -> GraphQLError:
    """The GraphQL error for one of ours: its message, and ``extensions.code`` plus the field or rule."""
    extensions: dict[str, Any] = {"code": error.code}
    if isinstance(error, ValidationFailed) and error.field:
        extensions["field"] = error.field
    if isinstance(error, RuleViolation):
        extensions["rule"] = error.rule
        extensions["code"] = "PHASE_VIOLATION" if error.rule in PHASE_RULES else "VALIDATION_FAILED"
    if error.code in RETRYABLE:
        extensions["retryable"] = True
    return GraphQLError(error.message, extensions=extensions)


async def in_thread(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Run a blocking service call off the event loop."""
    return await run_in_threadpool(function, *args, **kwargs)


async def call(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a service call off the event loop, turning our failures into client errors."""
    try:
        return await in_thread(function, *args, **kwargs)
    except DecisionTrailError as e:
        raise client_error(e) from e
    except ValidationError as e:
        raise client_error(validation_failed(e)) from e


def should_mask(error: GraphQLError) -> bool:
    """Mask everything but our client errors and GraphQL's own (syntax, unknown field, ...)."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)
