"""The HTTP service: GraphQL (with GraphiQL) at /graphql, graph exports at /export, the explorer at /explore, health at /healthz and /readyz."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import replace
import gc
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route, WebSocketRoute

from decisiontrail.access import TokenRegistry
from decisiontrail.actors.runtime import Runtime
from decisiontrail.actors.workers import Workers
from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
from decisiontrail.actors.reconciliation import Reconciler
from decisiontrail.events import EventBus
from decisiontrail import explorer
from decisiontrail import mcp_server
from decisiontrail.services import Graph, Trail, open_trail
from decisiontrail.settings import Neo4jSettings, RuntimeSettings
from decisiontrail.web import endpoints
from decisiontrail.web.auth import BearerTokens, caller
from decisiontrail.web.graphql_view import DecisionTrailGraphQL, over_rate_limit
from decisiontrail.web.middleware import (
    MAX_IN_FLIGHT,
    MAX_TRACES_BODY_BYTES,
    MAX_WEBSOCKETS,
    BodySizeLimit,
    RateLimit,
    ServerTiming,
    ShedLoad,
    StopOnDisconnect,
)
from decisiontrail.web.tokens import TokenFile, tokens_from_env

__all__ = ["MAX_IN_FLIGHT", "MAX_WEBSOCKETS", "create_app"]

log = logging.getLogger(__name__)


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
    max_websockets: int = MAX_WEBSOCKETS,
    server_timing: bool = False,
    runtime_workers: int | None = None,
) -> Starlette:
    """The service. It opens Neo4j in its lifespan (embedded unless NEO4J_URI is set), or uses
    ``graph`` when given one (which it then does not close). ``tokens`` default to
    DECISIONTRAIL_TOKENS_FILE; with none, every caller is trusted (serve binds loopback only). A
    token file (``TokenFile``) is watched while the app runs: read again as it changes, and on
    SIGHUP when the app was started on the main thread.
    ``max_in_flight`` HTTP requests and ``max_websockets`` open WebSockets are served at once; more
    are refused with 503 and Retry-After (``ShedLoad``).
    ``server_timing`` adds the ``Server-Timing`` header to every HTTP response (``ServerTiming``).
    ``runtime_workers`` threads drive plan runs (by default DECISIONTRAIL_RUNTIME_WORKERS; 0: none here)."""
    tokens = tokens if tokens is not None else tokens_from_env()
    # One for the middleware and the GraphQL view alike (a browser's WebSocket sends its token in
    # connection_init): the callers' rate limits, the issuer's keys and the open WebSockets are one.
    bearer = BearerTokens(tokens)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        # What the lifespan yields is every request's ``request.state``.
        with contextlib.ExitStack() as stack:
            if isinstance(tokens, TokenFile):  # however the app was started (serve, uvicorn --factory, a test)
                stack.enter_context(tokens.watching())
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
            async with mcp.running():  # the MCP SDK's session manager serves /mcp's requests in its task group
                yield {"trail": trail}

    graphql = DecisionTrailGraphQL(bearer)
    mcp = mcp_server.Endpoint(caller)
    return Starlette(
        routes=[
            Route("/graphql", graphql),  # strawberry answers other methods with 405, in JSON here
            WebSocketRoute("/graphql", graphql),
            Route("/export/plans/{name:str}", endpoints.export),
            Route("/export/decisions/{decision_id:str}/{name:str}", endpoints.export),
            Route("/v1/traces", endpoints.traces, methods=["POST"]),
            Route("/mcp", mcp),  # the decision tools over the Model Context Protocol, for any agent runtime
            Route("/healthz", endpoints.healthz),
            Route("/readyz", endpoints.readyz),
            *explorer.routes(),  # the lineage explorer page, under its own Content-Security-Policy
        ],
        middleware=[
            *([Middleware(ServerTiming)] if server_timing else []),
            Middleware(ShedLoad, limit=max_in_flight, websockets=max_websockets),
            Middleware(StopOnDisconnect),
            Middleware(BodySizeLimit, paths={"/v1/traces": MAX_TRACES_BODY_BYTES}),
            Middleware(AuthenticationMiddleware, backend=bearer),
            # Inside authentication, which finds the caller; every route but /healthz and /readyz counts.
            Middleware(RateLimit, answers={"/graphql": over_rate_limit, "/v1/traces": endpoints.traces_rate_limited}),
        ],
        lifespan=lifespan,
    )
