"""Looking after the store: `migrate`, `prune` (retention), and `dump` and `restore` (backup)."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from decisiontrail.cli.arguments import Commands

if TYPE_CHECKING:
    from decisiontrail.services import Trail

__all__ = ["BACKUP_CONTENTS", "COMMANDS", "add_dump", "add_migrate", "add_prune", "add_restore", "execute"]

log = logging.getLogger("decisiontrail")

COMMANDS = frozenset({"migrate", "prune", "dump", "restore"})

BACKUP_CONTENTS = (
    "A dump holds every node and relationship decisiontrail keeps: plans, decisions and all their edges, reviews, "
    "correction attempts, contexts, checkpoint groups, phase changes, invariant sets, plan locks, the event outbox, "
    "OTLP traces and the spans waiting for their root. Not in it: the schema migration ledger (the restoring database "
    "has its own) and API tokens (they live in the token file, not in Neo4j: copy that file yourself). The format is "
    "gzip-compressed JSON Lines, 'decisiontrail-dump' version 1 (docs/backup.md): a header, one line per node, one per "
    "relationship, and a trailer that counts them, so a file cut short is noticed."
)


def add_migrate(commands: Commands) -> None:
    commands.add_parser(
        "migrate", help="apply schema migrations (constraints, indexes) and exit", description="Apply migrations."
    )


def add_prune(commands: Commands) -> None:
    prune = commands.add_parser(
        "prune",
        help="delete superseded history older than a retention period (use --dry-run first)",
        description=(
            "Apply the retention policy: decisions superseded longer ago than --older-than in plans that reached "
            "Apply, and child plans invalidated that long ago under such plans, are deleted with the contexts, "
            "checkpoint groups, reviews and phase changes only they used. Whatever a kept record still refers to "
            "stays (a correction's original, say). Correction attempts are kept. The marker of an imported "
            "OTLP trace goes with the last of its plans. OTLP spans still waiting for their trace's root span "
            "expire with their trace once nothing of it was received for --spans-older-than. "
            "--dry-run lists what would go and deletes nothing."
        ),
    )
    prune.add_argument(
        "--older-than",
        required=True,
        metavar="AGE",
        help="retention period: 30d, 2w, 12h, 90m, or a number of days",
    )
    prune.add_argument(
        "--spans-older-than",
        metavar="AGE",
        help="how long spans wait for their trace's root span before they expire, an AGE as above "
        "(default: DECISIONTRAIL_TRACE_WAIT, else 7d)",
    )
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    prune.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")


def add_dump(commands: Commands) -> None:
    dump = commands.add_parser(
        "dump",
        help="write the whole store to a file (gzip JSON Lines) that `restore` reads back",
        description=BACKUP_CONTENTS
        + " The database is read as a stream, so memory does not grow with it; dump while nothing writes (stop the "
        "service), or a relationship written meanwhile may miss its node and the dump will not restore.",
    )
    dump.add_argument("file", metavar="FILE", help="where to write, e.g. trail.dump.gz (replaced only once complete)")


def add_restore(commands: Commands) -> None:
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


def execute(args: argparse.Namespace, trail: Trail) -> int:
    """One of ``COMMANDS``, over an open trail (whose opening applied the migrations)."""
    if args.command == "migrate":
        log.info("schema is up to date on %s", trail.graph.uri)
    elif args.command == "prune":
        _prune(args, trail)
    else:
        _backup(args, trail)
    return 0


def _prune(args: argparse.Namespace, trail: Trail) -> None:
    import json

    from decisiontrail.access import operator
    from decisiontrail.domain.retention import RetentionPolicy, parse_age
    from decisiontrail.services.retention import prune
    from decisiontrail.settings import RetentionSettings

    if args.spans_older_than is None:
        trace_wait = RetentionSettings.from_env().trace_wait
    else:
        trace_wait = parse_age(args.spans_older_than, name="--spans-older-than")
    policy = RetentionPolicy.parse(args.older_than, trace_wait=trace_wait)
    pruned = prune(trail, policy, principal=operator(), dry_run=args.dry_run, progress=log.info)
    print(json.dumps(pruned.model_dump(mode="json"), indent=2) if args.format == "json" else pruned.render())


def _backup(args: argparse.Namespace, trail: Trail) -> None:
    from pathlib import Path

    from decisiontrail.access import operator
    from decisiontrail.services import backup

    progress = False if args.quiet else None
    if args.command == "dump":
        report = backup.dump(trail, Path(args.file), principal=operator(), progress=progress)
        print(f"dumped {report.nodes:,} node(s) and {report.relationships:,} relationship(s) to {args.file}")
        return
    report = backup.restore(trail, Path(args.file), principal=operator(), progress=progress)
    print(f"restored {report.nodes:,} node(s) and {report.relationships:,} relationship(s) from {args.file}")
    if report.migrations_run:
        print(f"ran the migrations newer than the dump over it: {', '.join(report.migrations_run)}")
