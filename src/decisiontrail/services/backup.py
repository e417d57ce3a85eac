"""Backups: the whole store dumped to a portable, versioned file, and a dump restored into an empty database.

A dump is gzip-compressed JSON Lines (docs/backup.md)::

    {"format": "decisiontrail-dump", "version": 1, "created_at": ..., "migrations": [...], "counts": {...}}
    {"node": "<id>", "labels": ["Decision"], "properties": {...}}        every data node, then
    {"rel": "PARENT", "from": "<id>", "to": "<id>", "properties": {...}}  every relationship, then
    {"end": {"nodes": N, "relationships": M}}                            the trailer: without it the file was cut short

Every node and relationship the service keeps is in it, except the migration ledger (the restoring
database has its own) and, since they live in a file and not in Neo4j, API tokens. Node ids are the
dumping database's element ids and mean nothing outside the file.

Restoring writes the records as they are: it bypasses every rule the other use-cases apply
(placement, phases, visibility, the outbox) because it reproduces a store those rules already
made. What it does check is that the file is a whole dump of a format and schema this code
knows, with only the labels and types of ``domain.vocabulary``; and it writes only into an empty
database, deleting what it wrote when it fails.
"""

from __future__ import annotations

import gzip
import json
import logging
import sys
import zlib
from collections.abc import Generator, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from decisiontrail.access import Action, Principal
from decisiontrail.cypher import migration_names
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.vocabulary import Label, Rel
from decisiontrail.exceptions import Conflict, ValidationFailed
from decisiontrail.graphdb import backup
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_whole_store

log = logging.getLogger(__name__)

FORMAT = "decisiontrail-dump"
VERSION = 1
"""The dump format this code writes; it restores this version and none newer."""
BATCH_SIZE = 10_000
"""Records a restore writes per transaction, at most."""
BATCH_BYTES = 8 << 20
"""Bytes of dump a restore writes per transaction, at most: large contexts make small batches, so one
transaction stays well inside Neo4j's memory limit for a transaction."""

LABELS = frozenset(label.value for label in Label) - {Label.SCHEMA_MIGRATION.value, Label.RESTORING.value}
"""The labels a dump may hold: the vocabulary's, less the migration ledger and the restore's own mark."""
TYPES = frozenset(rel.value for rel in Rel)
RESERVED = "_dump_id"
"""The property a restore keeps a node's dump id in while it runs."""


@dataclass(frozen=True)
class BackupReport:
    nodes: int
    relationships: int
    migrations_run: tuple[str, ...] = ()
    """Restore only: migrations the dump predates, run again over its data."""


def dump(trail: Trail, path: Path, *, principal: Principal, progress: bool | None = None) -> BackupReport:
    """Write every node and relationship of the store to ``path``, streamed.

    The file appears only when complete (it is written beside it first). Nodes and relationships
    are read in two streams: a dump of a database being written may catch a relationship whose
    node it missed, which its restore then refuses; dump a quiet database. Only for a ``principal``
    that may configure and sees every plan (the command line, a backup job).
    """
    require_whole_store(principal, Action.CONFIGURE)
    graph = trail.graph
    contents = backup.count_contents(graph)
    for problem in [_label_problem([label]) for label in contents.labels] + [_type_problem(t) for t in contents.types]:
        _refuse_dump(problem)
    header = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": utc_now().isoformat(),
        "migrations": backup.applied_migrations(graph),
        "counts": {"nodes": contents.labels, "relationships": contents.types},
    }
    total = sum(contents.labels.values()) + sum(contents.types.values())
    partial = path.with_name(path.name + ".partial")
    nodes = relationships = 0
    try:
        with gzip.open(partial, "wt", encoding="utf-8") as out, _bar(total, "dumping", progress) as bar:
            out.write(_line(header))
            for node in backup.stream_nodes(graph):
                _refuse_dump(_label_problem(node["labels"]))
                out.write(_line({"node": node["id"], "labels": node["labels"], "properties": node["properties"]}))
                nodes += 1
                bar.update()
            for rel in backup.stream_relationships(graph):
                _refuse_dump(_type_problem(rel["type"]))
                out.write(_line({"rel": rel["type"], "from": rel["from"], "to": rel["to"], "properties": rel["properties"]}))
                relationships += 1
                bar.update()
            out.write(_line({"end": {"nodes": nodes, "relationships": relationships}}))
        partial.replace(path)
    except OSError as e:
        raise ValidationFailed(f"file: cannot write {path}: {e.strerror or e}", field="file") from None
    finally:
        partial.unlink(missing_ok=True)
    return BackupReport(nodes=nodes, relationships=relationships)


def restore(trail: Trail, path: Path, *, principal: Principal, progress: bool | None = None) -> BackupReport:
    """Write the dump at ``path`` into the database, which must hold no data: all of it, or nothing.

    Refused before anything is written: a file that is not a dump, a format version newer than
    ``VERSION``, a dump made with migrations this code does not know, a database with data in it
    (nodes an interrupted restore left are deleted first, since they were never a whole store).
    Refused while writing, and then everything written so far is deleted: a label or type outside
    the vocabulary, an unreadable value, a relationship whose node is not in the dump, a file cut
    short (no trailer, or one that counts otherwise). Migrations the dump predates are run again
    over the restored data, as they ran over the database they were written for. Only for a
    ``principal`` that may configure and sees every plan.
    """
    require_whole_store(principal, Action.CONFIGURE)
    with closing(_lines(path)) as lines:
        return _restore(trail, lines, progress)


def _restore(trail: Trail, lines: Generator[str], progress: bool | None) -> BackupReport:
    graph = trail.graph
    header = _header(next(lines, None))
    run_again = _migrations_to_run(header["migrations"])
    present = backup.count_data(graph)
    if present.nodes > present.restoring:
        raise Conflict(
            f"the database is not empty: it holds {present.nodes:,} node(s); restore writes only into an empty "
            "database (restore into a new one, or delete this one's data first); nothing was written"
        )
    if present.restoring:
        log.info("deleting %d node(s) an interrupted restore left", present.restoring)
        backup.undo_restore(graph)
    counts = header["counts"] if isinstance(header.get("counts"), dict) else {}
    total = sum(_counted(counts.get("nodes"))) + sum(_counted(counts.get("relationships")))
    backup.begin_restore(graph)
    try:
        with _bar(total, "restoring", progress) as bar:
            nodes, relationships = _write(trail, lines, bar)
    except BaseException:
        log.info("the restore failed: deleting what it wrote")
        backup.undo_restore(graph)
        raise
    backup.finish_restore(graph)
    backup.run_migrations(graph, run_again)
    return BackupReport(nodes=nodes, relationships=relationships, migrations_run=tuple(run_again))


def _write(trail: Trail, lines: Iterator[str], bar: tqdm[Any]) -> tuple[int, int]:
    """Write the dump's records in batches; the numbers of nodes and relationships written."""
    batches = _Batches(trail, bar)
    number = 1
    for number, text in enumerate(lines, start=2):
        record = _record(text, number)
        if "node" in record:
            if batches.relationships or batches.written_relationships:
                raise _refused(f"line {number}: a node after the relationships")
            batches.add(batches.nodes, _node(record, number), text, number)
        elif "rel" in record:
            if batches.nodes:
                batches.flush(number)
            batches.add(batches.relationships, _relationship(record, number), text, number)
        elif "end" in record:
            batches.flush(number)
            _check_trailer(record["end"], [batches.written_nodes, batches.written_relationships], number)
            if next(lines, None) is not None:
                raise _refused(f"line {number + 1}: records after the trailer")
            return batches.written_nodes, batches.written_relationships
        else:
            raise _refused(f"line {number}: neither a node, a relationship nor the trailer")
    raise _refused(
        f"the file ends at line {number} without its trailer: it was cut short (after "
        f"{batches.written_nodes + len(batches.nodes):,} node(s) and "
        f"{batches.written_relationships + len(batches.relationships):,} relationship(s))"
    )


@dataclass
class _Batches:
    """The records read and not yet written, each batch written in one transaction when full."""

    trail: Trail
    bar: tqdm[Any]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    relationships: list[dict[str, Any]] = field(default_factory=list)
    written_nodes: int = 0
    written_relationships: int = 0
    size: int = 0

    def add(self, batch: list[dict[str, Any]], row: dict[str, Any], text: str, number: int) -> None:
        batch.append(row)
        self.size += len(text)
        if len(batch) >= BATCH_SIZE or self.size >= BATCH_BYTES:
            self.flush(number + 1)

    def flush(self, number: int) -> None:
        """Write what is pending; ``number`` is the line after the last one read."""
        database = self.trail.database
        if self.nodes:
            conflict = "file: the dump holds a node, or a key that must be unique, twice"
            database.write_or(conflict, backup.create_nodes, self.nodes)
            self.written_nodes += len(self.nodes)
            self.bar.update(len(self.nodes))
            self.nodes.clear()
        if self.relationships:
            found = database.write(backup.create_relationships, self.relationships)
            if found != len(self.relationships):
                raise _refused(
                    f"{len(self.relationships) - found} relationship(s) before line {number} join nodes that are not "
                    "in the dump (was it made while the service was writing?)"
                )
            self.written_relationships += len(self.relationships)
            self.bar.update(len(self.relationships))
            self.relationships.clear()
        self.size = 0


def _lines(path: Path) -> Generator[str]:
    """The dump's lines, decompressed as they are read; a file that cannot be read whole is refused."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as text:
            yield from text
    except gzip.BadGzipFile:
        raise _refused(f"{path} is not a gzip-compressed dump") from None
    except EOFError:
        raise _refused("the file was cut short: its compressed stream ends early") from None
    except (zlib.error, UnicodeDecodeError) as e:
        raise _refused(f"the file is damaged ({e})") from None
    except OSError as e:
        raise ValidationFailed(f"file: cannot read {path}: {e.strerror or e}", field="file") from None


def _header(text: str | None) -> dict[str, Any]:
    if text is None:
        raise _refused("the file is empty")
    header = _record(text, 1)
    if header.get("format") != FORMAT:
        raise _refused(f"not a decisiontrail dump (its first line names no format {FORMAT!r})")
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _refused(f"the dump's format version {version!r} is not a version")
    if version > VERSION:
        raise _refused(
            f"the dump is of format version {version}, newer than this decisiontrail reads ({VERSION}); "
            "restore it with the decisiontrail that made it, or a newer one"
        )
    migrations = header.get("migrations")
    if not isinstance(migrations, list) or not all(isinstance(m, str) for m in migrations):
        raise _refused("the dump's header lists no migrations")
    return header


def _migrations_to_run(dumped: list[str]) -> list[str]:
    """The migrations this code has and the dump's database had not; refused if the dump's database had others."""
    known = [name.removeprefix("migrations/") for name in migration_names()]
    unknown = sorted(set(dumped) - set(known))
    if unknown:
        raise _refused(
            f"the dump was made with migrations this decisiontrail does not know ({', '.join(unknown)}): "
            "restore it with the decisiontrail that made it, or a newer one"
        )
    return [name for name in known if name not in set(dumped)]


def _record(text: str, number: int) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except ValueError:
        raise _refused(f"line {number} is not JSON (a damaged or cut-short file)") from None
    if not isinstance(record, dict):
        raise _refused(f"line {number} is not a JSON object")
    return record


def _node(record: Mapping[str, Any], number: int) -> dict[str, Any]:
    labels, properties = record.get("labels"), record.get("properties")
    if not isinstance(record["node"], str) or not isinstance(labels, list) or not isinstance(properties, dict):
        raise _refused(f"line {number}: a node needs a string id, a list of labels and an object of properties")
    if problem := _label_problem(labels):
        raise _refused(f"line {number}: {problem}")
    if RESERVED in properties:
        raise _refused(f"line {number}: the property {RESERVED} is the restore's own")
    return {"id": record["node"], "labels": labels, "properties": _properties(properties, number)}


def _relationship(record: Mapping[str, Any], number: int) -> dict[str, Any]:
    ends, properties = (record.get("from"), record.get("to")), record.get("properties")
    if not all(isinstance(end, str) for end in ends) or not isinstance(properties, dict):
        raise _refused(f"line {number}: a relationship needs a type, string ids from and to, and an object of properties")
    if problem := _type_problem(record["rel"]):
        raise _refused(f"line {number}: {problem}")
    return {"type": record["rel"], "from": ends[0], "to": ends[1], "properties": _properties(properties, number)}


def _properties(properties: Mapping[str, Any], number: int) -> dict[str, Any]:
    try:
        return backup.decode_properties(properties)
    except ValidationFailed as e:
        raise _refused(f"line {number}: {e.message}") from None


def _label_problem(labels: list[Any]) -> str | None:
    """Labels only from the vocabulary: how a foreign or damaged file, or foreign data in the database, is refused."""
    if not labels:
        return "a node without a label, which decisiontrail never writes"
    unknown = [label for label in labels if label not in LABELS]
    return f"a node labelled {unknown[0]!r}, a label decisiontrail does not keep" if unknown else None


def _type_problem(rel_type: Any) -> str | None:
    return None if rel_type in TYPES else f"a relationship of type {rel_type!r}, a type decisiontrail does not keep"


def _refuse_dump(problem: str | None) -> None:
    if problem:
        raise ValidationFailed(f"the database holds {problem}: its dump could not be restored, so none was written")


def _check_trailer(end: Any, written: list[int], number: int) -> None:
    if not isinstance(end, dict) or [end.get("nodes"), end.get("relationships")] != written:
        raise _refused(
            f"line {number}: the trailer counts {end!r}, but the file holds {written[0]:,} node(s) and "
            f"{written[1]:,} relationship(s): records are missing"
        )


def _counted(counts: Any) -> list[int]:
    return [n for n in counts.values() if isinstance(n, int)] if isinstance(counts, dict) else []


def _refused(message: str) -> ValidationFailed:
    return ValidationFailed(f"file: {message}; nothing was restored", field="file")


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def _bar(total: int, desc: str, progress: bool | None) -> tqdm[Any]:
    """Progress on stderr: by default only when it is a terminal."""
    show = sys.stderr.isatty() if progress is None else progress
    return tqdm(total=total, unit="record", desc=desc, disable=not show, file=sys.stderr)
