"""The service's ASGI middleware: load shedding, Server-Timing, body size limits, each caller's rate limit,
and stopping the work of a request whose client left."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time

from collections.abc import Callable, Collection, Mapping

from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from decisiontrail.domain.ids import new_ulid
from decisiontrail.services import Trail
from decisiontrail.services.requests import serving, stop_request, timing
from decisiontrail.web.auth import over_limit
from decisiontrail.web.errors import error, rate_limited

log = logging.getLogger(__name__)


MAX_BODY_BYTES = 1024 * 1024


MAX_TRACES_BODY_BYTES = 4 * 1024 * 1024
"""An OTLP export (512 spans a batch by default, with their LLM messages) may be larger than a GraphQL request."""


MAX_IN_FLIGHT = 128
"""Requests served at once before more are refused with 503 and Retry-After (see ShedLoad)."""


MAX_WEBSOCKETS = 10_000
"""WebSockets open at once (subscriptions, each a socket held) before more handshakes are refused
with 503 and Retry-After (see ShedLoad): 1,000 subscribers are told an event within the bench's
figures, and each holds a file descriptor and its buffers."""


class ShedLoad:
    """Beyond ``limit`` HTTP requests in flight, answers 503 with ``Retry-After`` at once instead
    of queueing without bound: a request admitted is served with the latency of a bounded queue,
    and a client told to come back can (every write is idempotent by key). The health routes are
    never refused, so an orchestrator can tell a busy service from a dead one. A request is counted
    from its arrival until its response is sent whole, so clients that each wait for their answer
    are never refused while they are no more than ``limit``.
    WebSockets are counted apart (a subscription is long-lived, not load): beyond ``websockets``
    open, a handshake is refused the same way, before it opens (a server without the WebSocket
    denial response extension answers 403), and a WebSocket counts until it closes.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_IN_FLIGHT, retry_after: int = 1, websockets: int = MAX_WEBSOCKETS) -> None:
        if limit < 1:
            raise ValueError("limit: at least one request must be served at a time")
        if websockets < 0:
            raise ValueError("websockets: how many may be open at once, 0 for none")
        self.app = app
        self.limit = limit
        self.retry_after = retry_after
        self.in_flight = 0
        self.websockets = websockets
        self.open_websockets = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] != "http" or scope["path"] in HEALTH:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            refused = error(
                503,
                "OVERLOADED",
                f"the service is serving {self.limit} requests; retry after {self.retry_after} s",
                retryable=True,
            )
            refused.headers["Retry-After"] = str(self.retry_after)
            await refused(scope, receive, send)
            return
        self.in_flight += 1
        counted = True

        async def sending(message: Message) -> None:
            # Answered whole, a request leaves the count: its client may send its next one at once,
            # while this one's coroutine still unwinds (a client waiting on each answer is one request).
            nonlocal counted
            await send(message)
            if counted and message["type"] == "http.response.body" and not message.get("more_body", False):
                counted = False
                self.in_flight -= 1

        try:
            await self.app(scope, receive, sending)
        finally:
            if counted:
                self.in_flight -= 1

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_websockets >= self.websockets:
            why = f"the service holds {self.websockets} WebSockets open; retry after {self.retry_after} s"
            refused = error(503, "OVERLOADED", why, retryable=True)
            refused.headers["Retry-After"] = str(self.retry_after)
            await refuse_handshake(WebSocket(scope, receive, send), refused, why)
            return
        self.open_websockets += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open_websockets -= 1


class ServerTiming:
    """Says in each HTTP response's ``Server-Timing`` header where its time went
    (https://www.w3.org/TR/server-timing/, shown by browsers' developer tools): ``app``, from the
    request's arrival to its response's start; ``db``, inside the unit of work (its
    transactions with Neo4j, the judging between their reads and writes included; the
    transactions and statements counted); ``neo4j``, what Neo4j reports its statements took
    (whole milliseconds); ``commit``, the writes' commits. Off unless asked for
    (``serve --server-timing``): it tells a client how long the database worked for it.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        with timing() as spent:  # the request's tasks and worker threads inherit it

            async def sending(message: Message) -> None:
                if message["type"] == "http.response.start":
                    header = spent.header(served_s=time.perf_counter() - started)
                    message = {**message, "headers": [*message.get("headers", []), (b"server-timing", header.encode())]}
                await send(message)

            await self.app(scope, receive, sending)


class _BodyTooLarge(Exception):
    pass


class BodySizeLimit:
    """Refuses request bodies over ``limit`` bytes with 413: before they are read when they say
    their length, as soon as they pass it when they are sent in chunks."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES, paths: dict[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.paths = paths or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.paths.get(scope["path"], self.limit)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and int(length) > limit:
            return await self.refuse(scope, receive, send, limit)
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise _BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _BodyTooLarge:
            # Raised while the body is read, so before any response has started.
            await self.refuse(scope, receive, send, limit)

    async def refuse(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        await error(413, "PAYLOAD_TOO_LARGE", f"request body over {limit} bytes")(scope, receive, send)


HEALTH = ("/healthz", "/readyz")
"""Always answered: an orchestrator tells a busy service from a dead one by them."""


class RateLimit:
    """Each request of a caller drawn from its rate limit (``Caller.limits``, web/limits.py), on every
    route but ``exempt``: past it, an HTTP request is answered 429 with ``Retry-After``, in JSON with
    a code (``errors.rate_limited``) unless ``answers`` has its path's own answer (OTLP's, for
    /v1/traces), and a WebSocket handshake is refused the same, before it opens. A request with no
    caller counts against nothing. Placed inside ``AuthenticationMiddleware``, which finds the caller.
    """

    def __init__(
        self,
        app: ASGIApp,
        exempt: Collection[str] = HEALTH,
        answers: Mapping[str, Callable[[HTTPConnection, int], Response]] | None = None,
    ) -> None:
        self.app = app
        self.exempt = exempt
        self.answers = answers or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in self.exempt:
            return await self.app(scope, receive, send)
        connection = HTTPConnection(scope)
        wait = over_limit(connection)
        if wait is None:
            return await self.app(scope, receive, send)
        answer = self.answers.get(scope["path"])
        refused = answer(connection, wait) if answer is not None else rate_limited(wait)
        if scope["type"] == "http":
            return await refused(scope, receive, send)
        await refuse_handshake(WebSocket(scope, receive, send), refused, f"over its rate limit; retry after {wait} s")


async def refuse_handshake(websocket: WebSocket, refused: Response, reason: str) -> None:
    """A WebSocket refused before it opens: answered ``refused`` where the server takes the
    WebSocket denial response extension (uvicorn does), else closed with 1013 (Try Again Later)
    and ``reason``, which the server answers 403."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(refused)
    else:
        await websocket.close(code=1013, reason=reason)


REQUEST_ID = re.compile(r"[!-~]{1,128}")
"""An X-Request-ID the service takes as the request's id: 1 to 128 visible ASCII characters."""


class StopOnDisconnect:
    """Stops the Neo4j work of a request whose client went away before its answer was sent.

    Each HTTP request runs under its own tag (``services.requests.serving``), which every transaction
    it opens carries in its metadata. Its id, which its writes' audit entries record, is the client's
    ``X-Request-ID`` when it sends a usable one, else the tag; the answer carries it back in
    ``X-Request-ID`` (the tag stays the service's own: a client's id need not be unique). This middleware reads the client's messages itself, relaying
    them to the app; when the client disconnects before the response is complete, it cancels the
    request and terminates its transactions, so a query nobody waits for stops at once instead
    of running to its time limit.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        tag = new_ulid()
        given = HTTPConnection(scope).headers.get("x-request-id", "")
        known_as = given if REQUEST_ID.fullmatch(given) else tag
        messages: asyncio.Queue[Message] = asyncio.Queue()
        complete = False

        async def relay() -> None:
            while True:
                message = await receive()
                await messages.put(message)
                if message["type"] == "http.disconnect":
                    return

        async def sending(message: Message) -> None:
            nonlocal complete
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", known_as.encode("ascii"))]}
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                complete = True

        with serving(tag, known_as):  # the task copies the context, and with it the tag
            answering = asyncio.ensure_future(self.app(scope, messages.get, sending))
        listening = asyncio.ensure_future(relay())
        try:
            await asyncio.wait({answering, listening}, return_when=asyncio.FIRST_COMPLETED)
            if not answering.done() and not complete:
                # The client went away mid-request: nobody will read the answer.
                answering.cancel()
                trail: Trail | None = scope.get("state", {}).get("trail")
                if trail is not None:
                    stopped = await run_in_threadpool(stop_request, trail, tag)
                    if stopped:
                        log.info("client went away: stopped %d transaction(s) of its request", len(stopped))
            with contextlib.suppress(asyncio.CancelledError):
                await answering
        finally:
            listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listening
