"""What every export format shares: the formats, a group's part of a document, captions, and
values as text and JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from enum import StrEnum
from typing import Any, Final

import networkx as nx

from decisiontrail.checks.model import Label
from decisiontrail.domain.decision import DecisionType

__all__ = [
    "PALETTE",
    "ExportFormat",
    "Part",
    "as_text",
    "caption",
    "colour",
    "edges_in",
    "float_text",
    "joined_lines",
    "node_attributes",
    "nodes_in",
    "plain",
    "present",
    "reserved",
    "to_json",
]

_CAPTION_CHARS: Final = 60


class ExportFormat(StrEnum):
    """A format ``export`` writes; the value is also the usual file extension."""

    GRAPHML = "graphml"
    DOT = "dot"
    CYTOSCAPE = "cyjs"
    NODE_LINK = "json"
    PROV_JSON = "prov.json"
    GEXF = "gexf"

    @classmethod
    def of_file(cls, name: str) -> tuple[str, ExportFormat]:
        """A file name split into its stem and its format, the longest extension that fits; ValueError if none.

        >>> ExportFormat.of_file("01J.prov.json"), ExportFormat.of_file("01J.json")
        (('01J', <ExportFormat.PROV_JSON: 'prov.json'>), ('01J', <ExportFormat.NODE_LINK: 'json'>))
        """
        for fmt in sorted(cls, key=lambda f: -len(f.value)):
            if name.endswith("." + fmt.value):
                return name[: -len(fmt.value) - 1], fmt
        raise ValueError(f"{name!r} ends in no export format")

    @property
    def media_type(self) -> str:
        """The HTTP content type of the format."""
        return _MEDIA_TYPES[self]

    @property
    def description(self) -> str:
        """One line for a ``--help`` text: what the format is and what reads it."""
        return _DESCRIPTIONS[self]


_MEDIA_TYPES: Final = {
    ExportFormat.GRAPHML: "application/graphml+xml",
    ExportFormat.DOT: "text/vnd.graphviz",
    ExportFormat.CYTOSCAPE: "application/json",
    ExportFormat.NODE_LINK: "application/json",
    ExportFormat.PROV_JSON: "application/json",
    ExportFormat.GEXF: "application/gexf+xml",
}
_DESCRIPTIONS: Final = {
    ExportFormat.GRAPHML: "GraphML, for Gephi, yEd and networkx",
    ExportFormat.DOT: "Graphviz DOT, coloured by decision type, one cluster per plan",
    ExportFormat.CYTOSCAPE: "Cytoscape.js JSON laid out as the explorer draws, plans holding their decisions",
    ExportFormat.NODE_LINK: "node-link JSON, for d3 and networkx",
    ExportFormat.PROV_JSON: "W3C PROV-JSON provenance, for PROV tools and the prov package",
    ExportFormat.GEXF: "GEXF with colours, sizes and a layered layout, for Gephi",
}


def caption(node: object, attrs: Mapping[str, Any]) -> str:
    """What a viewer shows on a node: for a decision its type, number and chosen option.

    >>> caption("D3", {"label": "Decision", "decision_type": "strategy_choice", "sequence_number": 3,
    ...                "chosen_option": "Use a\\nqueue"})
    'strategy_choice #3: Use a queue'
    >>> caption("P1", {"label": "Plan", "description": "x" * 80})[-3:]
    'xx…'
    """
    label, status = attrs.get("label"), attrs.get("status", "")
    if label == Label.DECISION:
        head = f"{attrs.get('decision_type', 'decision')} #{attrs.get('sequence_number', '?')}"
        return f"{head}: {_shorten(attrs.get('chosen_option', ''))}"
    if label == Label.PLAN:
        return f"plan: {_shorten(attrs.get('description') or node)}"
    if label == Label.REVIEW:
        option = attrs.get("resolved_option")
        return f"review ({status})" + (f": {_shorten(option)}" if option else "")
    if label == Label.CORRECTION_ATTEMPT:
        return f"correction attempt #{attrs.get('attempt_number', '?')} ({status})"
    return f"{label or 'node'} {node}"


PALETTE: Final[Mapping[str, tuple[int, int, int]]] = {
    # Decisions by type (Tableau 10, then two of its light tints).
    DecisionType.PROMPT_DEFINITION: (31, 119, 180),  # blue
    DecisionType.INVARIANT_ENFORCED: (148, 103, 189),  # purple
    DecisionType.STRATEGY_CHOICE: (44, 160, 44),  # green
    DecisionType.IMPLEMENTATION_CHOICE: (255, 127, 14),  # orange
    DecisionType.RESOURCE_SELECTION: (23, 190, 207),  # cyan
    DecisionType.SUBPLAN_SPAWN: (214, 39, 40),  # red
    DecisionType.SUBPLAN_PARALLEL_SPAWN: (227, 119, 194),  # pink
    DecisionType.TOOL_INVOCATION: (140, 86, 75),  # brown
    DecisionType.ERROR_RECOVERY: (188, 189, 34),  # olive
    DecisionType.VALIDATION_RESPONSE: (174, 199, 232),  # light blue
    DecisionType.USER_INTERVENTION: (255, 187, 120),  # light orange
    # The other nodes by label.
    Label.PLAN: (64, 64, 64),  # dark gray
    Label.REVIEW: (255, 215, 0),  # gold
    Label.CORRECTION_ATTEMPT: (0, 0, 0),  # black
}
"""The colour (red, green, blue) GEXF and DOT draw a decision in by its type, another node by its label;
the explorer's legend has the same (explorer/src/graph.ts)."""

_OTHER_COLOUR: Final = (160, 160, 160)


def colour(attrs: Mapping[str, Any]) -> tuple[int, int, int]:
    """The colour of a node (``PALETTE``): a decision's by its type, another's by its label.

    >>> colour({"label": "Decision", "decision_type": "strategy_choice"}), colour({"label": "Plan"})
    ((44, 160, 44), (64, 64, 64))
    """
    label = attrs.get("label")
    kind = attrs.get("decision_type") if label == Label.DECISION else label
    return PALETTE.get(str(kind), _OTHER_COLOUR)


_STATUS_NAMES: Final = {Label.DECISION: "decision_status", Label.PLAN: "plan_status", Label.REVIEW: "review_status"}
"""What each kind's ``status`` is called in an export, so one name holds one kind's values. A
correction attempt's is its ``replay_outcome``, which it carries already."""
_FLAGS: Final = {Label.DECISION: ("superseded", "superseded"), Label.PLAN: ("invalidated", "invalidated")}
"""The boolean each kind carries beside its status: its name, and the status that makes it true."""


def node_attributes(attrs: Mapping[Any, Any]) -> dict[str, Any]:
    """A node's attributes as the formats write them, the caption aside: ``kind`` (the Neo4j label)
    first, the status under its kind's own name (``decision_status``, ``plan_status``,
    ``review_status``; an attempt's is its ``replay_outcome``) with a boolean ``superseded`` on a
    decision and ``invalidated`` on a plan, and no None.

    >>> node_attributes({"label": "Decision", "status": "superseded", "plan_id": "P1", "rationale": None})
    {'kind': 'Decision', 'decision_status': 'superseded', 'superseded': True, 'plan_id': 'P1'}
    >>> node_attributes({"label": "CorrectionAttempt", "status": "replayed", "replay_outcome": "replayed"})
    {'kind': 'CorrectionAttempt', 'replay_outcome': 'replayed'}
    """
    kind = attrs.get("label")
    made: dict[str, Any] = {} if kind is None else {"kind": kind}
    for name, value in attrs.items():
        if value is None or name == "label":
            continue
        key = name if type(name) is str else str(name)
        if key == "status" and kind is not None:
            if kind == Label.CORRECTION_ATTEMPT:
                made.setdefault("replay_outcome", value)
                continue
            key = _STATUS_NAMES.get(kind, key)
            flag = _FLAGS.get(kind)
            made[key] = value
            if flag is not None:
                made[flag[0]] = value == flag[1]
            continue
        if key != "kind" or kind is None:  # the label's kind wins over an attribute of that name
            made[key] = value
    return made


@dataclass(frozen=True)
class Part:
    """One group's share of an export document: its lines, each ending in a newline (GraphML:
    its nodes and edges; DOT: its statements; GEXF: its edges), or its members of a JSON array,
    one a line without the comma (``members``: the JSON formats' nodes; ``edges``: their edges;
    ``records``: PROV-JSON's, each ``(section, text)``, an entity or activity as ``"id": record``,
    a relation as its record alone, numbered when put in place), and what the document's head
    declares (``types``: GraphML's and GEXF's typed keys it uses), draws (``nodes``: GEXF's node
    elements, each ``(layer, row, head)``, the element up to its y position, and ``rows``, how
    many rows it takes in each layer; ``placed``: Cytoscape.js's nodes, each ``(y, head)``, the
    element up to its y position, and ``height``, how far down its drawing reaches) or collects
    (``agents``: PROV-JSON's agents).

    As made from a graph the sequences are generators, run as the document is written (the
    declarations, rows and agents are learnt as they run), so a whole graph's document streams;
    ``group_part`` lists them, so a group's part holds nothing of its graph and pickles."""

    lines: Iterable[str] = ()
    members: Iterable[str] = ()
    edges: Iterable[str] = ()
    records: Iterable[tuple[str, str]] = ()
    types: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    nodes: Iterable[tuple[int, int, str]] = ()
    rows: Mapping[int, int] = field(default_factory=dict)
    agents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    placed: Iterable[tuple[float, str]] = ()
    height: float = 0.0


def nodes_in(G: nx.MultiDiGraph[str], every_node: bool) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The nodes ``G``'s part writes, with their attributes: its boundary ones only with ``every_node``."""
    # A group's boundary nodes belong to another group, which writes them.
    for node, attrs in G.nodes(data=True):
        if every_node or not attrs.get("boundary"):
            yield node, attrs


def edges_in(G: nx.MultiDiGraph[str], every_node: bool) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """The edges ``G``'s part writes, as (source, target, key, attributes with ``type``), its attributes present."""
    # An edge belongs to its source's group: a boundary node's (its IN_PLAN to its plan) is
    # written by the group that holds it. An edge built without the model's builders may lack
    # ``type``; its key stands in.
    nodes = G.nodes
    for source, target, key, attrs in G.edges(keys=True, data=True):
        if every_node or not nodes[source].get("boundary"):
            yield str(source), str(target), str(key), {"type": str(key), **present(attrs)}


def present(attrs: Mapping[Any, Any]) -> dict[str, Any]:
    """The attributes that are not None, by their names as text."""
    return {str(name): value for name, value in attrs.items() if value is not None}


def reserved(names: dict[str, Any], attrs: Mapping[Any, Any]) -> dict[str, Any]:
    """``names`` (what a format reserves), then the attributes it does not name, JSON-ready."""
    # Run for every node and edge, so in one pass, and a value of a type JSON holds as it is kept
    # without ``plain``'s checks.
    made = dict(names)
    for name, value in attrs.items():
        if value is None:
            continue
        key = name if type(name) is str else str(name)
        if key not in names:
            made[key] = value if type(value) in _AS_IS else plain(value)
    return made


_AS_IS: Final = frozenset({str, int, bool})
"""Types whose values ``plain`` returns as they are (a float may be infinite or NaN)."""


def _shorten(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _CAPTION_CHARS else text[: _CAPTION_CHARS - 1] + "…"


def plain(value: Any) -> Any:
    """A value JSON can hold: datetimes as ISO 8601, tuples and sets as lists, inf and NaN as text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else float_text(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=str)
    iso_format = getattr(value, "isoformat", None)  # neo4j.time values
    return iso_format() if callable(iso_format) else str(value)


def as_text(value: Any) -> str:
    """A value as one string, for GraphML and DOT."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return float_text(value)
    value = plain(value)
    return str(value) if isinstance(value, str) else to_json(value)


def float_text(value: float) -> str:
    """A float as XML Schema spells it (``NaN``, ``INF``, ``-INF``), which float() also reads."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return repr(value)


def to_json(value: Any) -> str:
    """JSON text of a value ``plain`` made, non-ASCII kept as it is."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def joined_lines(texts: Iterable[str]) -> Iterator[str]:
    """Comma-separated members of a JSON array or object, one a line."""
    previous: str | None = None
    for text in texts:
        if previous is not None:
            yield previous + ",\n"
        previous = text
    if previous is not None:
        yield previous + "\n"
