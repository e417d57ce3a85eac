"""/graphql: strawberry's ASGI view with the request's context, GraphQL over HTTP as its specification has it,
and graphql-transport-ws subscriptions."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
from collections.abc import Callable
from typing import Any, cast

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from cross_web import AsyncHTTPRequestAdapter, HTTPException, StarletteRequestAdapter
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnected
from strawberry.asgi import ASGIWebSocketAdapter, GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.types import QueryParams
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.subscriptions.protocols.graphql_transport_ws.types import ConnectionInitMessage, Message, SubscribeMessage
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler

from decisiontrail.access import TokenRegistry
from decisiontrail.domain.ids import new_ulid
from decisiontrail.services.requests import known_as
from decisiontrail.api import schema
from decisiontrail import http_graphql
from decisiontrail.schema.context import Context
from decisiontrail.schema.sharing import SharedData
from decisiontrail.web.auth import BearerTokens, caller, identified
from decisiontrail.web.errors import HTTP_CODES, error, rate_limit_error, rate_limited
from decisiontrail.web.limits import retry_after

log = logging.getLogger(__name__)


REVOKED = 4403
"""The close code of a WebSocket whose token was revoked or expired (graphql-transport-ws's Forbidden)."""


class _TransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """strawberry's graphql-transport-ws handler, except that a subscriber who leaves while an
    event is on its way is no failure of ours (said at debug, not logged with a traceback); that
    the connection closes, its subscriptions ended, when its token is revoked or expires; and
    that each subscription counts against its caller's rate limit."""

    _forget: Callable[[], None] | None = None
    _connection: str | None = None
    """This connection's id: its operations' writes are audited as request ``ws:<connection>:<operation id>``."""

    async def handle_task_exception(self, error: Exception) -> None:
        if isinstance(error, WebSocketDisconnected):
            log.debug("a subscriber left while an event was being sent: %s", error)
            return
        await super().handle_task_exception(error)

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        view = cast(DecisionTrailGraphQL, self.view)
        found = identified(cast(ASGIWebSocketAdapter, self.websocket).ws)
        # A browser cannot put headers on a WebSocket: the explorer sends its bearer token as
        # {"Authorization": "Bearer ..."} in connection_init's payload instead.
        payload = message.get("payload")
        authorization = payload.get("Authorization") if isinstance(payload, dict) else None
        if self.context.principal is None and isinstance(authorization, str):
            found = await view.tokens.credentials.identify(authorization)
            self.context.principal = found.principal if found is not None else None
        await super().handle_connection_init(message)
        if self.connection_acknowledged and found is not None and self._forget is None:
            self._forget = view.tokens.credentials.opened(found, self.revoke)

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        principal = self.context.principal
        if self.connection_acknowledged and principal is not None:
            wait = cast(DecisionTrailGraphQL, self.view).tokens.credentials.spend(principal)
            if wait > 0:
                refused = {"id": message["id"], "type": "error", "payload": [rate_limit_error(retry_after(wait))]}
                await self.send_message(cast(Message, refused))
                return
        if self._connection is None:
            self._connection = new_ulid()
        # The operation's task, made within, copies the context and with it the request's id.
        with known_as(f"ws:{self._connection}:{message['id']}"):
            await super().handle_subscribe(message)

    async def revoke(self, reason: str) -> None:
        """End every subscription of this connection, then close it: what opened it no longer holds."""
        for operation_id in list(self.operations):
            await self.cleanup_operation(operation_id)
        with contextlib.suppress(RuntimeError):  # it may have closed meanwhile (Starlette's WebSocketDisconnected)
            await self.websocket.close(REVOKED, reason)

    async def shutdown(self) -> None:
        if self._forget is not None:
            self._forget()
        await super().shutdown()


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

    def encode_json(self, data: object) -> str | bytes:
        """strawberry's; but a subscription's ``next`` message whose data its subscribers share
        (``schema.sharing``) is that data's JSON, written once for all of them, in this
        subscriber's envelope (its own operation id): the text the whole would be written as."""
        if type(data) is dict and data.get("type") == "next" and type(operation_id := data.get("id")) is str:
            payload = data.get("payload")
            envelope = self._next_envelope
            if (
                envelope is not None
                and type(payload) is dict
                and len(payload) == 1
                and type(shared := payload.get("data")) is SharedData
                and list(data) == ["id", "type", "payload"]
            ):
                if shared.json is None:
                    shared.json = self._written({"data": shared})
                before, between, after = envelope
                return before + self._written(operation_id) + between + shared.json + after
        return super().encode_json(data)

    def _written(self, data: object) -> str:
        """``data`` as strawberry's ``encode_json`` writes it, as text."""
        written = super().encode_json(data)
        return written if isinstance(written, str) else written.decode()

    @functools.cached_property
    def _next_envelope(self) -> tuple[str, str, str] | None:
        """A ``next`` message as this view writes it, around its id and its payload; None if it
        cannot be told apart from them (the whole message is then written each time)."""
        written = self._written({"id": "", "type": "next", "payload": None})
        if written.count('""') != 1 or written.count("null") != 1:
            return None
        before, rest = written.split('""')
        between, after = rest.split("null")
        return before, between, after

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


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


_OPERATIONS_BY_METHOD = {
    "GET": frozenset({OperationType.QUERY}),
    "POST": frozenset({OperationType.QUERY, OperationType.MUTATION}),
}
"""What GraphQL over HTTP lets each method carry; subscriptions go over WebSocket."""


class _MutationOverGet(HTTPException):
    """A mutation sent with GET: 405, allowing POST; the request is what is wrong (``BAD_REQUEST``), not /graphql's methods."""

    def __init__(self, reason: str) -> None:
        super().__init__(405, reason)


def over_rate_limit(connection: HTTPConnection, retry_after: int) -> Response:
    """/graphql's answer to a caller over its rate limit (``middleware.RateLimit``), over HTTP or at
    a WebSocket's handshake: ``errors.rate_limited``, saying its charset as /graphql's answers do."""
    refused = rate_limited(retry_after)
    refused.headers["content-type"] = http_graphql.content_type(http_graphql.JSON)
    return refused


def _refusal(e: HTTPException) -> JSONResponse:
    """A request /graphql cannot run, refused in JSON with a code (not a GraphQL response: ``application/json``)."""
    if isinstance(e, _MutationOverGet):
        refused = error(405, "BAD_REQUEST", e.reason)
        refused.headers["allow"] = "POST"
    else:
        refused = error(e.status_code, HTTP_CODES.get(e.status_code, "BAD_REQUEST"), e.reason)
        if e.status_code == 405:
            refused.headers["allow"] = "GET, POST"
    refused.headers["content-type"] = http_graphql.content_type(http_graphql.JSON)
    return refused
