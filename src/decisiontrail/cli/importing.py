"""Importing agent traces recorded elsewhere: `import otlp`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from decisiontrail.cli.arguments import Commands
from decisiontrail.exceptions import ValidationFailed

if TYPE_CHECKING:
    from decisiontrail.services import Trail

__all__ = ["COMMANDS", "add_import", "execute"]

COMMANDS = frozenset({"import"})


def add_import(commands: Commands) -> None:
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
            "out. The file is one transaction: all of it is imported, or nothing. Importing it again records nothing twice. "
            "While it runs, stderr shows how many spans are being imported and for how long, when it is a terminal "
            "(-q: not at all); stdout has only the report."
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


def execute(args: argparse.Namespace, trail: Trail) -> int:
    """`import otlp`, over an open trail."""
    _import_otlp(args, trail)
    return 0


def _import_otlp(args: argparse.Namespace, trail: Trail) -> None:
    from pathlib import Path

    from decisiontrail import otlp
    from decisiontrail.access import operator
    from decisiontrail.cli import progress
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
    # One transaction, which tells nothing until it commits: what it is doing, and for how long.
    with progress.working(
        f"importing {len(spans):,} spans of {Path(args.file).name} in one transaction", progress.wanted(args.quiet)
    ):
        report = import_spans(trail, spans, principal=operator())
    print(
        f"{report.spans} spans: imported {len(report.traces)} trace(s) into {len(report.plan_ids)} plan(s) "
        f"and {len(report.decision_ids)} decision(s)"
    )
    for plan_id in report.plan_ids:
        print(f"  plan {plan_id}")
    if report.message():
        print(report.message())
