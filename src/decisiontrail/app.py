"""The HTTP service: GraphQL (with GraphiQL) at /graphql, graph exports at /export, health at /healthz and /readyz."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from strawberry.asgi import GraphQL

from decisiontrail.access import LOCAL, Action, Principal, TokenRegistry
from decisiontrail.checks.export import ExportFormat, export as export_graph
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.events import EventBus
from decisiontrail.graphdb import DecisionStore, Graph, open_graph
from decisiontrail.resolvers.context import Context
from decisiontrail.schema import schema
from decisiontrail.services import analysis
from decisiontrail.services.analysis import View
from decisiontrail.settings import Neo4jSettings

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024


class DecisionTrailGraphQL(GraphQL[Context, None]):
    """strawberry's ASGI app with our per-request context (fresh DataLoaders each request)."""

    def __init__(self, store: DecisionStore, tokens: TokenRegistry, events: EventBus) -> None:
        super().__init__(schema, graphql_ide="graphiql", subscription_protocols=("graphql-transport-ws",))
        self.store = store
        self.tokens = tokens
        self.events = events

    async def get_context(self, request: Any, response: Any = None) -> Context:
        return Context(store=self.store, principal=self.principal(request.headers.get("authorization")), events=self.events)

    def principal(self, authorization: str | None) -> Principal | None:
        """The caller: anyone local when no tokens are configured, else the bearer token's owner."""
        if not self.tokens.enabled:
            return LOCAL
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        return self.tokens.authenticate(token.strip())


_STATUS = {"NOT_FOUND": 404, "VALIDATION_FAILED": 400, "UNAVAILABLE": 503, "CONFLICT": 409}


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"errors": [{"message": message, "extensions": {"code": code}}]}, status_code=status)


class BodySizeLimit:
    """Refuses request bodies over ``limit`` bytes with 413 before they are read."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = dict(scope.get("headers") or []).get(b"content-length")
            if length is not None and int(length) > self.limit:
                response = JSONResponse(
                    {"errors": [{"message": f"request body over {self.limit} bytes", "extensions": {"code": "PAYLOAD_TOO_LARGE"}}]},
                    status_code=413,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(
    settings: Neo4jSettings | None = None,
    *,
    graph: Graph | None = None,
    tokens: TokenRegistry | None = None,
    on_start: Callable[[DecisionStore], None] | None = None,
) -> Starlette:
    """The service. It opens Neo4j in its lifespan (embedded unless NEO4J_URI is set), or uses
    ``graph`` when given one (which it then does not close). ``tokens`` default to
    DECISIONTRAIL_TOKENS_FILE; with none, every caller is trusted (serve binds loopback only)."""
    tokens = tokens if tokens is not None else TokenRegistry.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        with contextlib.ExitStack() as stack:
            connected = graph or stack.enter_context(open_graph(settings or Neo4jSettings.from_env(), progress=log.info))
            app.state.graph = connected
            graphql.store = DecisionStore(connected, events=graphql.events)
            if on_start is not None:
                await run_in_threadpool(on_start, graphql.store)
            yield

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        connected: Graph = request.app.state.graph
        try:
            await run_in_threadpool(connected.driver.verify_connectivity)
        except Exception as e:  # any failure to reach Neo4j means not ready
            return JSONResponse({"status": "unavailable", "neo4j": type(e).__name__}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def export(request: Request) -> Response:
        """``/export/plans/{id}.{format}`` (``?scope=hierarchy`` for the plans below too) and
        ``/export/decisions/{id}/{lineage|impact}.{format}``, streamed as they are written."""
        principal = graphql.principal(request.headers.get("authorization"))
        if principal is None:
            return _error(401, "UNAUTHENTICATED", "a bearer token is required")
        if not principal.may(Action.READ):
            return _error(403, "FORBIDDEN", f"the {principal.role.value} role may not read")
        target, _, suffix = request.path_params["name"].rpartition(".")
        if "decision_id" in request.path_params:
            view_name, target = target, request.path_params["decision_id"]
        else:
            view_name = request.query_params.get("scope", "plan")
        try:
            fmt = ExportFormat(suffix)
            view = View(view_name)
        except ValueError:
            return _error(404, "NOT_FOUND", f"no export {request.url.path}: formats are {', '.join(f.value for f in ExportFormat)}")
        owner = None if principal.sees(None) else principal.name
        try:
            G = await run_in_threadpool(analysis.view_graph, request.app.state.graph, view, target, owner=owner, progress=False)
        except DecisionTrailError as e:
            return _error(_STATUS.get(e.code, 400), e.code, e.message)
        filename = f"{target}-{view.value}.{fmt.value}"
        return StreamingResponse(
            export_graph(G, fmt),
            media_type=fmt.media_type,
            headers={"content-disposition": f'attachment; filename="{filename}"'},
        )

    graphql = DecisionTrailGraphQL(store=None, tokens=tokens, events=EventBus())  # type: ignore[arg-type]  # store: set in the lifespan
    return Starlette(
        routes=[
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
            Route("/export/plans/{name:str}", export),
            Route("/export/decisions/{decision_id:str}/{name:str}", export),
            Route("/healthz", healthz),
            Route("/readyz", readyz),
        ],
        middleware=[Middleware(BodySizeLimit)],
        lifespan=lifespan,
    )
