"""Offline commands over a loaded graph: `check` (the rules), `analyze` (analytics) and `export` (graphs, and corrections as a dataset)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import TYPE_CHECKING

from decisiontrail.cli.arguments import (
    DECISION_REFERENCE,
    PLAN_REFERENCE,
    Commands,
    at_least_one,
    moment,
    plan_reference,
    resolve_decision,
)
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.settings import Neo4jSettings

if TYPE_CHECKING:
    from decisiontrail.domain.vocabulary import LoadScope
    from decisiontrail.services import Trail

__all__ = ["COMMANDS", "add_analyze", "add_check", "add_export", "choose_export", "execute"]

log = logging.getLogger("decisiontrail")

COMMANDS = frozenset({"check", "analyze", "export"})


def add_check(commands: Commands) -> None:
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


def add_analyze(commands: Commands) -> None:
    analyze = commands.add_parser(
        "analyze",
        help="lineage analytics of a plan or hierarchy",
        description=(
            "Counts by type and phase, confidence distribution, correction rate and the decisions corrected most, "
            "depth and fan-out, blast radius (how many decisions correcting each one would invalidate) and the "
            "most critical decisions by it, review rate and how reviews were resolved. --plan and --hierarchy "
            "take a plan's id, or PLAN_ID#N as `tree` prints a decision: the plan it lies in."
        ),
    )
    _scope_arguments(analyze, everything=False)
    analyze.add_argument(
        "--top", type=int, default=10, help="how many decisions to list as most corrected and most critical (default: 10)"
    )
    analyze.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")


def add_export(commands: Commands) -> None:
    export = commands.add_parser(
        "export",
        help="export a graph for Gephi, yEd, Graphviz, Cytoscape.js or W3C PROV tools",
        description=(
            "Write a plan, a hierarchy, the whole database, or a decision's lineage or impact as GraphML (Gephi, yEd), "
            "DOT (Graphviz), Cytoscape.js JSON, node-link JSON, GEXF (Gephi) or W3C PROV-JSON. Nodes carry label (the caption), "
            "kind, decision_status and superseded (plans: plan_status and invalidated), plan_id and decision_type to "
            "style by; Cytoscape.js JSON has the explorer's positions, classes and plan compounds, DOT colours by type. The document is streamed to the output as it is written; with --all, "
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
    what.add_argument("--plan", type=plan_reference, metavar="PLAN", help="one plan; the plan: " + PLAN_REFERENCE)
    what.add_argument(
        "--hierarchy", type=plan_reference, metavar="PLAN", help="a plan and every plan below it; the plan: " + PLAN_REFERENCE
    )
    what.add_argument(
        "--all",
        action="store_true",
        help="the whole database, written a group of plans at a time (a hierarchy and any it shares an edge with), so "
        "memory holds the largest group, not the database",
    )
    what.add_argument("--lineage", metavar="DECISION", help="a decision and where it comes from; " + DECISION_REFERENCE)
    what.add_argument(
        "--impact", metavar="DECISION", help="a decision and what correcting it would invalidate; " + DECISION_REFERENCE
    )
    what.add_argument("--project", metavar="NAME", help="corrections only: every plan of a project")
    export.add_argument(
        "--format",
        choices=["graphml", "dot", "cyjs", "json", "gexf", "prov.json", "jsonl"],
        default="graphml",
        help="graphml (Gephi, yEd), dot (Graphviz), cyjs (Cytoscape.js), json (networkx node-link), gexf (Gephi, drawn: "
        "coloured by decision type, sized by blast radius, laid out in layers), prov.json (W3C PROV-JSON); default graphml",
    )
    export.add_argument(
        "--as-of", type=moment, metavar="TIME", help="the graph as it stood at this ISO 8601 time (UTC if no offset)"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    export.add_argument(
        "--decisions-only",
        action="store_true",
        help="the decisions alone, with the edges between them (PARENT, DEPENDS_ON, CORRECTS, SUPERSEDED_BY): no plans, "
        "reviews or correction attempts",
    )
    export.add_argument(
        "--jobs",
        type=at_least_one,
        default=1,
        metavar="N",
        help="with --all: load the groups of plans and make their parts of the document in N worker processes, a few "
        "groups ahead of the one being written, for a database of 20,000 decisions or more (a smaller one is written "
        "sooner than workers start); the document is the same (default: 1, one group at a time, here)",
    )
    export.set_defaults(format=None)  # graphml for a graph, jsonl for corrections: choose_export decides


def _scope_arguments(parser: argparse.ArgumentParser, *, everything: bool = True) -> None:
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--plan", type=plan_reference, metavar="PLAN", help="one plan's decisions; the plan: " + PLAN_REFERENCE)
    scope.add_argument(
        "--hierarchy", type=plan_reference, metavar="PLAN", help="a plan and every plan below it; the plan: " + PLAN_REFERENCE
    )
    if everything:
        scope.add_argument("--all", action="store_true", help="the whole database")


def execute(args: argparse.Namespace, trail: Trail) -> int:
    """One of ``COMMANDS``, over an open trail: networkx over a loaded graph, or `export corrections`."""
    import json
    from pathlib import Path

    from decisiontrail.access import operator
    from decisiontrail.cli import progress
    from decisiontrail.services import analysis

    caller = operator()
    if args.command == "export" and args.subject == "corrections":
        _export_corrections(args, trail)
        return 0
    shown = progress.wanted(args.quiet)
    if args.command == "check":
        spec = analysis.load_spec(Path(args.coverage).read_text(encoding="utf-8")) if args.coverage else None
        scope, plan_id = _scope(args)
        if plan_id is None:  # --all: group by group, so the database need not fit in memory at once
            with progress.groups_of_plans("checking groups of plans", shown) as heard:
                report = analysis.check_all(
                    trail, principal=caller, spec=spec, jobs=args.jobs, credentials=_credentials(), progress=heard
                )
        else:
            report = analysis.check(trail, scope, plan_id, principal=caller, spec=spec, progress=shown)
        print(json.dumps(report.as_json(), indent=2) if args.format == "json" else report.render())
        return 0 if report.ok else 1
    if args.command == "analyze":
        scope, plan_id = _scope(args)
        assert plan_id is not None
        result = analysis.analyze(trail, scope, plan_id, top=args.top, principal=caller, progress=shown)
        print(json.dumps(result.model_dump(mode="json"), indent=2) if args.format == "json" else analysis.render_text(result))
        return 0
    _export_graph(args, trail, shown)
    return 0


def _export_graph(args: argparse.Namespace, trail: Trail, shown: bool) -> None:
    """`export` of a graph, streamed to the output; its progress on stderr, unless the document is
    itself being written to the terminal."""
    from decisiontrail.access import operator
    from decisiontrail.cli import progress
    from decisiontrail.services import analysis

    caller = operator()
    view, target = next((v, getattr(args, v.value)) for v in analysis.View if getattr(args, v.value))
    if view in (analysis.View.LINEAGE, analysis.View.IMPACT):
        target = resolve_decision(trail, target, caller)
    shown = shown and (args.output is not None or not sys.stdout.isatty())
    everything = view is analysis.View.ALL
    with (
        progress.groups_of_plans("writing groups of plans", shown and everything) as heard,
        progress.written("exporting", shown and not everything) as count,
    ):
        chunks = analysis.export(  # refused here, before the output is opened
            trail,
            view,
            None if everything else target,
            analysis.ExportFormat(args.format),
            principal=caller,
            as_of=args.as_of,
            progress=heard,
            jobs=args.jobs,
            credentials=_credentials(),
            decisions_only=args.decisions_only,
        )
        with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext(sys.stdout) as out:
            for chunk in chunks:
                out.write(chunk)
                count(chunk)
    if args.output:
        log.info("wrote %s", args.output)


def _credentials() -> tuple[str | None, str | None]:
    """The server's user and password for worker processes (none for the embedded server)."""
    settings = Neo4jSettings.from_env()
    return (settings.user, settings.password) if settings.uri is not None else (None, None)


def _scope(args: argparse.Namespace) -> tuple[LoadScope, str | None]:
    from decisiontrail.domain.vocabulary import LoadScope

    if getattr(args, "all", False):
        return LoadScope.ALL, None
    if args.hierarchy:
        return LoadScope.HIERARCHY, args.hierarchy
    return LoadScope.PLAN, args.plan


def choose_export(args: argparse.Namespace) -> None:
    """What `export` writes, a graph or a dataset of corrections, and in which format; refused before anything opens."""
    if args.subject == "corrections":
        if not (args.plan or args.hierarchy or args.project):
            raise ValidationFailed("export corrections: name --plan, --hierarchy or --project", field="subject")
        if args.decisions_only:
            raise ValidationFailed("export corrections: --decisions-only draws a graph, not a dataset", field="decisions_only")
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

    from decisiontrail.access import operator
    from decisiontrail.services.dataset import correction_examples

    examples = correction_examples(
        trail,
        plan_id=args.plan or args.hierarchy,
        project=args.project,
        hierarchy=args.hierarchy is not None,
        principal=operator(),
    )
    with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext(sys.stdout) as out:
        for example in examples:
            out.write(json.dumps(example.record(), ensure_ascii=False) + "\n")
    if args.output:
        log.info("wrote %d example(s) to %s", len(examples), args.output)
