"""Who is calling: bearer tokens to a principal, for every HTTP request and WebSocket."""

from __future__ import annotations

import logging

from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.requests import HTTPConnection

from decisiontrail.access import LOCAL, Action, Principal, TokenRegistry

log = logging.getLogger(__name__)


class Caller(BaseUser):
    """The authenticated caller, as Starlette's ``request.user``."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.name


class BearerTokens(AuthenticationBackend):
    """Who is calling: anyone local when no tokens are configured, else the bearer token's owner.

    A request without a valid token is let through unauthenticated: each operation refuses it
    (``UNAUTHENTICATED``) if it needs a caller, so GraphQL answers it in its own error format.
    """

    def __init__(self, tokens: TokenRegistry) -> None:
        self.tokens = tokens

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        principal = self.principal(conn.headers.get("authorization"))
        if principal is None:
            return None
        return AuthCredentials([action.value for action in Action if principal.may(action)]), Caller(principal)

    def principal(self, authorization: str | None) -> Principal | None:
        if not self.tokens.enabled:
            return LOCAL
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        return self.tokens.authenticate(token.strip())


def caller(conn: HTTPConnection) -> Principal | None:
    """The principal the authentication middleware found for this request, if any."""
    user = conn.user
    return user.principal if isinstance(user, Caller) else None
