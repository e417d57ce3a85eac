"""Who is calling: bearer tokens (static ones, and an OIDC issuer's JWTs) to a principal, for every HTTP
request and WebSocket; the WebSockets each opened, closed when its token is revoked or expires; and the
rate limit each caller's requests draw on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.requests import HTTPConnection

from decisiontrail.access import LOCAL, Action, Principal, TokenRegistry
from decisiontrail.settings import AccessSettings
from decisiontrail.web.limits import RateLimits, retry_after
from decisiontrail.web.oidc import Issuer
from decisiontrail.web.tokens import TokenFile

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Identity:
    """Who a bearer credential says is calling, and what ends it: the static token presented (judged
    again when the token file changes), or the moment a JWT expires (seconds since the epoch)."""

    principal: Principal
    token: str | None = field(default=None, repr=False)
    expires: float | None = None


class Caller(BaseUser):
    """The authenticated caller, as Starlette's ``request.user``, with the rate limit its requests draw on."""

    def __init__(self, identity: Identity, limits: RateLimits | None = None) -> None:
        self.identified = identity
        self.principal = identity.principal
        self.limits = limits

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.name


@dataclass(eq=False)
class _Open:
    identity: Identity
    loop: asyncio.AbstractEventLoop
    close: Callable[[str], Awaitable[None]]


class Credentials:
    """What one service takes as a caller: its static tokens, an OIDC issuer's JWTs
    (``DECISIONTRAIL_OIDC_*``), each caller's rate limit (``DECISIONTRAIL_RATE_*``), and the
    WebSockets open on them, each closed at once when its static token is revoked (the token file
    changed) or when its JWT expires.

    One for each app (``BearerTokens``): its middleware and its GraphQL view (a browser's WebSocket
    sends its token in ``connection_init``) share the issuer's keys, the callers' buckets and the
    open WebSockets.
    """

    def __init__(self, tokens: TokenRegistry, settings: AccessSettings | None = None) -> None:
        settings = settings if settings is not None else AccessSettings.from_env()
        self.tokens = tokens
        self.issuer = Issuer(settings.oidc) if settings.oidc is not None else None
        self.limits = RateLimits(settings.rate_limit, settings.rate_burst) if settings.rate_limit > 0 else None
        self._open: set[_Open] = set()
        self._lock = threading.Lock()  # the token file's watching thread reads the open WebSockets too
        self._closing: set[asyncio.Future[None]] = set()
        if isinstance(tokens, TokenFile):
            tokens.on_change(self.recheck)

    @property
    def enabled(self) -> bool:
        """Whether callers must say who they are; with no tokens and no issuer, anyone local is trusted."""
        return self.tokens.enabled or self.issuer is not None

    async def identify(self, authorization: str | None) -> Identity | None:
        """Who an ``Authorization`` header says is calling: a static token's owner, a JWT's subject,
        anyone local when authentication is off; None for no or an unknown, expired or forged token."""
        if not self.enabled:
            return Identity(LOCAL)
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        principal = self.tokens.authenticate(token)
        if principal is not None:
            return Identity(principal, token=token)
        if self.issuer is not None and token.count(".") == 2:
            verified = await self.issuer.verify(token)
            if verified is not None:
                return Identity(verified.principal, expires=verified.expires)
        return None

    def spend(self, principal: Principal) -> float:
        """Count one request of ``principal``'s: 0 when it may go ahead, else the seconds until it may."""
        return self.limits.spend(principal.name) if self.limits is not None else 0.0

    def opened(self, identity: Identity, close: Callable[[str], Awaitable[None]]) -> Callable[[], None]:
        """Keep a WebSocket opened as ``identity`` until the returned function forgets it: ``close(reason)``
        runs on its event loop when its token is revoked or expires."""
        loop = asyncio.get_running_loop()
        entry = _Open(identity, loop, close)
        timer = None
        if identity.expires is not None:
            timer = loop.call_later(max(0.0, identity.expires - time.time()), self._close, entry, "the token expired")
        with self._lock:
            self._open.add(entry)

        def forget() -> None:
            if timer is not None:
                timer.cancel()
            with self._lock:
                self._open.discard(entry)

        return forget

    def recheck(self) -> None:
        """Close each open WebSocket whose static token no longer names the same caller (from any thread)."""
        with self._lock:
            entries = list(self._open)
        for entry in entries:
            with contextlib.suppress(RuntimeError):  # its loop has closed: so has the WebSocket
                entry.loop.call_soon_threadsafe(self._judge, entry)

    def _judge(self, entry: _Open) -> None:
        identity = entry.identity
        if identity.expires is not None:
            return  # a JWT holds until it expires
        if identity.token is None:
            still = not self.enabled  # anyone local, until tokens are configured
        else:
            still = self.tokens.authenticate(identity.token) == identity.principal
        if not still:
            self._close(entry, "the token was revoked")

    def _close(self, entry: _Open, reason: str) -> None:
        log.info("closing %s's WebSocket: %s", entry.identity.principal.name, reason)
        closing = asyncio.ensure_future(entry.close(reason))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)


class BearerTokens(AuthenticationBackend):
    """Who is calling (``Credentials.identify``), for Starlette's ``AuthenticationMiddleware``.

    A request without a valid token is let through unauthenticated: each operation refuses it
    (``UNAUTHENTICATED``) if it needs a caller, so GraphQL answers it in its own error format.
    The app makes one and hands it to its middleware and its GraphQL view alike.
    """

    def __init__(self, tokens: TokenRegistry, settings: AccessSettings | None = None) -> None:
        self.tokens = tokens
        self.credentials = Credentials(tokens, settings)

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        identity = await self.credentials.identify(conn.headers.get("authorization"))
        if identity is None:
            return None
        principal = identity.principal
        allowed = [action.value for action in Action if principal.may(action)]
        return AuthCredentials(allowed), Caller(identity, self.credentials.limits)


def caller(conn: HTTPConnection) -> Principal | None:
    """The principal the authentication middleware found for this request, if any."""
    user = conn.scope.get("user")
    return user.principal if isinstance(user, Caller) else None


def identified(conn: HTTPConnection) -> Identity | None:
    """What the authentication middleware found for this request, if anything."""
    user = conn.scope.get("user")
    return user.identified if isinstance(user, Caller) else None


def over_limit(conn: HTTPConnection) -> int | None:
    """Count this request against its caller's rate limit: None when it may go ahead, else the whole
    seconds it should wait (``Retry-After``). A request with no caller counts against nothing."""
    user = conn.scope.get("user")
    if not isinstance(user, Caller) or user.limits is None:
        return None
    wait = user.limits.spend(user.principal.name)
    return retry_after(wait) if wait > 0 else None
