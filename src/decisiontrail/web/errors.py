"""Refusals outside GraphQL's own answers, in JSON with a code, and the HTTP status of each error code."""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse

from decisiontrail import otlp

log = logging.getLogger(__name__)


STATUS = {
    "NOT_FOUND": 404,
    "VALIDATION_FAILED": 400,
    "FORBIDDEN": 403,
    "UNAVAILABLE": 503,
    "CONFLICT": 409,
    "TIMEOUT": 504,
    "TOO_LARGE": 413,
}


RPC_CODES = {
    403: otlp.PERMISSION_DENIED,
    404: otlp.NOT_FOUND,
    409: otlp.ABORTED,
    413: otlp.RESOURCE_EXHAUSTED,
    503: otlp.UNAVAILABLE,
    504: otlp.DEADLINE_EXCEEDED,
}
"""The google.rpc code an OTLP refusal carries beside its HTTP status (400: INVALID_ARGUMENT)."""


HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE"}


def error(status: int, code: str, message: str, **extensions: object) -> JSONResponse:
    named = {k: v for k, v in extensions.items() if v is not None}
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code, **named}}]}, status_code=status)


def rate_limit_error(retry_after: int) -> dict[str, object]:
    """The error a caller over its rate limit is told, in a GraphQL response's ``errors`` or a subscription's ``error``."""
    return {
        "message": f"this caller is over its rate limit; retry after {retry_after} s",
        "extensions": {"code": "RATE_LIMITED", "retryable": True, "retryAfter": retry_after},
    }


def rate_limited(retry_after: int) -> JSONResponse:
    """429 with ``Retry-After``: the caller's requests came faster than its rate limit lets them."""
    return JSONResponse({"errors": [rate_limit_error(retry_after)]}, status_code=429, headers={"Retry-After": str(retry_after)})
