"""What the command groups read from their arguments alike: times, counts, JSON, invariants, decision references."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeAlias

from decisiontrail.exceptions import NotFound, ValidationFailed

if TYPE_CHECKING:
    from decisiontrail.access import Principal
    from decisiontrail.services import Trail

__all__ = [
    "DECISION_REFERENCE",
    "PLAN_REFERENCE",
    "Commands",
    "at_least_one",
    "at_least_zero",
    "json_object",
    "moment",
    "name_and_statement",
    "plan_reference",
    "resolve_decision",
]

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The ``decisiontrail`` parser's commands, to which each group adds its own."""

DECISION_REFERENCE = "the decision: its ULID, or PLAN_ID#N for the plan's decision with sequence number N (as `tree` prints)"
"""The help of an argument that names a decision (``resolve_decision`` reads it)."""

PLAN_REFERENCE = "its ULID (as `plans` lists it); PLAN_ID#N, a decision as `tree` prints it, names that decision's plan"
"""The help of an argument that names a plan (``plan_reference`` reads it)."""


def resolve_decision(trail: Trail, reference: str, principal: Principal) -> str:
    """A decision's ULID from a ULID or PLAN_ID#N (the plan's decision with sequence number N, as
    `tree` prints), as ``principal`` reads the plan."""
    plan_id, hash_sign, number = reference.partition("#")
    if not hash_sign:
        return reference
    if not number.isdigit():
        raise ValidationFailed(f"decision: {reference!r} is neither a ULID nor PLAN_ID#N", field="decision_id")
    from decisiontrail.services import reading

    for decision in reading.list_decisions(trail, plan_id, principal):
        if decision.sequence_number == int(number):
            return decision.decision_id
    raise NotFound("decision", reference)


def plan_reference(text: str) -> str:
    """A plan's id from its ULID or from PLAN_ID#N, a decision reference as `tree` prints it (the plan of
    the decision), so that what names a decision can be pasted where its plan is asked for.

    >>> plan_reference("01ARZ3NDEKTSV4RRFFQ69G5FAV#3")
    '01ARZ3NDEKTSV4RRFFQ69G5FAV'
    >>> plan_reference("01ARZ3NDEKTSV4RRFFQ69G5FAV#x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '01ARZ3NDEKTSV4RRFFQ69G5FAV#x' is neither a ULID nor PLAN_ID#N
    """
    plan_id, hash_sign, number = text.partition("#")
    if hash_sign and not (plan_id and number.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is neither a ULID nor PLAN_ID#N")
    return plan_id


def moment(text: str) -> datetime:
    """``--as-of TIME``: an ISO 8601 time, UTC if it has no offset.

    >>> moment("2026-01-02T03:04:05")
    datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    """
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def at_least_one(text: str) -> int:
    return _at_least(text, 1)


def at_least_zero(text: str) -> int:
    return _at_least(text, 0)


def _at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"at least {least}, not {value}")
    return value


def name_and_statement(text: str) -> tuple[str, str]:
    """An invariant given as NAME=STATEMENT."""
    name, equals, statement = text.partition("=")
    if not equals or not name.strip() or not statement.strip():
        raise ValidationFailed(f"invariant: {text!r} is not NAME=STATEMENT", field="invariant")
    return name.strip(), statement.strip()


def json_object(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError('a JSON object, such as {"limit": 100}')
    return value
