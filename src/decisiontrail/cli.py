"""The ``decisiontrail`` command line."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import replace

from decisiontrail import __version__
from decisiontrail.domain.correction import CorrectionResult, Impact
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.settings import Neo4jSettings

log = logging.getLogger("decisiontrail")

ENVIRONMENT_HELP = """\
environment:
  NEO4J_URI                 use this Neo4j 5.26+ server (bolt:// or neo4j://) instead of the embedded one
  NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE
                            credentials and database for NEO4J_URI (database defaults to neo4j)
  DECISIONTRAIL_DATA_DIR    where the embedded Neo4j keeps its store (default ~/.local/share/decisiontrail)
  DECISIONTRAIL_CACHE_DIR   where the embedded Neo4j launcher is built (default ~/.cache/decisiontrail)
  DECISIONTRAIL_NEO4J_PORT  Bolt port of the embedded Neo4j (default 7687; 0 picks a free port)
  DECISIONTRAIL_NEO4J_HEAP_MB, DECISIONTRAIL_NEO4J_PAGECACHE_MB
                            memory of the embedded Neo4j (default 1024 and 256)
  DECISIONTRAIL_TOKENS_FILE API tokens (JSON of name, role, sha256), or DECISIONTRAIL_TOKENS with that JSON;
                            without tokens the API serves loopback only
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="decisiontrail",
        description="Decision lineage for AI actors, stored in Neo4j.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"decisiontrail {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only results, no progress")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands.add_parser(
        "demo",
        help="scripted actors record a two-level plan hierarchy; print it as read back from Neo4j",
        description=(
            "Scripted LangGraph actors (strategy, execution, invariant reconciliation) record a parent plan "
            "and the child plan it spawns through record_decision, with one decision resolved by a scripted "
            "reviewer and Execute checkpoint groups; the hierarchy is then printed from Neo4j. Actor "
            "checkpoints go to DECISIONTRAIL_DATA_DIR/checkpoints.sqlite."
        ),
    )
    tree = commands.add_parser("tree", help="print a plan's decision tree", description="Print a plan's decision tree.")
    tree.add_argument("plan_id", help="the plan's ULID")
    commands.add_parser(
        "migrate", help="apply schema migrations (constraints, indexes) and exit", description="Apply migrations."
    )
    sdl = commands.add_parser(
        "schema", help="print the GraphQL schema (SDL)", description="Print the GraphQL schema in SDL."
    )
    sdl.add_argument("--output", help="write to this file instead of standard output")
    serve = commands.add_parser(
        "serve",
        help="serve the GraphQL API (GraphiQL at /graphql, /healthz, /readyz)",
        description="Serve the GraphQL API with uvicorn. Neo4j is the embedded one unless NEO4J_URI is set.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default: 8000)")
    serve.add_argument(
        "--demo-if-empty",
        action="store_true",
        help="when the database holds no plan, record the demonstration hierarchy first (make run does)",
    )
    token = commands.add_parser(
        "token",
        help="create an API token (stored hashed in the token file)",
        description="Create a bearer token for the API and add its SHA-256 to the token file; the token is printed once.",
    )
    token.add_argument("--name", required=True, help="who the token is for")
    token.add_argument("--role", required=True, choices=["actor", "reviewer", "analyst", "admin"], help="what it may do")
    token.add_argument("--file", required=True, help="the token file (point DECISIONTRAIL_TOKENS_FILE at it)")
    impact = commands.add_parser(
        "impact",
        help="preview what correcting a decision would invalidate (writes nothing)",
        description="Preview what correcting a decision would invalidate: decisions, plans, counts by type.",
    )
    impact.add_argument("decision_id", help="the decision's ULID")
    correct = commands.add_parser(
        "correct",
        help="correct a decision: supersede it and exactly its downstream",
        description=(
            "Correct a decision (ADR-007): a correction decision is recorded, and the decision and its whole "
            "downstream, across child plans, are superseded in one transaction. Prints what was invalidated "
            "and the replay frontier (the actor checkpoints to re-run from)."
        ),
    )
    correct.add_argument("decision_id", help="the decision's ULID")
    correct.add_argument(
        "--mode",
        choices=["revert", "append"],
        default="revert",
        help="revert: re-run from the decision's checkpoint; append: add the fix after the plan's latest decision "
        "(default: revert)",
    )
    correct.add_argument("--guidance", required=True, help="the corrected decision, in words")
    correct.add_argument("--reason", default="", help="why the decision was wrong")
    correct.add_argument("--by", default="cli", help="who asks for the correction (default: cli)")
    corrections = commands.add_parser(
        "history", help="list the correction attempts on a decision's chain", description="List correction attempts."
    )
    corrections.add_argument("decision_id", help="the decision's ULID")

    neo4j = commands.add_parser("neo4j", help="manage the embedded Neo4j", description="Manage the embedded Neo4j.")
    neo4j_commands = neo4j.add_subparsers(dest="neo4j_command", required=True, metavar="ACTION")
    neo4j_commands.add_parser("build", help="build the launcher with Maven (done on first start anyway)")
    start = neo4j_commands.add_parser("start", help="run the embedded Neo4j in the foreground until interrupted")
    start.add_argument("--port", type=int, help="Bolt port (default: DECISIONTRAIL_NEO4J_PORT or 7687)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="decisiontrail: %(message)s",
        stream=sys.stderr,
    )
    try:
        settings = Neo4jSettings.from_env()
        if args.command == "neo4j":
            return _neo4j(args, settings)
        if args.command == "serve":
            return _serve(args, settings)
        if args.command == "schema":
            return _schema(args)
        if args.command == "token":
            return _token(args)
        return _with_graph(args, settings)
    except DecisionTrailError as e:
        print(f"decisiontrail: error: {e.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _with_graph(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
    from decisiontrail.actors.graph import sqlite_checkpointer
    from decisiontrail.graphdb import DecisionStore, open_graph
    from decisiontrail.services.correction import correct, history, preview

    with open_graph(settings, progress=log.info) as graph:
        store = DecisionStore(graph)
        if args.command == "demo":
            with sqlite_checkpointer(settings.checkpoints) as checkpointer:
                demo = record_demonstration(store, checkpointer, log=log.info)
            log.info(
                "recorded by scripted actors: %d review(s) resolved, %d Execute checkpoint group(s); "
                "reading the hierarchy back from Neo4j",
                len(demo.reviews_resolved),
                demo.checkpoint_groups,
            )
            print(render_demonstration(store, demo))
            print()
            print(describe_correction(demo.correction))
            print(f"replay recorded {len(demo.replayed)} new decision(s): " + ", ".join(demo.replayed))
        elif args.command == "tree":
            print(store.get_tree(args.plan_id).render())
        elif args.command == "impact":
            print(describe_impact(preview(store, args.decision_id)))
        elif args.command == "correct":
            print(describe_correction(correct(store, args.decision_id, args.mode, args.guidance, args.reason, requested_by=args.by)))
        elif args.command == "history":
            for attempt in history(store, args.decision_id):
                print(
                    f"attempt {attempt.attempt_number} at {attempt.at:%Y-%m-%d %H:%M:%S} by {attempt.requested_by} "
                    f"({attempt.mode.value}): {attempt.guidance!r}; invalidated {len(attempt.invalidated_decision_ids)} "
                    f"decision(s), {len(attempt.invalidated_plan_ids)} plan(s); replay {attempt.replay_outcome.value}"
                )
        elif args.command == "migrate":
            log.info("schema is up to date on %s", graph.uri)
    return 0


def describe_impact(impact: Impact) -> str:
    counts = ", ".join(f"{n} {t}" for t, n in impact.counts_by_type.items())
    lines = [f"correcting {impact.decision_id} would invalidate {len(impact.decisions)} decision(s) ({counts})"]
    lines += [f"  {d.decision_id} {d.decision_type.value} in plan {d.plan_id}" for d in impact.decisions]
    lines.append(f"and {len(impact.plan_ids)} child plan(s)" + (": " + ", ".join(impact.plan_ids) if impact.plan_ids else ""))
    return "\n".join(lines)


def describe_correction(result: CorrectionResult) -> str:
    attempt = result.attempt
    lines = [
        f"correction {result.correction.decision_id} ({result.correction.decision_type.value}) "
        f"supersedes {attempt.corrected_decision_id}, attempt {attempt.attempt_number}",
        f"invalidated {len(result.invalidated)} decision(s): "
        + ", ".join(f"{n} {t}" for t, n in attempt.counts_by_type.items()),
        f"invalidated {len(result.invalidated_plans)} child plan(s)"
        + (": " + ", ".join(result.invalidated_plans) if result.invalidated_plans else ""),
    ]
    for point in result.replay_frontier:
        where = f"checkpoint {point.checkpoint.checkpoint_id}" if point.checkpoint else "its latest state"
        lines.append(f"replay: thread {point.thread_id} in plan {point.plan_id} from {where}")
    return "\n".join(lines)


def _schema(args: argparse.Namespace) -> int:
    from decisiontrail.schema import schema

    text = schema.as_str() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        print(text, end="")
    return 0


def _serve(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    import uvicorn

    from decisiontrail.access import TokenRegistry
    from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
    from decisiontrail.actors.graph import sqlite_checkpointer
    from decisiontrail.app import create_app
    from decisiontrail.graphdb import DecisionStore

    tokens = TokenRegistry.from_env()
    if not tokens.enabled:
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(
                f"decisiontrail: error: no tokens configured (DECISIONTRAIL_TOKENS_FILE), so the API is served "
                f"on loopback only, not on {args.host}; create tokens with `decisiontrail token`",
                file=sys.stderr,
            )
            return 2
        log.warning("no tokens configured: authentication is off and the API is served on loopback only")
    def load_demo(store: DecisionStore) -> None:
        if store.count_plans():
            return
        log.info("the database is empty: recording the demonstration hierarchy")
        with sqlite_checkpointer(settings.checkpoints) as checkpointer:
            demo = record_demonstration(store, checkpointer, log=log.info)
        print(render_demonstration(store, demo), flush=True)

    log.info("serving GraphQL on http://%s:%d/graphql (GraphiQL in a browser)", args.host, args.port)
    app = create_app(settings, tokens=tokens, on_start=load_demo if args.demo_if_empty else None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


def _token(args: argparse.Namespace) -> int:
    from pathlib import Path

    from decisiontrail.access import Role, issue_token

    token = issue_token(Path(args.file), args.name, Role(args.role))
    print(token)
    log.info("added %s (%s) to %s; the token is shown only this once", args.name, args.role, args.file)
    return 0


def _neo4j(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    from decisiontrail.graphdb.embedded import EmbeddedNeo4j, build_launcher

    if args.neo4j_command == "build":
        print(build_launcher(settings.cache_dir, settings.neo4j_version, log.info))
        return 0
    if args.port is not None:
        settings = replace(settings, bolt_port=args.port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with EmbeddedNeo4j.from_settings(settings, log.info) as server:
        print(f"Neo4j is serving {server.uri} (no authentication, loopback only); Ctrl-C stops it", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
