"""The ``decisiontrail`` command line, one module per group of commands.

``serving`` (serve, schema, token, neo4j), ``recording`` (demo, tree, guide, reviews, resolve,
phase, invariants), ``correction`` (impact, correct, history, replay), ``runtime`` (run, plans),
``analysis`` (check, analyze, export), ``importing`` (import) and ``admin`` (migrate, prune,
dump, restore); ``arguments`` holds what they read alike (a decision as a ULID or PLAN_ID#N), and
``progress`` what the long ones show on stderr meanwhile. Each group adds its commands' parsers
(``add_<command>``) and carries them out (``execute``) through the services, as the API does.
"""

from __future__ import annotations

import argparse
import logging
import os
import select
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace

from decisiontrail import __version__
from decisiontrail.cli import admin, analysis, correction, importing, recording, runtime, serving
from decisiontrail.cli.correction import describe_correction, describe_impact
from decisiontrail.exceptions import DecisionTrailError
from decisiontrail.settings import Neo4jSettings

__all__ = ["ENVIRONMENT_HELP", "build_parser", "describe_correction", "describe_impact", "main"]

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

    # In the order `decisiontrail --help` lists them.
    for add in (
        recording.add_demo,
        runtime.add_plans,  # where a plan's id is found, before the commands that take one
        recording.add_tree,
        admin.add_migrate,
        serving.add_schema,
        serving.add_serve,
        serving.add_token,
        correction.add_impact,
        correction.add_correct,
        correction.add_history,
        recording.add_guide,
        recording.add_reviews,
        recording.add_resolve,
        recording.add_phase,
        correction.add_replay,
        recording.add_invariants,
        runtime.add_run,
        analysis.add_check,
        analysis.add_analyze,
        analysis.add_export,
        importing.add_import,
        admin.add_prune,
        admin.add_dump,
        admin.add_restore,
        serving.add_neo4j,
    ):
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="decisiontrail: %(message)s",
        stream=sys.stderr,
    )
    try:
        code = _execute(args)
        sys.stdout.flush()  # here, where a reader gone is answered, not at the interpreter's exit
        return code
    except DecisionTrailError as e:
        print(f"decisiontrail: error: {e.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        if not _stdout_gone():
            raise
        return 128 + signal.SIGPIPE  # as a command stopped by SIGPIPE ends, without a traceback


def _execute(args: argparse.Namespace) -> int:
    settings = Neo4jSettings.from_env()
    if args.command in serving.COMMANDS:
        return serving.execute(args, settings)
    if args.command == "export":
        analysis.choose_export(args)
    if args.command in runtime.COMMANDS:
        return runtime.execute(args, settings)
    return _with_trail(args, settings)


def _stdout_gone() -> bool:
    """Whether standard output's reader has gone (``decisiontrail run ... | head -1`` once ``head``
    has its line: the pipe's write end polls as an error). If so, it is pointed at /dev/null, so
    that what is left to write at the exit goes nowhere instead of failing again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False  # not a file (captured): not this
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    if not any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
        return False
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return True


def _with_trail(args: argparse.Namespace, settings: Neo4jSettings) -> int:
    """A command of the groups that work over an open trail, whose actors keep their checkpoints in the same Neo4j."""
    from decisiontrail.actors.reconciliation import Reconciler
    from decisiontrail.services import open_trail
    from decisiontrail.services.checkpoints import checkpointer as checkpointer_of

    with open_trail(settings, progress=log.info) as opened:
        checkpointer = checkpointer_of(opened)  # the actors' checkpoints, in the same Neo4j
        trail = replace(opened, reconciler=Reconciler(checkpointer))
        if args.command in recording.COMMANDS:
            return recording.execute(args, trail, checkpointer)
        if args.command in correction.COMMANDS:
            return correction.execute(args, trail)
        if args.command in analysis.COMMANDS:
            return analysis.execute(args, trail)
        if args.command in importing.COMMANDS:
            return importing.execute(args, trail)
        return admin.execute(args, trail)
