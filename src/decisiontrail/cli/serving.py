"""Serving and the process's own tools: `serve`, `schema`, `token` and `neo4j`, none of which needs a trail opened first."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

from decisiontrail.cli.arguments import Commands, at_least_one, at_least_zero
from decisiontrail.settings import Neo4jSettings, available_cores

if TYPE_CHECKING:
    from decisiontrail.access import TokenRegistry
    from decisiontrail.services import Graph, Trail

__all__ = ["COMMANDS", "SHUTDOWN_GRACE", "add_neo4j", "add_schema", "add_serve", "add_token", "execute"]

log = logging.getLogger("decisiontrail")

COMMANDS = frozenset({"neo4j", "serve", "schema", "token"})

SHUTDOWN_GRACE = 10
"""Seconds `serve` lets running requests finish after SIGTERM before cancelling them."""


def add_schema(commands: Commands) -> None:
    sdl = commands.add_parser("schema", help="print the GraphQL schema (SDL)", description="Print the GraphQL schema in SDL.")
    sdl.add_argument("--output", help="write to this file instead of standard output")


def add_serve(commands: Commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the GraphQL API (GraphiQL at /graphql), graph exports (/export), OTLP traces (/v1/traces), /healthz, /readyz",
        description="Serve the GraphQL API with uvicorn. Neo4j is the embedded one unless NEO4J_URI is set.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default: 8000)")
    serve.add_argument(
        "--workers",
        type=at_least_one,
        metavar="N",
        help="processes serving the port, each with its own connections to Neo4j, its own runtime workers and "
        "its own --max-in-flight and rate limits; 1 serves from this process alone (default: "
        f"DECISIONTRAIL_SERVE_WORKERS, else one a core: {available_cores()} here)",
    )
    serve.add_argument(
        "--max-in-flight",
        type=at_least_one,
        metavar="N",
        help="requests each worker process serves at once; beyond them a request is refused at once with 503 and "
        "Retry-After instead of waiting in an unbounded queue (default: 128)",
    )
    serve.add_argument(
        "--max-websockets",
        type=at_least_zero,
        metavar="N",
        help="WebSockets (subscriptions) each worker process holds open at once; beyond them a handshake is refused "
        "with 503 and Retry-After (default: 10000)",
    )
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="log a line per request (default); --no-access-log behind a proxy that logs requests already "
        "(about 0.5 ms a request here)",
    )
    serve.add_argument(
        "--server-timing",
        action="store_true",
        help="say in each response's Server-Timing header where its time went: in the service (app), in "
        "its transactions with Neo4j (db, with their statements counted), in Neo4j's own statements (neo4j) and "
        "in commits; off by default, since it tells clients how long the database worked for them",
    )
    serve.add_argument(
        "--demo-if-empty",
        action="store_true",
        help="when the database holds no plan, record the demonstration hierarchy first (make run does)",
    )


def add_token(commands: Commands) -> None:
    token = commands.add_parser(
        "token",
        help="create an API token (stored hashed in the token file)",
        description="Create a bearer token for the API and add its SHA-256 to the token file; the token is printed once.",
    )
    token.add_argument("--name", required=True, help="who the token is for")
    token.add_argument("--role", required=True, choices=["actor", "reviewer", "analyst", "admin"], help="what it may do")
    token.add_argument("--file", required=True, help="the token file (point DECISIONTRAIL_TOKENS_FILE at it)")
    token.add_argument("--project", help="limit the token to this project's plans (without it, the token sees every project)")


def add_neo4j(commands: Commands) -> None:
    neo4j = commands.add_parser("neo4j", help="manage the embedded Neo4j", description="Manage the embedded Neo4j.")
    neo4j_commands = neo4j.add_subparsers(dest="neo4j_command", required=True, metavar="ACTION")
    neo4j_commands.add_parser("build", help="build the launcher with Maven (done on first start anyway)")
    start = neo4j_commands.add_parser("start", help="run the embedded Neo4j in the foreground until interrupted")
    start.add_argument("--port", type=int, help="Bolt port (default: DECISIONTRAIL_NEO4J_PORT or 7687)")


def execute(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    """One of ``COMMANDS``."""
    if args.command == "neo4j":
        return _neo4j(args, settings)
    if args.command == "serve":
        return _serve(args, settings)
    if args.command == "schema":
        return _schema(args)
    return _token(args)


def _schema(args: argparse.Namespace) -> int:
    from decisiontrail.api import schema

    text = schema.as_str() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        print(text, end="")
    return 0


def _serve(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    from decisiontrail.actors.demonstration import DEMONSTRATOR, record_demonstration, render_demonstration
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
    from decisiontrail.settings import AccessSettings, ServeSettings
    from decisiontrail.web.tokens import tokens_from_env

    tokens = tokens_from_env()  # the app reads a token file again as it changes, and on SIGHUP (docs/security.md)
    if not tokens.enabled and AccessSettings.from_env().oidc is None:
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"decisiontrail: error: no tokens configured (DECISIONTRAIL_TOKENS_FILE or DECISIONTRAIL_OIDC_ISSUER), so the "
                f"API is served on loopback only, not on {args.host}; create tokens with `decisiontrail token`",
                file=sys.stderr,
            )
            return 2
        log.warning("no tokens configured: authentication is off and the API is served on loopback only")
    workers = args.workers if args.workers is not None else ServeSettings.from_env().workers
    allow_open_files()

    from decisiontrail.services import open_trail, reading

    def load_demo(trail: Trail) -> None:
        if reading.count_plans(trail, DEMONSTRATOR):
            return
        log.info("the database is empty: running the demonstration plan")
        demo = record_demonstration(trail, checkpointer_of(trail), log=log.info)
        print(render_demonstration(trail, demo), flush=True)

    with contextlib.ExitStack() as stack:
        graph = None
        if args.demo_if_empty or workers > 1:
            # Once, before any worker serves: the embedded Neo4j started (it lives as long as this
            # process), the migrations applied, the demonstration recorded. The demonstration's
            # runtime, in this thread, is the only one claiming its runs, and they have settled
            # before the app serves.
            opened = stack.enter_context(open_trail(settings, progress=log.info))
            if args.demo_if_empty:
                load_demo(opened)
            graph = opened.graph
        log.info("serving GraphQL on http://%s:%d/graphql (GraphiQL in a browser)", args.host, args.port)
        log.info("exploring lineage on http://%s:%d/explore (the explorer page, in a browser)", args.host, args.port)
        log.info("taking OpenTelemetry traces on http://%s:%d/v1/traces (OTLP/HTTP, see docs/interop.md)", args.host, args.port)
        if workers > 1:
            assert graph is not None
            return _serve_in_processes(args, workers, settings, graph.uri)
        _serve_here(args, settings, graph, tokens)
    return 0


def allow_open_files() -> int:
    """Raise this process's soft limit of open files to its hard limit (its workers inherit it), as
    servers do: each WebSocket subscriber holds a socket, and at the common soft limit of 1,024 a
    thousand subscribers left no room, their handshakes failing without an answer. The limit now.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError) as e:  # some systems cap it below the hard limit (macOS: OPEN_MAX)
            log.debug("open files stay limited to %d: %s", soft, e)
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _serve_here(args: argparse.Namespace, settings: Neo4jSettings, graph: Graph | None, tokens: TokenRegistry) -> None:
    """Serve from this process alone (``--workers 1``)."""
    import uvicorn

    from decisiontrail.app import MAX_IN_FLIGHT, MAX_WEBSOCKETS, create_app

    app = create_app(
        settings,
        graph=graph,
        tokens=tokens,
        max_in_flight=args.max_in_flight if args.max_in_flight is not None else MAX_IN_FLIGHT,
        max_websockets=args.max_websockets if args.max_websockets is not None else MAX_WEBSOCKETS,
        server_timing=args.server_timing,
    )
    # On SIGTERM, requests still running get SHUTDOWN_GRACE seconds; then they are cancelled (and
    # their queries stopped by Neo4j's own timeouts), so the service always stops within a bound.
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="info",
        access_log=args.access_log,
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        # The events are a few hundred bytes: compressing each for each subscriber cost an eighth
        # of a delivery's time (profiled with 1,000 subscribers) and saved next to nothing.
        ws_per_message_deflate=False,
    )


def _serve_in_processes(args: argparse.Namespace, workers: int, settings: Neo4jSettings, uri: str) -> int:
    """Serve the port from ``workers`` processes, this one supervising them (``processes``); its exit status."""
    from decisiontrail.cli import processes

    if settings.embedded:  # the workers reach the embedded server this process started
        os.environ["NEO4J_URI"] = uri
        for name in ("NEO4J_USER", "NEO4J_USERNAME", "NEO4J_PASSWORD"):
            os.environ.pop(name, None)
    options = processes.WorkerOptions(
        parent=os.getpid(),
        max_in_flight=args.max_in_flight,
        max_websockets=args.max_websockets,
        server_timing=args.server_timing,
        log_level=logging.getLogger().getEffectiveLevel(),
    )
    log.info("serving from %d worker processes (--workers), each with its own connections to Neo4j", workers)
    return processes.serve(
        options,
        workers=workers,
        host=args.host,
        port=args.port,
        access_log=args.access_log,
        grace=SHUTDOWN_GRACE,
    )


def _token(args: argparse.Namespace) -> int:
    from pathlib import Path

    from decisiontrail.access import Role, issue_token

    token = issue_token(Path(args.file), args.name, Role(args.role), args.project)
    print(token)
    scope = f", project {args.project}" if args.project else ""
    log.info("added %s (%s%s) to %s; the token is shown only this once", args.name, args.role, scope, args.file)
    return 0


def _neo4j(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    from decisiontrail.services import server

    if args.neo4j_command == "build":
        print(server.build(settings, log.info))
        return 0
    if args.port is not None:
        settings = replace(settings, bolt_port=args.port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server.run_until(stop, settings, log.info, started=lambda message: print(message, flush=True))
    except KeyboardInterrupt:
        pass
    return 0
