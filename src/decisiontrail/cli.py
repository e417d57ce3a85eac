"""The ``decisiontrail`` command line."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING
from dataclasses import replace
from datetime import UTC, datetime

from decisiontrail import __version__
from decisiontrail.access import operator
from decisiontrail.domain.correction import CorrectionResult, Impact
from decisiontrail.exceptions import DecisionTrailError, NotFound, ValidationFailed
from decisiontrail.settings import Neo4jSettings

if TYPE_CHECKING:
    from pydantic import JsonValue

    from decisiontrail.actors.runtime import Runtime
    from decisiontrail.domain import Plan
    from decisiontrail.domain.recording import Review
    from decisiontrail.domain.runs import PlanRun
    from decisiontrail.domain.vocabulary import LoadScope
    from decisiontrail.services import Trail

log = logging.getLogger("decisiontrail")

SHUTDOWN_GRACE = 10
"""Seconds `serve` lets running requests finish after SIGTERM before cancelling them."""

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
  DECISIONTRAIL_QUERY_TIMEOUT
                            seconds a request's transaction may run before Neo4j stops it (default 30; 0: no limit)
  DECISIONTRAIL_NEO4J_TRANSACTION_TIMEOUT
                            the embedded Neo4j's own limit for any transaction (default 600)
  DECISIONTRAIL_TOKENS_FILE API tokens (JSON of name, role, sha256, optional project), or DECISIONTRAIL_TOKENS with that JSON;
                            without tokens the API serves loopback only
  DECISIONTRAIL_CHAT_MODEL  the runtime actors' model: scripted (default, no network) or provider:model (init_chat_model)
  DECISIONTRAIL_RUNTIME_WORKERS
                            threads of `serve` that run queued plans (default 2; 0: none in that process)
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
        help="run a plan hierarchy with the scripted model, review, correct and replay it; print it from Neo4j",
        description=(
            "Run the demonstration plan (rate limiting for the billing API) in the plan runtime, in this "
            "process, with the scripted model (scripted:demonstration, no network): invariant "
            "reconciliation, the strategy actor, whose spawn a scripted reviewer resolves, the child plan "
            "it spawns, the execution actor, Apply. One execution decision is then corrected and the "
            "runtime replays it from the actor's checkpoint. The hierarchy is printed as read back from "
            "Neo4j, which also keeps the runs and the actors' checkpoints."
        ),
    )
    tree = commands.add_parser("tree", help="print a plan's decision tree", description="Print a plan's decision tree.")
    tree.add_argument("plan_id", help="the plan's ULID")
    tree.add_argument("--history", action="store_true", help="also show superseded decisions, marked, under what replaced them")
    tree.add_argument(
        "--as-of", type=_moment, metavar="TIME", help="the tree as it stood at this ISO 8601 time (UTC if no offset)"
    )
    commands.add_parser(
        "migrate", help="apply schema migrations (constraints, indexes) and exit", description="Apply migrations."
    )
    sdl = commands.add_parser("schema", help="print the GraphQL schema (SDL)", description="Print the GraphQL schema in SDL.")
    sdl.add_argument("--output", help="write to this file instead of standard output")
    serve = commands.add_parser(
        "serve",
        help="serve the GraphQL API (GraphiQL at /graphql), graph exports (/export), OTLP traces (/v1/traces), /healthz, /readyz",
        description="Serve the GraphQL API with uvicorn. Neo4j is the embedded one unless NEO4J_URI is set.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default: 8000)")
    serve.add_argument(
        "--max-in-flight",
        type=_at_least_one,
        metavar="N",
        help="requests served at once; beyond them a request is refused at once with 503 and Retry-After "
        "instead of waiting in an unbounded queue (default: 128)",
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
    token = commands.add_parser(
        "token",
        help="create an API token (stored hashed in the token file)",
        description="Create a bearer token for the API and add its SHA-256 to the token file; the token is printed once.",
    )
    token.add_argument("--name", required=True, help="who the token is for")
    token.add_argument("--role", required=True, choices=["actor", "reviewer", "analyst", "admin"], help="what it may do")
    token.add_argument("--file", required=True, help="the token file (point DECISIONTRAIL_TOKENS_FILE at it)")
    token.add_argument("--project", help="limit the token to this project's plans (without it, the token sees every project)")
    impact = commands.add_parser(
        "impact",
        help="preview what correcting a decision would invalidate (writes nothing)",
        description="Preview what correcting a decision would invalidate: decisions, plans, counts by type.",
    )
    impact.add_argument(
        "decision_id",
        help="the decision: its ULID, or PLAN_ID#N for the plan's decision with sequence number N (as `tree` prints)",
    )
    correct = commands.add_parser(
        "correct",
        help="correct a decision: supersede it and exactly its downstream",
        description=(
            "Correct a decision (ADR-007): a correction decision is recorded, and the decision and its whole "
            "downstream, across child plans, are superseded in one transaction. Prints what was invalidated "
            "and the replay frontier (the actor checkpoints to re-run from)."
        ),
    )
    correct.add_argument(
        "decision_id",
        help="the decision: its ULID, or PLAN_ID#N for the plan's decision with sequence number N (as `tree` prints)",
    )
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
    correct.add_argument("--description", help="a prompt correction's new description (default: the guidance)")
    correct.add_argument(
        "--arguments", type=_json_object, help="a prompt correction's new arguments, a JSON object (default: the plan's)"
    )
    corrections = commands.add_parser(
        "history", help="list the correction attempts on a decision's chain", description="List correction attempts."
    )
    corrections.add_argument(
        "decision_id",
        help="the decision: its ULID, or PLAN_ID#N for the plan's decision with sequence number N (as `tree` prints)",
    )
    guide = commands.add_parser(
        "guide",
        help="give a plan guidance without correcting anything (ADR-033's `agents plan prompt`)",
        description="Record a user's guidance as a user_intervention under a decision of the plan; the actor's next "
        "decisions can depend on it. Nothing is superseded.",
    )
    guide.add_argument(
        "decision_id",
        help="the decision to hang the guidance under: "
        + "the decision: its ULID, or PLAN_ID#N for the plan's decision with sequence number N (as `tree` prints)",
    )
    guide.add_argument("--guidance", required=True, help="the guidance, in words")
    guide.add_argument("--reason", default="", help="why it is given")
    guide.add_argument("--by", default="cli", help="who gives it (default: cli)")
    inbox = commands.add_parser(
        "reviews",
        help="list reviews across plans (pending by default): the reviewer's inbox",
        description="List reviews across plans, oldest first.",
    )
    inbox.add_argument(
        "--status",
        choices=["pending", "approved", "alternative_selected", "custom", "cancelled", "lapsed", "all"],
        default="pending",
        help="which reviews (default: pending)",
    )
    inbox.add_argument("--plan", help="only this plan's reviews")
    inbox.add_argument("--project", help="only this project's reviews")
    inbox.add_argument("--first", type=int, default=100, help="how many (1 to 100, default 100)")
    resolve = commands.add_parser(
        "resolve",
        help="resolve a pending review",
        description="Approve, select an alternative, or give a custom choice. The review records you as "
        "cli:<your login name> and the digest of the decision it resolved as.",
    )
    resolve.add_argument("review_id", help="the review's ULID (as `reviews` prints)")
    resolve.add_argument("--action", choices=["approve", "select_alternative", "custom"], default="approve")
    resolve.add_argument("--option", help="the alternative chosen, or the custom choice")
    resolve.add_argument(
        "--digest",
        help="the review's digest as `reviews` printed it: refused unless the review still proposes exactly that action",
    )
    phase = commands.add_parser(
        "phase",
        help="move a plan to another phase (strategize -> execute -> apply, or back to strategize)",
        description="Advance a plan's phase, recording who and why; refused while reviews are pending.",
    )
    phase.add_argument("plan_id", help="the plan's ULID")
    phase.add_argument("phase", choices=["strategize", "execute", "apply"])
    phase.add_argument("--reason", default="", help="why")
    phase.add_argument("--by", default="cli", help="who asks (default: cli)")
    replay = commands.add_parser(
        "replay",
        help="report how a correction's replay went",
        description="Record a correction attempt's replay outcome and the decisions the replay recorded.",
    )
    replay.add_argument("attempt_id", help="the correction attempt's ULID (as `correct` and `history` print)")
    replay.add_argument("outcome", choices=["replayed", "failed", "not_needed"])
    replay.add_argument("--decision", action="append", default=[], metavar="ID", help="a decision the replay recorded (repeat)")
    replay.add_argument("--detail", help="a note on how it went")

    invariants = commands.add_parser(
        "invariants",
        help="the global and project invariants, and a plan's (ADR-007: add a missing one, remove one that should not apply)",
        description="Set or show the global or a project's invariants (plans instantiated afterwards gather them), or "
        "add an invariant to a plan in Strategize or remove one from a plan (its invariant_enforced is corrected away).",
    )
    invariant_commands = invariants.add_subparsers(dest="invariants_command", required=True, metavar="command")
    set_ = invariant_commands.add_parser("set", help="replace the global set or a project's")
    show = invariant_commands.add_parser("show", help="print the global set or a project's")
    for which in (set_, show):
        where = which.add_mutually_exclusive_group(required=True)
        where.add_argument("--global", dest="global_set", action="store_true", help="the global set")
        where.add_argument("--project", help="that project's set")
    set_.add_argument("invariant", nargs="*", metavar="NAME=STATEMENT", help="the set's invariants (none: an empty set)")
    add = invariant_commands.add_parser("add", help="add a missing invariant to a plan in Strategize")
    add.add_argument("plan_id", help="the plan's ULID")
    add.add_argument("name")
    add.add_argument("statement")
    add.add_argument("--scope", choices=["plan", "action"], default="plan", help="where it is declared (default: plan)")
    add.add_argument("--reason", default="", help="why it was missing")
    add.add_argument("--by", default="cli", help="who adds it (default: cli)")
    remove = invariant_commands.add_parser("remove", help="remove an invariant that should not apply to a plan")
    remove.add_argument("plan_id", help="the plan's ULID")
    remove.add_argument("name")
    remove.add_argument("--reason", required=True, help="why it should not apply")
    remove.add_argument("--by", default="cli", help="who asks (default: cli)")

    _runtime_commands(commands)
    _offline_commands(commands)
    _backup_commands(commands)

    neo4j = commands.add_parser("neo4j", help="manage the embedded Neo4j", description="Manage the embedded Neo4j.")
    neo4j_commands = neo4j.add_subparsers(dest="neo4j_command", required=True, metavar="ACTION")
    neo4j_commands.add_parser("build", help="build the launcher with Maven (done on first start anyway)")
    start = neo4j_commands.add_parser("start", help="run the embedded Neo4j in the foreground until interrupted")
    start.add_argument("--port", type=int, help="Bolt port (default: DECISIONTRAIL_NEO4J_PORT or 7687)")
    return parser


def _scope_arguments(parser: argparse.ArgumentParser, *, everything: bool = True) -> None:
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--plan", metavar="ID", help="one plan's decisions")
    scope.add_argument("--hierarchy", metavar="ID", help="a plan and every plan below it")
    if everything:
        scope.add_argument("--all", action="store_true", help="the whole database")


def _runtime_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="instantiate a plan and have the runtime's actors run it (--wait: here, to the end)",
        description=(
            "Instantiate a plan from a description and queue its run: the runtime's actors (strategy, execution, "
            "invariant reconciliation) take it from Strategize to Apply, spawning and running child plans as they "
            "decide. Prints the plan id (first line, alone) and the run id. Without --wait the run is queued for the "
            "runtime workers of a serving process (decisiontrail serve); with --wait it runs in this process, its "
            "progress on stderr, and the exit status says how it settled: 0 succeeded, 1 failed, 2 waits for a "
            "person's review (or the command was refused), 3 still running at --timeout."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("description", help="what the plan is to do, in words")
    run.add_argument(
        "--arg",
        action="append",
        default=[],
        type=_plan_argument,
        metavar="KEY=VALUE",
        help='a plan argument (repeat); VALUE is read as JSON when it is JSON (600, true, ["a","b"], "600"), '
        "else taken as a string; the scripted model reads depth (default 2), parallel, approach and resources",
    )
    run.add_argument("--project", help="the project the plan belongs to (its child plans inherit it)")
    run.add_argument(
        "--invariant",
        action="append",
        default=[],
        metavar="NAME=STATEMENT",
        help="an invariant the plan declares (repeat), besides the global and its project's",
    )
    run.add_argument(
        "--review-below",
        type=_confidence,
        default=0.0,
        metavar="CONFIDENCE",
        help="decisions recorded with a lower confidence wait for a person's review (the plan's automation "
        "thresholds in Strategize and Execute; default 0: none waits)",
    )
    run.add_argument(
        "--model",
        metavar="MODEL",
        help="the actors' chat model: scripted, or provider:model such as openai:gpt-4.1 "
        "(default: DECISIONTRAIL_CHAT_MODEL, else scripted)",
    )
    run.add_argument("--wait", action="store_true", help="run the plan in this process until it settles, instead of queuing it")
    run.add_argument(
        "--timeout",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="with --wait: how long to drive the run before leaving it queued for a serving process (default: 300)",
    )
    plans = commands.add_parser(
        "plans",
        help="list plans, newest first, with their phase and run status",
        description="List plans newest first, one a line: id, phase, the status of its run (- when the runtime "
        "does not run it), project (- for none) and description.",
    )
    plans.add_argument("--project", help="only this project's plans")
    plans.add_argument("--phase", choices=["strategize", "execute", "apply"], help="only plans in this phase")
    plans.add_argument("--top-level", action="store_true", help="only plans that are no other plan's child")
    plans.add_argument("--limit", type=_at_least_one, default=20, metavar="N", help="how many (default: 20)")
    plans.add_argument("--json", action="store_true", help="print a JSON array of the plans, each with its run")


def _offline_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="validate stored decisions against every rule (exit 1 on violations)",
        description=(
            "Load a plan, a hierarchy or the whole database into networkx and run every validation rule "
            "(one rooted tree per plan, no dependency cycles, no partial invalidation, consistent corrections, "
            "sequence order, types in their phases, context snapshots, spawn links) and the post-phase coverage "
            "rules (ADR-033). docs/checks.md explains each rule and how to read its violations. "
            "Exit status: 0 clean, 1 violations found, 2 the check could not run."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _scope_arguments(check)
    check.add_argument("--format", choices=["text", "json"], default="text", help="report format (default: text)")
    check.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="with --all: check independent groups of plans (a hierarchy and any it shares an edge with) in N worker "
        "processes beside this one, for a database of 20,000 decisions or more (a smaller one is checked sooner than "
        "workers start); memory holds the largest group (small groups are loaded together, up to 200 plans), not the "
        "database (default: 1, one load at a time)",
    )
    check.add_argument(
        "--coverage",
        metavar="FILE",
        help='expected coverage as JSON, e.g. {"strategize_minimums": {"strategy_choice": 2}, '
        '"invariants_enforced": true, "spawns_have_children": true, "execute_under_strategize": true}',
    )
    analyze = commands.add_parser(
        "analyze",
        help="lineage analytics of a plan or hierarchy",
        description=(
            "Counts by type and phase, confidence distribution, correction rate and the decisions corrected most, "
            "depth and fan-out, blast radius (how many decisions correcting each one would invalidate) and the "
            "most critical decisions by it, review rate and how reviews were resolved."
        ),
    )
    _scope_arguments(analyze, everything=False)
    analyze.add_argument(
        "--top", type=int, default=10, help="how many decisions to list as most corrected and most critical (default: 10)"
    )
    analyze.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    export = commands.add_parser(
        "export",
        help="export a graph for Gephi, yEd, Graphviz, Cytoscape.js or W3C PROV tools",
        description=(
            "Write a plan, a hierarchy, the whole database, or a decision's lineage or impact as GraphML (Gephi, yEd), "
            "DOT (Graphviz), Cytoscape.js JSON, node-link JSON, GEXF (Gephi) or W3C PROV-JSON. Nodes carry label, status, "
            "plan_id and decision_type to style by. The document is streamed to the output as it is written; with --all, "
            "what a format declares or gathers first (GraphML's and GEXF's typed keys, PROV-JSON's sections, the JSON "
            "formats' edges) waits in a temporary file for the last group."
        ),
    )
    export.add_argument(
        "subject",
        nargs="?",
        choices=["graph", "corrections"],
        default="graph",
        help="graph (the default): the graph, in a --format below; corrections: one evaluation example per correction "
        "made in --plan, --hierarchy or --project (the decision, the user's guidance and what replaced it, and about "
        "the attempt), one JSON object a line (--format jsonl, its default) for LangSmith, Langfuse or Phoenix",
    )
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument("--plan", metavar="ID", help="one plan")
    what.add_argument("--hierarchy", metavar="ID", help="a plan and every plan below it")
    what.add_argument(
        "--all",
        action="store_true",
        help="the whole database, written a group of plans at a time (a hierarchy and any it shares an edge with), so "
        "memory holds the largest group, not the database",
    )
    what.add_argument("--lineage", metavar="DECISION", help="a decision and where it comes from")
    what.add_argument("--impact", metavar="DECISION", help="a decision and what correcting it would invalidate")
    what.add_argument("--project", metavar="NAME", help="corrections only: every plan of a project")
    export.add_argument(
        "--format",
        choices=["graphml", "dot", "cyjs", "json", "gexf", "prov.json", "jsonl"],
        default="graphml",
        help="graphml (Gephi, yEd), dot (Graphviz), cyjs (Cytoscape.js), json (networkx node-link), gexf (Gephi, drawn: "
        "coloured by decision type, sized by blast radius, laid out in layers), prov.json (W3C PROV-JSON); default graphml",
    )
    export.add_argument(
        "--as-of", type=_moment, metavar="TIME", help="the graph as it stood at this ISO 8601 time (UTC if no offset)"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    export.add_argument(
        "--jobs",
        type=_at_least_one,
        default=1,
        metavar="N",
        help="with --all: load the groups of plans and make their parts of the document in N worker processes, a few "
        "groups ahead of the one being written, for a database of 20,000 decisions or more (a smaller one is written "
        "sooner than workers start); the document is the same (default: 1, one group at a time, here)",
    )
    export.set_defaults(format=None)  # graphml for a graph, jsonl for corrections: _choose_export decides
    importing = commands.add_parser(
        "import",
        help="import agent traces: OpenTelemetry spans become plans and decisions",
        description="Import agent traces recorded elsewhere, as POST /v1/traces takes them (see docs/interop.md).",
    )
    importers = importing.add_subparsers(dest="import_command", required=True, metavar="SOURCE")
    otlp_import = importers.add_parser(
        "otlp",
        help="an OTLP ExportTraceServiceRequest in a file (JSON or protobuf, gzip or not)",
        description=(
            "Import an OTLP trace export (an ExportTraceServiceRequest, as an OpenTelemetry exporter or collector "
            "writes it: OTLP/JSON or protobuf, optionally gzip-compressed) by the mapping in docs/interop.md: agent "
            "spans become plans, tool, retriever and decision spans decisions; spans that carry no decision are kept "
            "out. The file is one transaction: all of it is imported, or nothing. Importing it again records nothing twice."
        ),
    )
    otlp_import.add_argument(
        "file",
        metavar="FILE",
        help="the request, e.g. traces.json, traces.pb or traces.json.gz; OTLP/JSON may hold one request per line, "
        "as the Collector's file exporter writes them",
    )
    otlp_import.add_argument(
        "--encoding",
        choices=["auto", "json", "protobuf"],
        default="auto",
        help="how FILE is encoded (default auto: JSON if it starts with '{', else protobuf)",
    )
    prune = commands.add_parser(
        "prune",
        help="delete superseded history older than a retention period (use --dry-run first)",
        description=(
            "Apply the retention policy: decisions superseded longer ago than --older-than in plans that reached "
            "Apply, and child plans invalidated that long ago under such plans, are deleted with the contexts, "
            "checkpoint groups, reviews and phase changes only they used. Whatever a kept record still refers to "
            "stays (a correction's original, say). Correction attempts are kept. "
            "--dry-run lists what would go and deletes nothing."
        ),
    )
    prune.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="retention period: 30d, 2w, 12h, 90m, or a number of days",
    )
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    prune.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")


BACKUP_CONTENTS = (
    "A dump holds every node and relationship decisiontrail keeps: plans, decisions and all their edges, reviews, "
    "correction attempts, contexts, checkpoint groups, phase changes, invariant sets, plan locks, the event outbox, "
    "OTLP traces and the spans waiting for their root. Not in it: the schema migration ledger (the restoring database "
    "has its own) and API tokens (they live in the token file, not in Neo4j: copy that file yourself). The format is "
    "gzip-compressed JSON Lines, 'decisiontrail-dump' version 1 (docs/backup.md): a header, one line per node, one per "
    "relationship, and a trailer that counts them, so a file cut short is noticed."
)


def _backup_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dump = commands.add_parser(
        "dump",
        help="write the whole store to a file (gzip JSON Lines) that `restore` reads back",
        description=BACKUP_CONTENTS
        + " The database is read as a stream, so memory does not grow with it; dump while nothing writes (stop the "
        "service), or a relationship written meanwhile may miss its node and the dump will not restore.",
    )
    dump.add_argument("file", metavar="FILE", help="where to write, e.g. trail.dump.gz (replaced only once complete)")
    restore = commands.add_parser(
        "restore",
        help="read a dump into an empty database (refused if it holds data)",
        description=BACKUP_CONTENTS
        + " Restore writes the records as they were into this database, which must hold no data: a non-empty "
        "database is refused and nothing is written. Also refused: a dump of a newer format version, or one made "
        "with migrations this decisiontrail does not know. All or nothing: if the restore fails part-way (a file "
        "cut short, a label decisiontrail does not keep), what it wrote is deleted again. Migrations newer than "
        "the dump are run again over the restored data.",
    )
    restore.add_argument("file", metavar="FILE", help="a file written by `decisiontrail dump`")


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
        if args.command == "export":
            _choose_export(args)
        if args.command in ("run", "plans"):
            return _plans_and_runs(args, settings)
        return _with_graph(args, settings)
    except DecisionTrailError as e:
        print(f"decisiontrail: error: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _with_graph(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
    from decisiontrail.actors.reconciliation import Reconciler
    from decisiontrail.domain import Phase
    from decisiontrail.domain.correction import ReplayOutcome
    from decisiontrail.domain.pages import ReviewPage, page_size
    from decisiontrail.domain.recording import ReviewAction
    from decisiontrail.services import lifecycle, open_trail, reading, reviews
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
    from decisiontrail.services.correction import correct, history, preview, record_replay

    with open_trail(settings, progress=log.info) as opened:
        checkpointer = checkpointer_of(opened)  # the actors' checkpoints, in the same Neo4j
        trail = replace(opened, reconciler=Reconciler(checkpointer))
        if args.command == "demo":
            demo = record_demonstration(trail, checkpointer, log=log.info)
            log.info(
                "recorded by run %s of the runtime (model %s): %d review(s) resolved, %d Execute checkpoint group(s); "
                "reading the hierarchy back from Neo4j",
                demo.run.run_id,
                demo.run.model,
                len(demo.reviews_resolved),
                demo.checkpoint_groups,
            )
            print(render_demonstration(trail, demo))
            print()
            print(describe_correction(demo.correction))
            print(
                f"replayed by the runtime in generation {demo.run.generation} of run {demo.run.run_id}: "
                f"{len(demo.replayed)} new decision(s): " + ", ".join(demo.replayed)
            )
        elif args.command == "tree":
            found = reading.get_tree(trail, args.plan_id, as_of=args.as_of, history=args.history)
            if found is None:
                moment = f" at {args.as_of.isoformat()}" if args.as_of else ""
                print(f"plan {args.plan_id} has no current decisions{moment} (a correction invalidated it); see --history")
            else:
                print(found.render(ids=True))
        elif args.command == "impact":
            print(describe_impact(preview(trail, _decision_id(trail, args.decision_id))))
        elif args.command == "correct":
            decision_id = _decision_id(trail, args.decision_id)
            result = correct(
                trail,
                decision_id,
                args.mode,
                args.guidance,
                args.reason,
                requested_by=args.by,
                description=args.description,
                arguments=args.arguments,
            )
            print(describe_correction(result))
        elif args.command == "invariants":
            _invariants(args, trail)
        elif args.command == "guide":
            parent = reading.get_decision(trail, _decision_id(trail, args.decision_id))
            guided = lifecycle.add_guidance(
                trail, parent.plan_id, args.guidance, parent_decision_id=parent.decision_id, reason=args.reason, given_by=args.by
            )
            print(
                f"recorded guidance {guided.decision_id} (#{guided.sequence_number} user_intervention) in plan {guided.plan_id}"
            )
        elif args.command == "reviews":
            status = None if args.status == "all" else args.status
            _, inbox = reading.page_reviews(
                trail,
                ReviewPage(first=page_size(args.first), status=status, plan_id=args.plan, project=args.project, count=False),
            )
            for waiting in inbox:
                print(_describe_review(waiting))
        elif args.command == "resolve":
            review, decision = reviews.resolve_review(
                trail, args.review_id, ReviewAction(args.action), args.option, principal=operator(), digest=args.digest
            )
            print(
                f"review {review.review_id} {review.status.value} by {review.resolved_by}: recorded "
                f"{decision.decision_id} ({decision.chosen_option}), approved digest {review.approved_digest}"
            )
        elif args.command == "phase":
            plan = lifecycle.advance_phase(trail, args.plan_id, Phase(args.phase), args.reason, by=args.by)
            print(f"plan {plan.plan_id} is in {plan.phase.value}")
        elif args.command == "replay":
            attempt = record_replay(trail, args.attempt_id, ReplayOutcome(args.outcome), args.detail, args.decision)
            print(f"attempt {attempt.attempt_id}: replay {attempt.replay_outcome.value}")
        elif args.command == "history":
            for attempt in history(trail, _decision_id(trail, args.decision_id)):
                print(
                    f"attempt {attempt.attempt_number} at {attempt.at:%Y-%m-%d %H:%M:%S} by {attempt.requested_by} "
                    f"({attempt.mode.value}): {attempt.guidance!r}; invalidated {len(attempt.invalidated_decision_ids)} "
                    f"decision(s), {len(attempt.invalidated_plan_ids)} plan(s); replay {attempt.replay_outcome.value}"
                )
        elif args.command == "import":
            _import_otlp(args, trail)
        elif args.command == "migrate":
            log.info("schema is up to date on %s", trail.graph.uri)
        elif args.command in ("dump", "restore"):
            _backup(args, trail)
        elif args.command == "export" and args.subject == "corrections":
            _export_corrections(args, trail)
        elif args.command in ("check", "analyze", "export", "prune"):
            return _offline(args, trail)
    return 0


def _invariants(args: argparse.Namespace, trail: Trail) -> None:
    from decisiontrail.domain.invariants import Invariant, InvariantSet, Scope
    from decisiontrail.services import invariants

    command = args.invariants_command
    if command in ("set", "show"):
        scope, project = (Scope.GLOBAL, None) if args.global_set else (Scope.PROJECT, args.project)
        found: InvariantSet | None
        if command == "set":
            declared = [Invariant(name=name, statement=statement) for name, statement in map(_name_and_statement, args.invariant)]
            found = invariants.set_invariants(trail, scope, project, declared)
        else:
            found = invariants.invariant_set(trail, scope, project)
        where = "global" if scope is Scope.GLOBAL else f"project {project}"
        if found is None:
            print(f"no {where} invariants are set")
            return
        print(f"{where} invariants ({len(found.invariants)}):")
        for invariant in found.invariants:
            print(f"  {invariant.name}: {invariant.statement}")
    elif command == "add":
        added = invariants.add_invariant(
            trail, args.plan_id, args.name, args.statement, Scope(args.scope), args.reason, added_by=args.by
        )
        print(f"recorded {added.decision_id} (#{added.sequence_number} invariant_enforced) in plan {added.plan_id}")
    else:
        print(describe_correction(invariants.remove_invariant(trail, args.plan_id, args.name, args.reason, requested_by=args.by)))


# -- the runtime: run a plan, list plans ------------------------------------------------------------

SETTLE_SLICE = 1.0
"""Seconds `run --wait` drives runs before looking whether a plan below its own waits for a person."""


def _plans_and_runs(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    """`run` and `plans`, over a trail whose actors keep their checkpoints in the same Neo4j."""
    from decisiontrail.actors.runtime import Runtime
    from decisiontrail.domain.invariants import Invariant
    from decisiontrail.domain.runs import check_model_name
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of
    from decisiontrail.services import open_trail
    from decisiontrail.settings import RuntimeSettings

    if args.command == "run":  # refused before anything opens
        args.model = check_model_name(args.model or RuntimeSettings.from_env().chat_model)
        args.arguments = _plan_arguments(args.arg)
        args.invariants = [
            Invariant(name=name, statement=statement) for name, statement in map(_name_and_statement, args.invariant)
        ]
    with open_trail(settings, progress=log.info) as trail:
        if args.command == "plans":
            _list_plans(args, trail)
            return 0
        return _run(args, Runtime(trail, checkpointer_of(trail)))


def _run(args: argparse.Namespace, runtime: Runtime) -> int:
    from decisiontrail.domain import AutomationProfile
    from decisiontrail.domain.runs import RunRequest
    from decisiontrail.services.lifecycle import instantiate_plan
    from decisiontrail.services.runs import runs_of_plans

    gate = AutomationProfile(edit_code=args.review_below, execute_command=args.review_below)
    plan, _ = instantiate_plan(
        runtime.trail,
        args.description,
        args.arguments,
        automation_profile=gate,
        invariants=args.invariants,
        project=args.project,
        run=RunRequest(model=args.model),
    )
    run = runs_of_plans(runtime.trail, [plan.plan_id])[0]
    assert run is not None  # queued with the plan, in its transaction
    print(plan.plan_id)
    print(f"run {run.run_id} {run.status.value} (model {run.model})", flush=True)
    if not args.wait:
        log.info(
            "the run is queued for the runtime workers of a serving process (decisiontrail serve); "
            "follow it with `decisiontrail plans` or `decisiontrail tree %s`",
            plan.plan_id,
        )
        return 0
    settled = _settle(runtime, plan.plan_id, args.timeout)
    return _report_run(runtime.trail, plan.plan_id, settled is None, args.timeout)


def _settle(runtime: Runtime, plan_id: str, timeout: float) -> PlanRun | None:
    """Drive runs here until the plan's has finished or its hierarchy waits for a person, following
    them on stderr; None if it has not settled within ``timeout`` seconds."""
    progress = _Progress(runtime.trail, plan_id) if log.isEnabledFor(logging.INFO) else None
    stop = threading.Event()
    follower = threading.Thread(target=progress.follow, args=(stop,), daemon=True) if progress else None
    deadline = time.monotonic() + timeout
    from decisiontrail.actors.workers import Workers

    # No worker threads (this thread drives the runs): only the heartbeat keeping their leases, so
    # that a serving process on the same database does not claim a run this one is driving.
    with (
        Workers(runtime, count=0).running(),
        _quieted("decisiontrail.actors.runtime") if progress else contextlib.nullcontext(),
    ):
        if follower is not None:
            follower.start()
        try:
            while True:
                # The runtime settles on the plan's own run; a child plan's review leaves it waiting
                # for its children, so between slices the hierarchy is asked whether a person is awaited.
                try:
                    return runtime.run_until_settled(plan_id, timeout=min(SETTLE_SLICE, max(0.0, deadline - time.monotonic())))
                except TimeoutError:
                    waiting = _awaiting_a_person(runtime.trail, plan_id)
                    if waiting is not None:
                        return waiting
                    if time.monotonic() >= deadline:
                        return None
        finally:
            stop.set()
            if follower is not None and progress is not None:
                follower.join()
                progress.look()  # the hierarchy as it settled


def _awaiting_a_person(trail: Trail, plan_id: str) -> PlanRun | None:
    """A run of the hierarchy that waits for a review while no run of it can go on; else None."""
    from decisiontrail.domain.runs import RunStatus

    found = [run for _, run in _hierarchy(trail, plan_id) if run is not None]
    if any(run.status in (RunStatus.QUEUED, RunStatus.RUNNING) for run in found):
        return None
    return next((run for run in found if run.status is RunStatus.WAITING and run.waiting_for == "review"), None)


def _report_run(trail: Trail, plan_id: str, timed_out: bool, timeout: float) -> int:
    """The run's outcome on stdout, and its exit status: 0 succeeded, 1 failed, 2 waits for a person, 3 timed out."""
    from collections import Counter

    from decisiontrail.domain.runs import RunStatus
    from decisiontrail.services import reading

    hierarchy = _hierarchy(trail, plan_id)
    (plan, run), current = hierarchy[0], [p for p, _ in hierarchy if not p.is_invalidated]
    assert run is not None
    decisions = [d for p in current for d in reading.list_decisions(trail, p.plan_id, current_only=True)]
    counts = Counter(d.decision_type.value for d in decisions)
    print(f"run {run.run_id} {_run_state(plan, run)}")
    print(f"{len(decisions)} decision(s) in {len(current)} plan(s): " + ", ".join(f"{n} {t}" for t, n in counts.items()))
    if run.status is RunStatus.SUCCEEDED:
        return 0
    if run.status in (RunStatus.FAILED, RunStatus.CANCELLED):
        return 1
    pending = [review for p in current for review in reading.pending_reviews(trail, p.plan_id)]
    if pending and not timed_out:
        print(f"waiting for a person: {len(pending)} review(s) pending")
        for review in pending:
            print(f"  {_describe_review(review)}")
        print(
            "resolve each with `decisiontrail resolve REVIEW_ID` (--action approve, select_alternative or custom, "
            "--option TEXT); the run is then queued again, for the runtime workers of a serving process"
        )
        return 2
    print(f"not settled within {timeout:g} s: the run is left to the runtime workers of a serving process")
    return 3


class _Progress:
    """`run --wait` on stderr: each plan of the hierarchy as it is spawned and as its phase or run changes."""

    def __init__(self, trail: Trail, plan_id: str) -> None:
        self.trail = trail
        self.plan_id = plan_id
        self.said: dict[str, str] = {}

    def look(self) -> None:
        changed = []
        for plan, run in _hierarchy(self.trail, self.plan_id):
            if plan.plan_id not in self.said and plan.parent_plan_id is not None:
                log.info("plan %s spawned child plan %s: %s", plan.parent_plan_id, plan.plan_id, _headline(plan.description))
            state = _run_state(plan, run)
            if self.said.get(plan.plan_id) != state:
                self.said[plan.plan_id] = state
                changed.append((run.updated_at if run is not None else plan.created_at, plan.plan_id, state))
        # Changes seen in one look are said in the order they were made (a child's run ends before its parent's).
        for _, plan_id, state in sorted(changed):
            log.info("plan %s: %s", plan_id, state)

    def follow(self, stop: threading.Event, every: float = 0.2) -> None:
        while not stop.wait(every):
            try:
                self.look()
            except DecisionTrailError as e:  # only the progress is missed; the outcome is read again at the end
                log.debug("progress: %s", e.message)


@contextlib.contextmanager
def _quieted(logger: str) -> Iterator[None]:
    """The logger's information held back (its warnings kept) while the progress says it instead."""
    quieted = logging.getLogger(logger)
    level = quieted.level
    quieted.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        quieted.setLevel(level)


def _hierarchy(trail: Trail, plan_id: str) -> list[tuple[Plan, PlanRun | None]]:
    """The plan and every plan below it, level by level, each with its run (None where it has none)."""
    from decisiontrail.services import reading, runs

    plans: list[Plan] = []
    level = [plan_id]
    while level:
        found = [p for p in reading.get_plans(trail, level) if p is not None]
        plans += found
        level = [child for children in reading.child_plans_of(trail, [p.plan_id for p in found]) for child in children]
    return list(zip(plans, runs.runs_of_plans(trail, [p.plan_id for p in plans]), strict=True))


def _run_state(plan: Plan, run: PlanRun | None) -> str:
    """Where a plan is: its phase, and its run's status with the actor it is in or what it waits for.

    >>> from decisiontrail.domain import Plan
    >>> from decisiontrail.domain.runs import PlanRun, RunStatus
    >>> plan = Plan(description="d")
    >>> _run_state(plan, PlanRun(plan_id=plan.plan_id, status=RunStatus.WAITING, waiting_for="children"))
    'strategize, waiting for children'
    """
    if run is None:
        return plan.phase.value
    state = f"{plan.phase.value}, {run.status.value}"
    if run.waiting_for and run.status.value == "waiting":
        state += f" for {run.waiting_for}"
    elif run.actor is not None and run.status.value == "running":
        state += f": {run.actor.value} actor"
    elif run.error:
        state += f": {run.error}"
    return state


def _list_plans(args: argparse.Namespace, trail: Trail) -> None:
    import json

    from decisiontrail.domain import Phase
    from decisiontrail.domain.pages import MAX_PAGE, PlanPage
    from decisiontrail.services import reading, runs

    ids: list[str] = []
    while len(ids) < args.limit:
        size = min(MAX_PAGE, args.limit - len(ids))
        page = PlanPage(
            first=size,
            after=ids[-1] if ids else None,
            phase=Phase(args.phase) if args.phase else None,
            top_level=True if args.top_level else None,
            project=args.project,
            count=False,
            newest_first=True,
        )
        found = reading.page_plans(trail, page)[1]
        ids += found
        if len(found) < size:
            break
    listed = [(p, r) for p, r in zip(reading.get_plans(trail, ids), runs.runs_of_plans(trail, ids), strict=True) if p is not None]
    if args.json:
        print(json.dumps([_plan_json(plan, run) for plan, run in listed], indent=2))
        return
    width = max((len(plan.project or "-") for plan, _ in listed), default=1)
    for plan, run in listed:
        mark = "  [invalidated]" if plan.is_invalidated else ""
        status = run.status.value if run is not None else "-"
        print(
            f"{plan.plan_id}  {plan.phase.value:<10} {status:<9}  {plan.project or '-':<{width}}  {_headline(plan.description)}{mark}"
        )


def _plan_json(plan: Plan, run: PlanRun | None) -> dict[str, object]:
    return {
        "plan_id": plan.plan_id,
        "phase": plan.phase.value,
        "project": plan.project,
        "description": plan.description,
        "parent_plan_id": plan.parent_plan_id,
        "created_at": plan.created_at.isoformat(),
        "invalidated": plan.is_invalidated,
        "run": run.model_dump(mode="json") if run is not None else None,
    }


def _headline(description: str, width: int = 80) -> str:
    """A description on one line, cut at ``width`` characters.

    >>> _headline("Add rate limiting\\n  to the API", width=20)
    'Add rate limiting t…'
    """
    line = " ".join(description.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _plan_argument(text: str) -> tuple[str, JsonValue]:
    """``--arg KEY=VALUE``: VALUE as JSON when it is JSON (a number, a list, a quoted string), else as text.

    >>> _plan_argument("limit=600"), _plan_argument("service=billing-api"), _plan_argument('code="007"')
    (('limit', 600), ('service', 'billing-api'), ('code', '007'))
    """
    import json

    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} is not JSON")  # NaN and Infinity: kept as the text

    try:
        parsed: JsonValue = json.loads(value, parse_constant=no_constant)
    except ValueError:
        parsed = value
    return key.strip(), parsed


def _plan_arguments(pairs: Sequence[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    arguments: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in arguments:
            raise ValidationFailed(f"--arg: {key} is given twice", field="arg")
        arguments[key] = value
    return arguments


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a confidence from 0 to 1, not {value:g}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"more than 0 seconds, not {value:g}")
    return value


def _import_otlp(args: argparse.Namespace, trail: Trail) -> None:
    from pathlib import Path

    from decisiontrail import otlp
    from decisiontrail.services.importing import import_spans

    try:
        body = Path(args.file).read_bytes()
    except OSError as e:
        raise ValidationFailed(f"file: cannot read {args.file}: {e.strerror}", field="file") from None
    if body[:2] == b"\x1f\x8b":
        body = otlp.unzip(body, "gzip")
    if args.encoding == "auto":
        encoding = otlp.Encoding.JSON if body.lstrip()[:1] == b"{" else otlp.Encoding.PROTOBUF
    else:
        encoding = otlp.Encoding.JSON if args.encoding == "json" else otlp.Encoding.PROTOBUF
    spans = otlp.decode_lines(body) if encoding is otlp.Encoding.JSON else otlp.decode(body, encoding)
    report = import_spans(trail, spans)
    print(
        f"{report.spans} spans: imported {len(report.traces)} trace(s) into {len(report.plan_ids)} plan(s) "
        f"and {len(report.decision_ids)} decision(s)"
    )
    for plan_id in report.plan_ids:
        print(f"  plan {plan_id}")
    if report.message():
        print(report.message())


def _backup(args: argparse.Namespace, trail: Trail) -> None:
    from pathlib import Path

    from decisiontrail.services import backup

    progress = False if args.quiet else None
    if args.command == "dump":
        report = backup.dump(trail, Path(args.file), progress=progress)
        print(f"dumped {report.nodes:,} node(s) and {report.relationships:,} relationship(s) to {args.file}")
        return
    report = backup.restore(trail, Path(args.file), progress=progress)
    print(f"restored {report.nodes:,} node(s) and {report.relationships:,} relationship(s) from {args.file}")
    if report.migrations_run:
        print(f"ran the migrations newer than the dump over it: {', '.join(report.migrations_run)}")


def _name_and_statement(text: str) -> tuple[str, str]:
    name, equals, statement = text.partition("=")
    if not equals or not name.strip() or not statement.strip():
        raise ValidationFailed(f"invariant: {text!r} is not NAME=STATEMENT", field="invariant")
    return name.strip(), statement.strip()


def _json_object(text: str) -> dict[str, object]:
    import json

    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError('a JSON object, such as {"limit": 100}')
    return value


def _offline(args: argparse.Namespace, trail: Trail) -> int:
    """check, analyze, export and prune: networkx over a loaded graph, and retention."""
    import json
    from pathlib import Path

    from decisiontrail.checks.analytics import render_text
    from decisiontrail.checks.coverage import load_spec
    from decisiontrail.checks.export import ExportFormat
    from decisiontrail.domain.retention import RetentionPolicy
    from decisiontrail.services import analysis
    from decisiontrail.services.retention import prune

    progress = None if not args.quiet else False
    if args.command == "check":
        spec = load_spec(Path(args.coverage).read_text(encoding="utf-8")) if args.coverage else None
        scope, plan_id = _scope(args)
        if plan_id is None:  # --all: group by group, so the database need not fit in memory at once
            report = analysis.check_all(
                trail,
                spec=spec,
                jobs=args.jobs,
                credentials=_credentials(),
                progress=_groups_done("checked", progress is not False),
            )
        else:
            report = analysis.check(trail, scope, plan_id, spec=spec, progress=progress)
        print(json.dumps(report.as_json(), indent=2) if args.format == "json" else report.render())
        return 0 if report.ok else 1
    if args.command == "analyze":
        scope, plan_id = _scope(args)
        assert plan_id is not None
        result = analysis.analyze(trail, scope, plan_id, top=args.top, progress=progress)
        print(json.dumps(result.model_dump(mode="json"), indent=2) if args.format == "json" else render_text(result))
        return 0
    if args.command == "export":
        view, target = next((v, getattr(args, v.value)) for v in analysis.View if getattr(args, v.value))
        chunks = analysis.export(
            trail,
            view,
            None if view is analysis.View.ALL else target,
            ExportFormat(args.format),
            as_of=args.as_of,
            progress=_groups_done("written", progress is not False),
            jobs=args.jobs,
            credentials=_credentials(),
        )
        with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext(sys.stdout) as out:
            for chunk in chunks:
                out.write(chunk)
        if args.output:
            log.info("wrote %s", args.output)
        return 0
    policy = RetentionPolicy.parse(args.older_than)
    pruned = prune(trail, policy, dry_run=args.dry_run, progress=log.info)
    print(json.dumps(pruned.model_dump(mode="json"), indent=2) if args.format == "json" else pruned.render())
    return 0


def _credentials() -> tuple[str | None, str | None]:
    """The server's user and password for worker processes (none for the embedded server)."""
    settings = Neo4jSettings.from_env()
    return (settings.user, settings.password) if settings.uri is not None else (None, None)


def _groups_done(verb: str, show: bool) -> Callable[[int, int], None] | None:
    """Progress of a check or an export group by group, on stderr when it is a terminal (and not -q)."""
    if not show or not sys.stderr.isatty():
        return None

    def say(done: int, total: int) -> None:
        print(f"\r{verb} {done:,}/{total:,} groups of plans", end="\n" if done == total else "", file=sys.stderr, flush=True)

    return say


def _scope(args: argparse.Namespace) -> tuple[LoadScope, str | None]:
    from decisiontrail.domain.vocabulary import LoadScope

    if getattr(args, "all", False):
        return LoadScope.ALL, None
    if args.hierarchy:
        return LoadScope.HIERARCHY, args.hierarchy
    return LoadScope.PLAN, args.plan


def _choose_export(args: argparse.Namespace) -> None:
    """What `export` writes, a graph or a dataset of corrections, and in which format; refused before anything opens."""
    if args.subject == "corrections":
        if not (args.plan or args.hierarchy or args.project):
            raise ValidationFailed("export corrections: name --plan, --hierarchy or --project", field="subject")
        if args.format not in (None, "jsonl") or args.as_of is not None:
            raise ValidationFailed(
                "export corrections: writes jsonl, as things are now (no other --format, no --as-of)", field="format"
            )
        args.format = "jsonl"
        return
    if args.project is not None:
        raise ValidationFailed("--project: only `export corrections` exports a project's", field="project")
    if args.format == "jsonl":
        raise ValidationFailed("--format jsonl: only `export corrections` writes JSON Lines", field="format")
    if args.jobs != 1 and not args.all:
        raise ValidationFailed("--jobs: only an export of the whole database (--all) is made in worker processes", field="jobs")
    args.format = args.format or "graphml"


def _export_corrections(args: argparse.Namespace, trail: Trail) -> None:
    """`export corrections`: one evaluation example per correction, one JSON object a line."""
    import json

    from decisiontrail.services.dataset import correction_examples

    examples = correction_examples(
        trail, plan_id=args.plan or args.hierarchy, project=args.project, hierarchy=args.hierarchy is not None
    )
    with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext(sys.stdout) as out:
        for example in examples:
            out.write(json.dumps(example.record(), ensure_ascii=False) + "\n")
    if args.output:
        log.info("wrote %d example(s) to %s", len(examples), args.output)


def _describe_review(review: Review) -> str:
    proposal = review.proposal
    return (
        f"{review.review_id} {review.status.value} plan {review.plan_id}: "
        f"{proposal.decision_type.value}: {proposal.question} -> {proposal.chosen_option} ({review.reason}) "
        f"digest {review.digest}"
        + (f"; resolved by {review.resolved_by}, approved {review.approved_digest}" if review.approved_digest else "")
        + (f"; lapsed by correction {review.lapsed_by}" if review.lapsed_by else "")
        + (f"; asked again as review {review.reopened_by}" if review.reopened_by else "")
    )


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
        f"invalidated {len(result.invalidated)} decision(s): " + ", ".join(f"{n} {t}" for t, n in attempt.counts_by_type.items()),
        f"invalidated {len(result.invalidated_plans)} child plan(s)"
        + (": " + ", ".join(result.invalidated_plans) if result.invalidated_plans else ""),
    ]
    if result.lapsed_reviews:
        lines.append(f"approvals lapsed: {', '.join(result.lapsed_reviews)} (asked again when the plan reaches their questions)")
    for point in result.replay_frontier:
        where = f"checkpoint {point.checkpoint.checkpoint_id}" if point.checkpoint else "its latest state"
        lines.append(f"replay: thread {point.thread_id} in plan {point.plan_id} from {where}")
    return "\n".join(lines)


def _schema(args: argparse.Namespace) -> int:
    from decisiontrail.api import schema

    text = schema.as_str() + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        print(text, end="")
    return 0


def _decision_id(trail: Trail, reference: str) -> str:
    """A decision's ULID from a ULID or PLAN_ID#N (the plan's decision with sequence number N, as `tree` prints)."""
    plan_id, hash_sign, number = reference.partition("#")
    if not hash_sign:
        return reference
    if not number.isdigit():
        raise ValidationFailed(f"decision: {reference!r} is neither a ULID nor PLAN_ID#N", field="decision_id")
    from decisiontrail.services import reading

    for decision in reading.list_decisions(trail, plan_id):
        if decision.sequence_number == int(number):
            return decision.decision_id
    raise NotFound("decision", reference)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1, not {value}")
    return value


def _serve(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    import uvicorn

    from decisiontrail.access import TokenRegistry
    from decisiontrail.actors.demonstration import record_demonstration, render_demonstration
    from decisiontrail.app import MAX_IN_FLIGHT, create_app
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of

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

    from decisiontrail.services import open_trail, reading

    def load_demo(trail: Trail) -> None:
        if reading.count_plans(trail):
            return
        log.info("the database is empty: running the demonstration plan")
        demo = record_demonstration(trail, checkpointer_of(trail), log=log.info)
        print(render_demonstration(trail, demo), flush=True)

    with contextlib.ExitStack() as stack:
        graph = None
        if args.demo_if_empty:
            # Recorded before the app starts its runtime workers, on the connection the app then serves:
            # the demonstration's runtime, in this thread, is the only one of this process claiming its
            # runs, and they have settled before the app serves.
            opened = stack.enter_context(open_trail(settings, progress=log.info))
            load_demo(opened)
            graph = opened.graph
        log.info("serving GraphQL on http://%s:%d/graphql (GraphiQL in a browser)", args.host, args.port)
        log.info("exploring lineage on http://%s:%d/explore (the explorer page, in a browser)", args.host, args.port)
        log.info("taking OpenTelemetry traces on http://%s:%d/v1/traces (OTLP/HTTP, see docs/interop.md)", args.host, args.port)
        app = create_app(
            settings,
            graph=graph,
            tokens=tokens,
            max_in_flight=args.max_in_flight if args.max_in_flight is not None else MAX_IN_FLIGHT,
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
        )
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
