"""Storage for backups: the store streamed out as JSON-ready rows, and a dump's rows written back in batches.

Property values leave as JSON values; what JSON cannot hold (temporal values, durations, points,
bytes, non-finite floats) leaves as a tagged object (``{"$": "datetime", "value": ...}``), which
``decode_properties`` turns back into exactly the Neo4j value it was (a property is never a map,
so a JSON object in a dump is always a tagged value). While a restore runs, the nodes it writes
carry their id in the dump and the ``:Restoring`` label, so relationships find their ends through
one constraint's index and a failed restore deletes exactly what it wrote. This module judges
nothing: which labels and types may be written, and the dump file's format, are ``services.backup``'s.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta, timezone, tzinfo
from typing import Any

import neo4j
from neo4j.spatial import CartesianPoint, Point, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from decisiontrail.cypher import query
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.database import Rows, Transaction, translated_errors

FETCH_SIZE = 10_000
"""Rows the driver fetches at a time while a dump streams: what memory holds, whatever the database's size."""

POINT_TYPES: dict[int, type[Point]] = {7203: CartesianPoint, 9157: CartesianPoint, 4326: WGS84Point, 4979: WGS84Point}
"""Neo4j's coordinate reference systems by SRID: 2D and 3D cartesian, 2D and 3D WGS-84."""


@dataclass(frozen=True)
class Contents:
    """How many data nodes carry each label, and how many relationships of each type there are."""

    labels: dict[str, int]
    types: dict[str, int]


@dataclass(frozen=True)
class DataCount:
    nodes: int
    """Data nodes (the migration ledger excluded)."""
    restoring: int
    """Of them, those an unfinished restore wrote."""


def count_contents(graph: Graph) -> Contents:
    """What a dump of the database now would hold."""
    with translated_errors():
        records, _, _ = graph.driver.execute_query(query("backup/count_contents"), database_=graph.database, routing_="r")
    row = records[0]
    return Contents(labels=dict(row["labels"]), types=dict(row["types"]))


def count_data(graph: Graph) -> DataCount:
    with translated_errors():
        records, _, _ = graph.driver.execute_query(query("backup/count_data"), database_=graph.database, routing_="r")
    return DataCount(nodes=records[0]["nodes"], restoring=records[0]["restoring"])


def stream_nodes(graph: Graph) -> Iterator[dict[str, Any]]:
    """Every data node as ``{"id", "labels", "properties"}``, fetched ``FETCH_SIZE`` at a time."""
    with _reading(graph) as session:
        for record in session.run(query("backup/read_nodes")):
            yield {"id": record["id"], "labels": record["labels"], "properties": _encoded(record["properties"])}


def stream_relationships(graph: Graph) -> Iterator[dict[str, Any]]:
    """Every relationship between data nodes as ``{"type", "from", "to", "properties"}``, fetched ``FETCH_SIZE`` at a time."""
    with _reading(graph) as session:
        for record in session.run(query("backup/read_relationships")):
            yield {
                "type": record["type"],
                "from": record["from"],
                "to": record["to"],
                "properties": _encoded(record["properties"]),
            }


def applied_migrations(graph: Graph) -> list[str]:
    """The names in the database's migration ledger, in order."""
    with translated_errors():
        records, _, _ = graph.driver.execute_query(query("migration/list_applied"), database_=graph.database, routing_="r")
    return [record["name"] for record in records]


def begin_restore(graph: Graph) -> None:
    """Create the constraint a restore finds its nodes by (and that refuses a node id given twice)."""
    _auto_commit(graph, "backup/begin_restore")


def create_nodes(tx: Transaction, rows: Sequence[Mapping[str, Any]]) -> int:
    """Write a batch of ``{"id", "labels", "properties"}`` (properties decoded), marked as being restored; how many were written."""
    return int(tx.run(query("backup/create_nodes"), rows=Rows(rows)).single(strict=True)["written"])


def create_relationships(tx: Transaction, rows: Sequence[Mapping[str, Any]]) -> int:
    """Write a batch of ``{"type", "from", "to", "properties"}`` between restored nodes; how many found both ends."""
    return int(tx.run(query("backup/create_relationships"), rows=Rows(rows)).single(strict=True)["written"])


def finish_restore(graph: Graph) -> None:
    """Take the restore's marks off its nodes and drop its constraint; the outbox's counter brought
    up to its last numbered event."""
    _auto_commit(graph, "backup/finish_restore")
    _auto_commit(graph, "backup/end_restore")
    _auto_commit(graph, "backup/settle_outbox")


def undo_restore(graph: Graph) -> None:
    """Delete every node a restore wrote (with its relationships) and drop its constraint."""
    _auto_commit(graph, "backup/undo_restore")
    _auto_commit(graph, "backup/end_restore")


def run_migrations(graph: Graph, names: Sequence[str]) -> None:
    """Run these migrations' statements again, each in its own transaction, without touching the ledger.

    Every migration is written to be harmless when run twice, so data restored from a dump made
    before a migration existed is brought to today's shape by running it again.
    """
    for name in names:
        _auto_commit(graph, f"migrations/{name}")  # as at start-up: a data fix may commit in batches


def decode_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A dump's properties as the Neo4j values they were; a tagged value this module cannot read is refused."""
    return {key: _decode(value) for key, value in properties.items()}


def _encoded(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _encode(value) for key, value in properties.items()}


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$": "float", "value": repr(value)}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, DateTime):
        if value.tzinfo is None:
            return {"$": "localdatetime", "value": value.iso_format()}
        zone = _zone_name(value.tzinfo)
        return {"$": "datetime", "value": value.iso_format(), **({"zone": zone} if zone else {})}
    if isinstance(value, Date):
        return {"$": "date", "value": value.iso_format()}
    if isinstance(value, Time):
        return {"$": "time" if value.tzinfo is not None else "localtime", "value": value.iso_format()}
    if isinstance(value, Duration):
        return {
            "$": "duration",
            "months": value.months,
            "days": value.days,
            "seconds": value.seconds,
            "nanoseconds": value.nanoseconds,
        }
    if isinstance(value, Point):
        return {"$": "point", "srid": value.srid, "coordinates": list(value)}
    if isinstance(value, bytes | bytearray):
        return {"$": "bytes", "value": base64.b64encode(value).decode("ascii")}
    raise ValidationFailed(f"a property of type {type(value).__name__} cannot be written to a dump", field="property")


def _decode(value: Any, *, in_list: bool = False) -> Any:
    if isinstance(value, list) and not in_list:
        return [_decode(item, in_list=True) for item in value]
    try:
        if isinstance(value, dict):
            return _decode_tagged(value)
        if isinstance(value, list):
            raise ValueError("a list in a list")
    except (KeyError, TypeError, ValueError, OverflowError):
        raise ValidationFailed(f"a property value cannot be read: {value!r}", field="property") from None
    return value


def _decode_tagged(tagged: dict[str, Any]) -> Any:
    kind = tagged["$"]
    if kind == "datetime":
        moment = DateTime.from_iso_format(tagged["value"])
        offset = moment.utcoffset()
        assert offset is not None, "a datetime with a zone has an offset"
        zone = tagged.get("zone")
        return moment.replace(tzinfo=_Zone(offset, zone) if zone else timezone(offset))
    if kind == "localdatetime":
        return DateTime.from_iso_format(tagged["value"])
    if kind == "date":
        return Date.from_iso_format(tagged["value"])
    if kind in ("time", "localtime"):
        clock = Time.from_iso_format(tagged["value"])
        offset = clock.utcoffset()
        return clock.replace(tzinfo=_Zone(offset)) if kind == "time" and offset is not None else clock
    if kind == "duration":
        return Duration(
            months=tagged["months"], days=tagged["days"], seconds=tagged["seconds"], nanoseconds=tagged["nanoseconds"]
        )
    if kind == "point":
        return POINT_TYPES[tagged["srid"]](tagged["coordinates"])
    if kind == "bytes":
        return base64.b64decode(tagged["value"], validate=True)
    if kind == "float" and tagged["value"] in ("nan", "inf", "-inf"):
        return float(tagged["value"])
    raise ValueError(kind)


def _zone_name(zone: tzinfo) -> str | None:
    """A datetime's named zone (Europe/Paris), or None for a fixed offset.

    The driver reads an offset of zero and the zone named UTC back alike (pytz's UTC); the service
    writes offsets, so that one is taken for the offset ``Z``.
    """
    name = getattr(zone, "zone", None) or getattr(zone, "key", None)
    return name if isinstance(name, str) and name != "UTC" else None


class _Zone(tzinfo):
    """A fixed offset, or a named zone at one moment: the driver sends the name (it reads ``zone``)
    with the offset the zone had then, so a wall time that a clock change repeats keeps the instant
    it was. (``datetime.timezone`` will not do for a time of day: it takes only datetimes.)"""

    def __init__(self, offset: timedelta, zone: str | None = None) -> None:
        self.zone = zone
        self._offset = offset

    def utcoffset(self, moment: Any) -> timedelta:
        return self._offset

    def dst(self, moment: Any) -> timedelta | None:
        return None

    def tzname(self, moment: Any) -> str | None:
        return self.zone


@contextmanager
def _reading(graph: Graph) -> Iterator[neo4j.Session]:
    """A read session that streams: the driver holds ``FETCH_SIZE`` rows at a time."""
    with (
        translated_errors(),
        graph.driver.session(database=graph.database, default_access_mode=neo4j.READ_ACCESS, fetch_size=FETCH_SIZE) as session,
    ):
        yield session


def _auto_commit(graph: Graph, name: str) -> None:
    # Schema statements and CALL {...} IN TRANSACTIONS must run outside a transaction function.
    with translated_errors(), graph.driver.session(database=graph.database) as session:
        session.run(query(name)).consume()
