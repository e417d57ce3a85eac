"""The HTTP service: GraphQL (with GraphiQL) at /graphql, graph exports at /export, the explorer at /explore, health at /healthz and /readyz."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from dataclasses import replace
import gc
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any, cast

from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnected
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.types import QueryParams
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.subscriptions.protocols.graphql_transport_ws.types import ConnectionInitMessage
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler

from decisiontrail.access import LOCAL, Action, Principal, TokenRegistry
from decisiontrail.actors.runtime import Runtime
from decisiontrail.actors.workers import Workers
from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
from decisiontrail.actors.reconciliation import Reconciler
from decisiontrail.api import schema
from decisiontrail.checks.export import ExportFormat, export as export_graph
from decisiontrail.domain.ids import new_ulid
from decisiontrail.events import EventBus
from decisiontrail.exceptions import DecisionTrailError, ValidationFailed
from decisiontrail import explorer
from decisiontrail import http_graphql
from decisiontrail.schema.context import Context
from decisiontrail import otlp
from decisiontrail.services import Graph, Trail, analysis, importing, open_trail
from decisiontrail.services.analysis import View
from decisiontrail.services.requests import serving, stop_request, timing
from decisiontrail.settings import Neo4jSettings, RuntimeSettings

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024
MAX_TRACES_BODY_BYTES = 4 * 1024 * 1024
"""An OTLP export (512 spans a batch by default, with their LLM messages) may be larger than a GraphQL request."""


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


class _TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """strawberry's graphql-transport-ws handler, except that a subscriber who leaves while an
    event is on its way is no failure of ours: said at debug, not logged with a traceback."""

    async def handle_task_exception(self, error: Exception) -> None:
        if isinstance(error, WebSocketDisconnected):
            log.debug("a subscriber left while an event was being sent: %s", error)
            return
        await super().handle_task_exception(error)

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        # A browser cannot put headers on a WebSocket: the explorer sends its bearer token as
        # {"Authorization": "Bearer ..."} in connection_init's payload instead.
        payload = message.get("payload")
        authorization = payload.get("Authorization") if isinstance(payload, dict) else None
        if self.context.principal is None and isinstance(authorization, str) and isinstance(self.view, DecisionTrailGraphQL):
            self.context.principal = self.view.tokens.principal(authorization)
        await super().handle_connection_init(message)


class _RequestAdapter(StarletteRequestAdapter):
    """strawberry's view of an HTTP request, its Content-Type in lower case: media types are
    case-insensitive (RFC 9110), strawberry's test for JSON is not (``Application/JSON`` was a 400)."""

    @property
    def content_type(self) -> str | None:
        value = super().content_type
        return value.lower() if value is not None else None


class DecisionTrailGraphQL(GraphQL[Context, None]):
    """strawberry's ASGI app with our per-request context (fresh DataLoaders each request), speaking
    GraphQL over HTTP as its specification has it (``http_graphql``): the answer's media type
    negotiated from ``Accept``, a request error under ``application/graphql-response+json`` a 400
    without ``data``, a mutation sent with GET a 405."""

    graphql_transport_ws_handler_class = _TransportWSHandler
    request_adapter_class = _RequestAdapter

    def __init__(self, tokens: BearerTokens | None = None) -> None:
        super().__init__(schema, graphql_ide="graphiql", subscription_protocols=("graphql-transport-ws",))
        self.tokens = tokens or BearerTokens(TokenRegistry())

    async def get_context(self, request: Any, response: Any = None) -> Context:
        return Context(trail=request.state.trail, principal=caller(request))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # strawberry answers a request that is not GraphQL over HTTP in plain text; ours is JSON with a code.
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)
        try:
            response = await self.run(Request(scope, receive))
        except HTTPException as e:
            response = _refusal(e)
        await response(scope, receive, send)

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        # The answer's media type, chosen once from Accept; create_response writes the answer in it.
        sub_response = await super().get_sub_response(request)
        sub_response.media_type = http_graphql.media_type(request.headers.get("accept")) or http_graphql.JSON
        return sub_response

    def create_response(self, response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse], sub_response: Response) -> Response:
        media = sub_response.media_type or http_graphql.JSON
        failed = False
        if (
            media == http_graphql.GRAPHQL_RESPONSE
            and isinstance(response_data, dict)
            and http_graphql.request_failed(response_data)
        ):
            # Nothing ran: no data, not even null, and a client error's status.
            failed = True
            response_data = cast(GraphQLHTTPResponse, {k: v for k, v in response_data.items() if k != "data"})
        response = super().create_response(response_data, sub_response)
        response.headers["content-type"] = http_graphql.content_type(media)
        response.headers["vary"] = "Accept"
        if failed:
            response.status_code = 400
        return response

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> GraphQLRequestData | list[GraphQLRequestData]:
        """What strawberry reads from a request, once the request is known to be GraphQL over HTTP
        (a browser's GraphiQL page is not): refused 406 unless it accepts an answer we write, 415
        unless a POST's body is UTF-8 JSON, 400 for an ``operationName`` that is no string."""
        if http_graphql.media_type(request.headers.get("accept")) is None:
            raise HTTPException(406, f"Accept: this endpoint answers in {' or '.join(http_graphql.MEDIA_TYPES)}")
        if request.method == "POST":
            media, parameters = parse_content_type(request.content_type or "")
            if media != http_graphql.JSON or parameters.get("charset", "utf-8") not in ("utf-8", "utf8"):
                raise HTTPException(415, f"Content-Type: a GraphQL request is sent as {http_graphql.JSON} (UTF-8)")
        data = await super().parse_http_body(request)
        if isinstance(data, GraphQLRequestData) and not isinstance(data.operation_name, str | None):
            raise HTTPException(400, "The GraphQL operation's `operationName` must be a string or null, if provided.")
        return data

    def parse_query_params(self, params: QueryParams) -> dict[str, Any]:
        # GraphQL over HTTP, GET: an optional parameter given as the empty string is one not given.
        return super().parse_query_params({k: v for k, v in params.items() if k == "query" or v != ""})

    async def execute_single(  # noqa: PLR0917
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: Context,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """strawberry's, with the operations a method carries as GraphQL over HTTP has them: GET a
        query (a mutation is 405), POST a query or a mutation. A subscription is served over
        WebSocket; over HTTP, strawberry ran it as a query, and its resolver failed."""
        try:
            return await self.schema.execute(
                request_data.query,
                root_value=root_value,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=_OPERATIONS_BY_METHOD[request_adapter.method],
                operation_extensions=request_data.extensions,
            )
        except CannotGetOperationTypeError as e:
            raise HTTPException(400, e.as_http_error_reason()) from e
        except InvalidOperationTypeError as e:
            if e.operation_type is OperationType.SUBSCRIPTION:
                raise HTTPException(400, "subscriptions are served over WebSocket (graphql-transport-ws) at /graphql") from e
            raise _MutationOverGet(e.as_http_error_reason(request_adapter.method)) from e
        except MissingQueryError as e:
            raise HTTPException(400, "No GraphQL query found in the request") from e

    def decode_json(self, data: str | bytes) -> object:
        """A body is a JSON object (or a list, a batch strawberry refuses itself); nesting past the
        parser's recursion limit is refused, not a 500."""
        try:
            decoded = json.loads(data)
        except RecursionError:
            raise HTTPException(400, "the JSON is nested too deeply") from None
        except UnicodeDecodeError:  # bytes that are no UTF-8, -16 or -32 JSON at all (a JSONDecodeError is strawberry's)
            raise HTTPException(400, "the body is not JSON text") from None
        if not isinstance(decoded, dict | list):
            raise HTTPException(400, "a GraphQL request is a JSON object")
        # A \ud800-\udfff escape without its pair decodes to a string no UTF-8 encoder (Neo4j's
        # driver included) can write; such a request is refused here, where every value enters.
        raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
        if _SURROGATE_ESCAPE.search(raw):
            try:
                json.dumps(decoded, ensure_ascii=False).encode()
            except UnicodeEncodeError:
                raise HTTPException(
                    400, "the JSON holds a lone UTF-16 surrogate (\\ud800 to \\udfff), which is not text"
                ) from None
        return decoded


_STATUS = {"NOT_FOUND": 404, "VALIDATION_FAILED": 400, "UNAVAILABLE": 503, "CONFLICT": 409, "TIMEOUT": 504, "TOO_LARGE": 413}
_RPC_CODES = {
    404: otlp.NOT_FOUND,
    409: otlp.ABORTED,
    413: otlp.RESOURCE_EXHAUSTED,
    503: otlp.UNAVAILABLE,
    504: otlp.DEADLINE_EXCEEDED,
}
"""The google.rpc code an OTLP refusal carries beside its HTTP status (400: INVALID_ARGUMENT)."""
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "PAYLOAD_TOO_LARGE"}


_OPERATIONS_BY_METHOD = {
    "GET": frozenset({OperationType.QUERY}),
    "POST": frozenset({OperationType.QUERY, OperationType.MUTATION}),
}
"""What GraphQL over HTTP lets each method carry; subscriptions go over WebSocket."""


class _MutationOverGet(HTTPException):
    """A mutation sent with GET: 405, allowing POST; the request is what is wrong (``BAD_REQUEST``), not /graphql's methods."""

    def __init__(self, reason: str) -> None:
        super().__init__(405, reason)


def _refusal(e: HTTPException) -> JSONResponse:
    """A request /graphql cannot run, refused in JSON with a code (not a GraphQL response: ``application/json``)."""
    if isinstance(e, _MutationOverGet):
        refused = _error(405, "BAD_REQUEST", e.reason)
        refused.headers["allow"] = "POST"
    else:
        refused = _error(e.status_code, _HTTP_CODES.get(e.status_code, "BAD_REQUEST"), e.reason)
        if e.status_code == 405:
            refused.headers["allow"] = "GET, POST"
    refused.headers["content-type"] = http_graphql.content_type(http_graphql.JSON)
    return refused


def _error(status: int, code: str, message: str, **extensions: object) -> JSONResponse:
    named = {k: v for k, v in extensions.items() if v is not None}
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code, **named}}]}, status_code=status)


def _moment(text: str | None) -> datetime | None:
    """An export's ``asOf``: ISO 8601 with a UTC offset, as the API's DateTime takes it."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(f"asOf: {text!r} is not an ISO 8601 date and time", field="asOf") from None
    if moment.tzinfo is None:
        raise ValidationFailed(f"asOf: {text!r} has no UTC offset; write it as 2026-12-01T09:30:00Z", field="asOf")
    return moment.astimezone(UTC)


MAX_IN_FLIGHT = 128
"""Requests served at once before more are refused with 503 and Retry-After (see ShedLoad)."""


class ShedLoad:
    """Beyond ``limit`` HTTP requests in flight, answers 503 with ``Retry-After`` at once instead
    of queueing without bound: a request admitted is served with the latency of a bounded queue,
    and a client told to come back can (every write is idempotent by key). The health routes are
    never refused, so an orchestrator can tell a busy service from a dead one; WebSockets are not
    counted (a subscription is long-lived, not load). A request is counted from its arrival until
    its response is sent whole, so clients that each wait for their answer are never refused while
    they are no more than ``limit``.
    """

    def __init__(self, app: ASGIApp, limit: int = MAX_IN_FLIGHT, retry_after: int = 1) -> None:
        if limit < 1:
            raise ValueError("limit: at least one request must be served at a time")
        self.app = app
        self.limit = limit
        self.retry_after = retry_after
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in ("/healthz", "/readyz"):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            refused = _error(
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
        await _error(413, "PAYLOAD_TOO_LARGE", f"request body over {limit} bytes")(scope, receive, send)


class StopOnDisconnect:
    """Stops the Neo4j work of a request whose client went away before its answer was sent.

    Each HTTP request runs under its own tag (``services.requests.serving``), which every transaction
    it opens carries in its metadata. This middleware reads the client's messages itself, relaying
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
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                complete = True

        with serving(tag):  # the task copies the context, and with it the tag
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


_heap_settled = False


def settle_heap() -> None:
    """Leave what the process holds once started (modules, the schema, the driver, the server)
    out of Python's cycle collections, once per process (``gc.freeze``).

    The requests' own objects are collected as ever. Without it, every full collection walked the
    whole start-up heap again: 110-130 ms each, triggered about every sixth request of a
    1,000-decision tree, which made the tail of every request's latency (a p95 of 170 ms where
    the median was 40 ms; 65 ms frozen).
    """
    global _heap_settled
    if not _heap_settled:
        _heap_settled = True
        gc.collect()
        gc.freeze()


def create_app(
    settings: Neo4jSettings | None = None,
    *,
    graph: Graph | None = None,
    tokens: TokenRegistry | None = None,
    on_start: Callable[[Trail], None] | None = None,
    max_in_flight: int = MAX_IN_FLIGHT,
    server_timing: bool = False,
    runtime_workers: int | None = None,
) -> Starlette:
    """The service. It opens Neo4j in its lifespan (embedded unless NEO4J_URI is set), or uses
    ``graph`` when given one (which it then does not close). ``tokens`` default to
    DECISIONTRAIL_TOKENS_FILE; with none, every caller is trusted (serve binds loopback only).
    ``server_timing`` adds the ``Server-Timing`` header to every HTTP response (``ServerTiming``).
    ``runtime_workers`` threads drive plan runs (by default DECISIONTRAIL_RUNTIME_WORKERS; 0: none here)."""
    tokens = tokens if tokens is not None else TokenRegistry.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        # What the lifespan yields is every request's ``request.state``.
        with contextlib.ExitStack() as stack:
            events = EventBus()
            if graph is not None:
                trail = Trail.on(graph, events)
            else:
                trail = stack.enter_context(open_trail(settings or Neo4jSettings.from_env(), events=events, progress=log.info))
            # The actors' checkpoints live in the same Neo4j. The Invariant Reconciliation Actor runs
            # in this process at each plan's Strategize entry; the runtime's workers run plans.
            checkpointer = checkpointer_of(trail)
            trail = replace(trail, reconciler=Reconciler(checkpointer))
            if trail.relay is not None:  # this process's subscribers get every process's events, from the outbox
                stack.enter_context(trail.relay.running())
            count = runtime_workers if runtime_workers is not None else RuntimeSettings.from_env().workers
            if count > 0:
                wakeup = threading.Event()
                trail = replace(trail, wake_runtime=wakeup.set)
                stack.enter_context(Workers(Runtime(trail, checkpointer), count, wakeup=wakeup).running())
            if on_start is not None:
                await run_in_threadpool(on_start, trail)
            settle_heap()
            yield {"trail": trail}

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        trail: Trail = request.state.trail
        try:
            await run_in_threadpool(trail.graph.driver.verify_connectivity)
        except Exception as e:  # any failure to reach Neo4j means not ready
            return JSONResponse({"status": "unavailable", "neo4j": type(e).__name__}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def export(request: Request) -> Response:
        """``/export/plans/{id}.{format}`` (``?scope=hierarchy`` for the plans below too) and
        ``/export/decisions/{id}/{lineage|impact}.{format}``, streamed as they are written;
        ``?asOf=`` (ISO 8601 with a UTC offset) draws the graph as it stood then."""
        principal = caller(request)
        if principal is None:
            return _error(401, "UNAUTHENTICATED", "a bearer token is required")
        if not principal.may(Action.READ):
            return _error(403, "FORBIDDEN", f"the {principal.role.value} role may not read")
        try:
            # By the longest format that fits: ``<id>.prov.json`` is PROV-JSON, not node-link JSON of ``<id>.prov``.
            target, fmt = ExportFormat.of_file(request.path_params["name"])
            if "decision_id" in request.path_params:
                view_name, target = target, request.path_params["decision_id"]
            else:
                view_name = request.query_params.get("scope", "plan")
            view = View(view_name)
        except ValueError:
            return _error(
                404, "NOT_FOUND", f"no export {request.url.path}: formats are {', '.join(f.value for f in ExportFormat)}"
            )
        try:
            as_of = _moment(request.query_params.get("asOf"))
            G = await run_in_threadpool(
                analysis.view_graph,
                request.state.trail,
                view,
                target,
                principal=principal,
                progress=False,
                as_of=as_of,
            )
        except DecisionTrailError as e:
            return _error(
                _STATUS.get(e.code, 400), e.code, e.message, field=getattr(e, "field", None), rule=getattr(e, "rule", None)
            )
        filename = f"{target}-{view.value}.{fmt.value}"
        return StreamingResponse(
            export_graph(G, fmt),
            media_type=fmt.media_type,
            headers={"content-disposition": f'attachment; filename="{filename}"'},
        )

    async def traces(request: Request) -> Response:
        """OTLP/HTTP ``POST /v1/traces`` (protobuf or JSON, gzip or not): spans become plans and
        decisions (``services.importing``); answered as OpenTelemetry exporters expect."""
        encoding = otlp.encoding_of(request.headers.get("content-type"))
        if encoding is None:
            return Response(
                otlp.status(
                    otlp.INVALID_ARGUMENT, "Content-Type: send application/x-protobuf or application/json", otlp.Encoding.JSON
                ),
                status_code=415,
                media_type=otlp.Encoding.JSON.value,
            )

        def answer(status: int, code: int, message: str) -> Response:
            return Response(otlp.status(code, message, encoding), status_code=status, media_type=encoding.value)

        principal = caller(request)
        if principal is None:
            return answer(401, otlp.UNAUTHENTICATED, "a bearer token is required")
        if not principal.may(Action.RECORD):
            return answer(403, otlp.PERMISSION_DENIED, f"the {principal.role.value} role may not record")
        try:
            body = otlp.unzip(await request.body(), request.headers.get("content-encoding"))
            spans = otlp.decode(body, encoding)
            report = await run_in_threadpool(importing.import_spans, request.state.trail, spans, principal=principal)
        except DecisionTrailError as e:
            status = _STATUS.get(e.code, 400)
            refused = answer(status, _RPC_CODES.get(status, otlp.INVALID_ARGUMENT), f"{e.code}: {e.message}")
            if status == 503:  # an exporter retries 503 (with its backoff); the request wrote nothing
                refused.headers["Retry-After"] = "1"
            return refused
        return Response(otlp.response(report.rejected, report.message(), encoding), media_type=encoding.value)

    graphql = DecisionTrailGraphQL(BearerTokens(tokens))
    return Starlette(
        routes=[
            Route("/graphql", graphql),  # strawberry answers other methods with 405, in JSON here
            WebSocketRoute("/graphql", graphql),
            Route("/export/plans/{name:str}", export),
            Route("/export/decisions/{decision_id:str}/{name:str}", export),
            Route("/v1/traces", traces, methods=["POST"]),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            *explorer.routes(),  # the lineage explorer page, under its own Content-Security-Policy
        ],
        middleware=[
            *([Middleware(ServerTiming)] if server_timing else []),
            Middleware(ShedLoad, limit=max_in_flight),
            Middleware(StopOnDisconnect),
            Middleware(BodySizeLimit, paths={"/v1/traces": MAX_TRACES_BODY_BYTES}),
            Middleware(AuthenticationMiddleware, backend=BearerTokens(tokens)),
        ],
        lifespan=lifespan,
    )
