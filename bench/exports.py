"""``export --all``'s GraphML read back and compared, decision by decision, with what the database holds.

The document is read as a stream (``xml.etree.ElementTree.XMLPullParser``), a group of plans at
a time, so a 10M-decision export is compared in the memory of its largest group, as it was
written: a group's part is its nodes, then the edges leaving them (``exports.group_part``),
so a node after an edge starts the next group, and every decision before it is whole. The groups
read are compared a few thousand decisions at a time with their plans' rows
(``graph/decision_rows``, the rows the baseline streams): every property stored is exported with
its value, and every edge (plan, parent, dependencies with their ordinals, correction,
supersession with its time) exactly once; no other decision is exported in those plans. At the
end, the decisions compared are every decision stored. The document's SHA-256 is taken as it is
read, so the other runs' documents (the same for any ``--jobs``) are compared with this one byte
for byte.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, cast
from xml.etree.ElementTree import Element, XMLPullParser

from decisiontrail.cypher import query
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.loading import DECISIONS_PER_STATEMENT

_NS = "{http://graphml.graphdrawing.org/xmlns}"
_KEY, _GRAPH, _NODE, _EDGE, _DATA = (_NS + tag for tag in ("key", "graph", "node", "edge", "data"))

COMPARED_PER_READ = 5_000
"""Decisions of whole groups gathered before their plans' rows are read and compared."""

_READ_BYTES = 1 << 20
_TIMES = frozenset({"created_at", "superseded_at"})
_EDGES = ("IN_PLAN", "PARENT", "DEPENDS_ON", "CORRECTS", "SUPERSEDED_BY")
"""The edges a stored decision's row names (graph/decision_rows); others leave it in the export too."""


@dataclass
class Exported:
    """A decision as the document holds it: its typed attributes and the edges leaving it."""

    attrs: dict[str, Any]
    edges: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (type, target, attributes)


@dataclass(frozen=True)
class Compared:
    decisions: int
    sha256: str


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as document:
        while block := document.read(_READ_BYTES):
            digest.update(block)
    return digest.hexdigest()


def compare_graphml(graph: Graph, path: Path) -> Compared:
    """``path`` (``export --all``'s GraphML of ``graph``'s database) against the database's rows,
    in full; RuntimeError naming the first difference."""
    rows = _Rows(graph)
    compared = 0
    digest = hashlib.sha256()
    with open(path, "rb") as document, _no_cycle_collection():
        for group in groups(_read(document, digest)):
            compared += rows.add(group)
        compared += rows.flush()
    stored = rows.stored()
    if compared != stored:
        raise RuntimeError(f"the export holds {compared:,} decisions, the database {stored:,}")
    return Compared(compared, digest.hexdigest())


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused: the parser makes millions of elements, which hold no
    cycles, and the collections they set off were two thirds of a read back."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read(document: BinaryIO, digest: Any) -> Iterator[bytes]:
    while block := document.read(_READ_BYTES):
        digest.update(block)
        yield block


@dataclass
class Group:
    """The decisions of one group of plans as exported, by id, and the ids of its plans."""

    decisions: dict[str, Exported] = field(default_factory=dict)
    plan_ids: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # its other nodes: reviews, correction attempts


def groups(blocks: Iterator[bytes]) -> Iterator[Group]:
    """The document's groups, each whole (its nodes, the edges leaving them), in order.

    >>> doc = b'''<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
    ... <key id="n.kind" for="node" attr.name="kind" attr.type="string"/>
    ... <key id="n.plan_id" for="node" attr.name="plan_id" attr.type="string"/>
    ... <key id="n.sequence_number" for="node" attr.name="sequence_number" attr.type="long"/>
    ... <key id="e.key" for="edge" attr.name="key" attr.type="string"/>
    ... <key id="e.ordinal" for="edge" attr.name="ordinal" attr.type="long"/>
    ... <graph id="decisions" edgedefault="directed">
    ... <node id="P1"><data key="n.kind">Plan</data><data key="n.plan_id">P1</data></node>
    ... <node id="D1"><data key="n.kind">Decision</data><data key="n.sequence_number">0</data></node>
    ... <edge source="D1" target="P1"><data key="e.key">IN_PLAN</data></edge>
    ... <node id="P2"><data key="n.kind">Plan</data><data key="n.plan_id">P2</data></node>
    ... <node id="D2"><data key="n.kind">Decision</data><data key="n.sequence_number">0</data></node>
    ... <edge source="D2" target="D1"><data key="e.key">DEPENDS_ON</data><data key="e.ordinal">0</data></edge>
    ... </graph></graphml>'''
    >>> [(sorted(g.plan_ids), {i: (d.attrs["sequence_number"], d.edges) for i, d in g.decisions.items()}) for g in groups(iter([doc]))]
    [(['P1'], {'D1': (0, [('IN_PLAN', 'P1', {'key': 'IN_PLAN'})])}), (['P2'], {'D2': (0, [('DEPENDS_ON', 'D1', {'key': 'DEPENDS_ON', 'ordinal': 0})])})]
    >>> list(groups(iter([doc.replace(b'source="D2"', b'source="D1"')])))
    Traceback (most recent call last):
    RuntimeError: an edge of D1 follows another group's nodes: the document is not written group by group
    """
    parser: XMLPullParser[Element] = XMLPullParser(events=("start", "end"))
    keys: dict[str, tuple[str, Callable[[str], Any]]] = {}
    graph: Element | None = None
    group, after_edges = Group(), False
    for block in blocks:
        parser.feed(block)
        # With these events every item is an event and its element (never a namespace's).
        for event, element in cast(Iterator[tuple[str, Element]], parser.read_events()):
            tag = element.tag
            if event == "start":
                if tag == _GRAPH:
                    graph = element
                continue
            if tag == _DATA:
                continue
            if tag == _NODE:
                if after_edges:
                    yield group
                    group, after_edges = Group(), False
                node_id = element.attrib["id"]
                attrs = _attributes(element, keys)
                kind = attrs.get("kind")  # ``label`` is the caption
                if kind == "Decision":
                    group.decisions[node_id] = Exported(attrs)
                else:
                    group.others.add(node_id)
                    if kind == "Plan":
                        group.plan_ids.add(attrs["plan_id"])
            elif tag == _EDGE:
                after_edges = True
                source, target = element.attrib["source"], element.attrib["target"]
                attrs = _attributes(element, keys)
                if source in group.decisions:
                    group.decisions[source].edges.append((str(attrs.get("key", attrs.get("type"))), target, attrs))
                elif source not in group.others:
                    raise RuntimeError(
                        f"an edge of {source} follows another group's nodes: the document is not written group by group"
                    )
            elif tag == _KEY:
                keys[element.attrib["id"]] = (element.attrib["attr.name"], _TYPES[element.attrib.get("attr.type", "string")])
                continue
            else:
                continue
            if graph is not None:
                graph.remove(element)  # read: the document is never held whole
    parser.close()
    if group.decisions or group.others:
        yield group


def _attributes(element: Element, keys: dict[str, tuple[str, Callable[[str], Any]]]) -> dict[str, Any]:
    attrs = {}
    for data in element:
        name, typed = keys[data.attrib["key"]]
        attrs[name] = typed(data.text or "")
    return attrs


_TYPES: dict[str, Callable[[str], Any]] = {
    "string": str,
    "long": int,
    "int": int,
    "double": float,
    "float": float,
    "boolean": lambda text: text.strip().lower() in ("true", "1"),
}


class _Rows:
    """The database's side: the rows of the plans the groups hold, read a few thousand decisions at a time."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.waiting: dict[str, Exported] = {}
        self.plan_ids: set[str] = set()

    def add(self, group: Group) -> int:
        """Gather ``group``; once enough decisions wait, compare them all: how many were compared."""
        self.waiting.update(group.decisions)
        self.plan_ids |= group.plan_ids
        return self.flush() if len(self.waiting) >= COMPARED_PER_READ else 0

    def flush(self) -> int:
        """Compare every decision waiting with its plan's row: how many were compared."""
        exported = Counter(d.attrs.get("plan_id") for d in self.waiting.values())
        large = sorted(p for p in self.plan_ids if exported[p] > DECISIONS_PER_STATEMENT)
        compared = 0
        with self.graph.driver.session(database=self.graph.database, fetch_size=2000) as session:
            small = sorted(self.plan_ids.difference(large))
            for plan_row in session.run(query("graph/decision_rows"), plan_ids=small):
                compared += sum(self._compare(row) for row in plan_row["decisions"])
            for plan_id in large:  # as the loader reads a plan too large to collect: a decision a row
                compared += sum(self._compare(row) for row in session.run(query("graph/plan_decision_rows"), plan_id=plan_id))
        if self.waiting:
            raise RuntimeError(f"decision {next(iter(self.waiting))} is exported but not stored in the plans of its group")
        self.plan_ids.clear()
        return compared

    def _compare(self, row: Any) -> int:
        decision_id = row["decision"]["decision_id"]
        exported = self.waiting.pop(decision_id, None)
        if exported is None:
            raise RuntimeError(f"decision {decision_id} is stored but not exported with its plan")
        decision_matches(exported, row)
        return 1

    def stored(self) -> int:
        records, _, _ = self.graph.driver.execute_query(
            "MATCH (d:Decision) RETURN count(d) AS decisions", database_=self.graph.database
        )
        return int(records[0]["decisions"])


def decision_matches(exported: Exported, row: dict[str, Any]) -> None:
    """A stored decision's row (graph/decision_rows) against the decision exported.

    >>> exported = Exported({"kind": "Decision", "decision_id": "D1", "created_at": "2026-01-01T00:00:00+00:00",
    ...     "confidence_score": 0.5}, [("IN_PLAN", "P1", {})])
    >>> row = {"decision": {"decision_id": "D1", "created_at": "2026-01-01T00:00:00Z", "confidence_score": 0.5},
    ...        "plan_ids": ["P1"], "parent_ids": [], "depends_on": [], "corrects_ids": [], "superseded_by": []}
    >>> decision_matches(exported, row)
    >>> decision_matches(exported, {**row, "parent_ids": ["D0"]})
    Traceback (most recent call last):
    RuntimeError: decision D1: edges ["('PARENT', 'D0', None)"] differ between store and export
    >>> decision_matches(exported, {**row, "decision": {**row["decision"], "confidence_score": 0.75}})
    Traceback (most recent call last):
    RuntimeError: decision D1: confidence_score is 0.75 stored, 0.5 exported
    """
    decision = row["decision"]
    decision_id = decision["decision_id"]
    ours = exported.attrs
    for name, value in decision.items():
        if value is None:
            continue
        if name in _TIMES:
            same = name in ours and datetime.fromisoformat(value) == datetime.fromisoformat(ours[name])
        elif isinstance(value, list):
            same = name in ours and json.loads(ours[name]) == value
        else:
            same = ours.get(name) == value
        if not same:
            raise RuntimeError(f"decision {decision_id}: {name} is {value!r} stored, {ours.get(name)!r} exported")
    expected: set[tuple[str, str, object]] = {("IN_PLAN", plan_id, None) for plan_id in row["plan_ids"]}
    expected |= {("PARENT", parent, None) for parent in row["parent_ids"]}
    expected |= {("DEPENDS_ON", dependency, ordinal) for dependency, ordinal in row["depends_on"]}
    expected |= {("CORRECTS", original, None) for original in row["corrects_ids"]}
    expected |= {("SUPERSEDED_BY", successor, datetime.fromisoformat(at)) for successor, at in row["superseded_by"]}
    found = Counter(
        (key, target, attrs.get("ordinal") if key == "DEPENDS_ON" else _instant(attrs.get("at")))
        for key, target, attrs in exported.edges
        if key in _EDGES
    )
    if found != Counter(expected):  # an edge exported twice differs too
        differ = sorted(map(str, (found - Counter(expected)) + (Counter(expected) - found)))
        raise RuntimeError(f"decision {decision_id}: edges {differ} differ between store and export")


def _instant(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


class Exports:
    """Each export run's document, checked after the run: the first read back and compared with
    the database in full (``compare_graphml``), every later one the same document
    byte for byte (its SHA-256): ``export --all`` writes the same document for any ``--jobs``."""

    COMPARED = (
        "every decision, its properties and edges, against the database's rows (the first run's document, read back "
        "whole); every other run's document the same, byte for byte; and the count"
    )

    def __init__(self, graph: Graph, scratch: Path, progress: Callable[[str], None]) -> None:
        self.graph, self.scratch, self.progress = graph, scratch, progress
        self.first: Compared | None = None
        self.runs = 0

    def path(self) -> Path:
        return self.scratch / "export.graphml"

    def check(self, path: Path) -> None:
        """``path``, a run's document, as the first run's; removed once checked."""
        self.runs += 1
        try:
            if self.first is None:
                self.progress("offline: the first export read back and compared with the database, decision by decision")
                self.first = compare_graphml(self.graph, path)
                return
            digest = sha256_of(path)
            if digest != self.first.sha256:
                raise RuntimeError(
                    f"export run {self.runs} wrote another document than the first, which was compared in full "
                    f"(SHA-256 {digest[:12]}, not {self.first.sha256[:12]})"
                )
        finally:
            path.unlink(missing_ok=True)
