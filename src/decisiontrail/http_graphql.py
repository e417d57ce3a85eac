"""GraphQL over HTTP's rules for /graphql: the media type an answer is written in, and what a response's status says.

https://graphql.github.io/graphql-over-http/draft/ as graphql-http's server audit checks it
(``tests/test_graphql_over_http.py`` runs that audit): ``application/graphql-response+json`` when
the client asks for it, with a 4xx and no ``data`` for a request that fails before anything runs;
``application/json`` for the others (legacy clients), where such a failure is a 200 with errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

GRAPHQL_RESPONSE: Final = "application/graphql-response+json"
JSON: Final = "application/json"
MEDIA_TYPES: Final = (GRAPHQL_RESPONSE, JSON)
"""What /graphql answers in; a request names what it accepts in ``Accept``."""


def media_type(accept: str | None) -> str | None:
    """The media type to answer a request in, from its ``Accept``; None when it accepts neither.

    The one it weighs higher (``q``); a type it names outweighs one a wildcard covers (RFC 9110:
    the most specific range that matches says a type's weight). Named alike,
    ``application/graphql-response+json`` wins; covered only by a wildcard, or with no ``Accept``
    at all, ``application/json``: a client that names nothing may not know the newer type.

    >>> media_type(None), media_type("*/*"), media_type("application/*")
    ('application/json', 'application/json', 'application/json')
    >>> media_type("application/graphql-response+json, application/json;q=0.9")
    'application/graphql-response+json'
    >>> media_type("application/graphql-response+json;q=0.5, application/json")
    'application/json'
    >>> media_type("application/json;q=0, */*")
    'application/graphql-response+json'
    >>> media_type("text/html") is None, media_type("application/json;q=0") is None
    (True, True)
    """
    if accept is None or not accept.strip():
        return JSON
    weights = {media: (0.0, -1) for media in MEDIA_TYPES}  # (q, specificity of the range that set it)
    for media_range in accept.split(","):
        name, *parameters = (part.strip() for part in media_range.split(";"))
        kind, _, subtype = name.lower().partition("/")
        q = _weight(parameters)
        if q is None or not subtype:
            continue  # a range that does not parse says nothing
        for media in MEDIA_TYPES:
            media_kind, _, media_subtype = media.partition("/")
            if kind == "*" and subtype == "*":
                specificity = 0
            elif kind == media_kind and subtype == "*":
                specificity = 1
            elif kind == media_kind and subtype == media_subtype:
                specificity = 2
            else:
                continue
            if specificity > weights[media][1] or (specificity == weights[media][1] and q > weights[media][0]):
                weights[media] = (q, specificity)

    def rank(media: str) -> tuple[float, bool, bool]:
        q, specificity = weights[media]
        named = specificity == 2
        return q, named, (media == GRAPHQL_RESPONSE) == named

    best = max(MEDIA_TYPES, key=rank)
    return best if weights[best][0] > 0 else None


def _weight(parameters: list[str]) -> float | None:
    """A media range's ``q`` (1 when it gives none); None when it is no number from 0 to 1."""
    for parameter in parameters:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return None
            return q if 0 <= q <= 1 else None
    return 1.0


def content_type(media: str) -> str:
    """The ``Content-Type`` of an answer in ``media``: always UTF-8, and said so.

    >>> content_type(GRAPHQL_RESPONSE)
    'application/graphql-response+json; charset=utf-8'
    """
    return f"{media}; charset=utf-8"


def request_failed(response: Mapping[str, object]) -> bool:
    """Whether a GraphQL response reports a request error, raised before anything ran: a document
    that does not parse or validate, an operation that cannot be told, variables that cannot be
    coerced. Its ``data`` is null and none of its errors has a ``path``: a field error always has one.

    >>> request_failed({"data": None, "errors": [{"message": "Syntax Error: Expected Name, found <EOF>."}]})
    True
    >>> request_failed({"data": None, "errors": [{"message": "plan p does not exist", "path": ["impact"]}]})
    False
    >>> request_failed({"data": {"plan": None}})
    False
    """
    errors = response.get("errors")
    return (
        response.get("data") is None
        and isinstance(errors, list)
        and bool(errors)
        and all(isinstance(error, Mapping) and error.get("path") is None for error in errors)
    )
