"""Exports of a decision graph for visualization tools: GraphML, DOT, Cytoscape.js JSON and node-link JSON.

Every writer is a generator of lines, so a large graph streams out without the document ever
being held whole; ``export`` groups the lines into chunks of a few hundred. All four formats
carry every node's and edge's attributes, so a viewer can style by ``label`` (the Neo4j label),
``status``, ``plan_id``, ``decision_type`` and ``boundary`` (a node outside the loaded scope),
with a few names that each format reserves for itself:

- GraphML (Gephi, yEd, ``nx.read_graphml``): attributes under their own names, typed
  (``boolean``, ``long``, ``double``; a name whose values mix types is a ``string``, ints mixed
  with floats a ``double``), plus ``caption``, the text to show. Edges have no ``id`` (Gephi
  needs edge ids unique, and a relationship type is not); their ``key`` attribute holds the
  relationship type, which ``nx.read_graphml(..., force_multigraph=True)`` takes as the edge key.
- DOT (Graphviz): ``label`` is what Graphviz draws, so it holds the caption and the Neo4j label
  moves to ``kind``. Plans are boxes, decisions ellipses, reviews notes, correction attempts
  hexagons; superseded decisions and invalidated plans are dashed and gray, boundary nodes
  dotted. Each plan in the graph is a ``cluster_<plan_id>`` subgraph holding its decisions and
  reviews. Edges carry ``key``, ``type`` and ``label``, all the relationship type; IN_PLAN and
  FOR_PLAN edges into a drawn plan are ``invis`` (its cluster already shows them).
- Cytoscape.js JSON (``.cyjs``, ``nx.cytoscape_graph``): node ``data`` has ``id`` and ``value``
  (the node id) and ``name`` (the caption) beside the attributes; edge ``data`` has
  ``id`` (``<source>-<type>-<target>``), ``source``, ``target`` and ``key``.
- node-link JSON (d3, ``nx.node_link_graph(data, edges="edges")``): nodes have ``id`` and
  ``caption``, edges ``source``, ``target`` and ``key``.

A reserved name wins over an attribute of the same name. Attributes that are None are left out;
datetimes become ISO 8601 text; lists and dicts stay JSON arrays and objects in the JSON formats
and become JSON text in GraphML and DOT; node ids and edge keys are written as strings.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime, time
from enum import StrEnum
from itertools import islice
from typing import Any, Final
from xml.sax.saxutils import escape

import networkx as nx

from decisiontrail.checks.model import Label, Rel

__all__ = ["ExportFormat", "caption", "cytoscape_json", "dot", "export", "graphml", "node_link_json"]

_CHUNK_LINES: Final = 256
_CAPTION_CHARS: Final = 60


class ExportFormat(StrEnum):
    """A format ``export`` writes; the value is also the usual file extension."""

    GRAPHML = "graphml"
    DOT = "dot"
    CYTOSCAPE = "cyjs"
    NODE_LINK = "json"

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
}
_DESCRIPTIONS: Final = {
    ExportFormat.GRAPHML: "GraphML, for Gephi, yEd and networkx",
    ExportFormat.DOT: "Graphviz DOT, one cluster per plan",
    ExportFormat.CYTOSCAPE: "Cytoscape.js JSON, for Cytoscape and web viewers",
    ExportFormat.NODE_LINK: "node-link JSON, for d3 and networkx",
}


def export(G: nx.MultiDiGraph[str], fmt: ExportFormat | str) -> Iterator[str]:
    """The graph in ``fmt``, as text chunks of a few hundred lines each.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> "".join(export(G, "dot")).startswith("digraph decisions {")
    True
    """
    return _chunked(_WRITERS[ExportFormat(fmt)](G), _CHUNK_LINES)


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


def graphml(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """GraphML with typed attribute keys, one element a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> any('attr.name="sequence_number" attr.type="long"' in line for line in graphml(G))
    True
    """
    domains = {
        "graph": _key_types([G.graph]),
        "node": {**_key_types(attrs for _, attrs in G.nodes(data=True)), "caption": "string"},
        "edge": {"type": "string", **_key_types(attrs for _, _, attrs in G.edges(data=True)), "key": "string"},
    }
    keys = {domain: {name: f"{domain[0]}{i}" for i, name in enumerate(types)} for domain, types in domains.items()}
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield (
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"'
        ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
        ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
    )
    for domain, types in domains.items():
        for name, kind in types.items():
            yield f'<key id="{keys[domain][name]}" for="{domain}" attr.name={_xml_attr(name)} attr.type="{kind}"/>\n'
    yield '<graph id="decisions" edgedefault="directed">\n'
    if G.graph:
        yield _graphml_data(_present(G.graph), keys["graph"]) + "\n"
    for node, attrs in G.nodes(data=True):
        data = _graphml_data(_present(attrs) | {"caption": caption(node, attrs)}, keys["node"])
        yield f"<node id={_xml_attr(str(node))}>{data}</node>\n"
    for source, target, key, attrs in _edges(G):
        data = _graphml_data(attrs | {"key": key}, keys["edge"])
        yield f"<edge source={_xml_attr(source)} target={_xml_attr(target)}>{data}</edge>\n"
    yield "</graph>\n</graphml>\n"


def dot(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Graphviz DOT with one cluster per plan, one statement a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> [line.strip() for line in dot(G) if "->" in line]
    ['"D0" -> "P1" [key="IN_PLAN", type="IN_PLAN", label="IN_PLAN", style="invis"];']
    """
    plans = {str(n): n for n, attrs in G.nodes(data=True) if attrs.get("label") == Label.PLAN}
    members: dict[str, list[Any]] = {plan_id: [] for plan_id in plans}
    loose: list[Any] = []
    for node, attrs in G.nodes(data=True):
        plan_id = str(attrs.get("plan_id"))
        if attrs.get("label") in (Label.DECISION, Label.REVIEW) and plan_id in members:
            members[plan_id].append(node)
        elif str(node) not in plans:
            loose.append(node)
    yield "digraph decisions {\n"
    yield '  rankdir="BT";\n'
    for name, value in _present(G.graph).items():
        yield f"  {_dot_name(name)}={_dot_id(_text(value))};\n"
    for plan_id, plan in plans.items():
        attrs = G.nodes[plan]
        yield f"  subgraph {_dot_id('cluster_' + plan_id)} {{\n"
        yield f"    label={_dot_id(caption(plan, attrs))};\n"
        if attrs.get("status") == "invalidated":
            yield '    style="dashed";\n    color="gray";\n'
        for node in (plan, *members[plan_id]):
            yield f"    {_dot_node(node, G.nodes[node])}\n"
        yield "  }\n"
    for node in loose:
        yield f"  {_dot_node(node, G.nodes[node])}\n"
    for source, target, key, attrs in _edges(G):
        look = {"key": key, "type": attrs["type"], "label": key}
        if key in _DRAWN_AS_CLUSTERS and str(target) in plans:
            # The plan's cluster already shows membership; drawn, these edges would bury the tree.
            look |= {"style": "invis"}
        rest = {name: value for name, value in attrs.items() if name not in look}
        yield f"  {_dot_id(source)} -> {_dot_id(target)} {_dot_attrs(look | rest)};\n"
    yield "}\n"


_DRAWN_AS_CLUSTERS: Final = {Rel.IN_PLAN.value, Rel.FOR_PLAN.value}


def cytoscape_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Cytoscape.js JSON (``elements`` split into nodes and edges), one element a line.

    >>> from decisiontrail.checks.model import add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P1", description="Ship it")
    >>> json.loads("".join(cytoscape_json(G)))["elements"]["nodes"][0]["data"]["name"]
    'plan: Ship it'
    """
    yield f'{{"data": {_json(_present(G.graph))}, "directed": true, "multigraph": true, "elements": {{"nodes": [\n'
    yield from _json_lines(
        {"data": _reserved({"id": str(node), "value": str(node), "name": caption(node, attrs)}, attrs)}
        for node, attrs in G.nodes(data=True)
    )
    yield '], "edges": [\n'
    yield from _json_lines(
        {"data": _reserved({"id": f"{source}-{key}-{target}", "source": source, "target": target, "key": key}, attrs)}
        for source, target, key, attrs in _edges(G)
    )
    yield "]}}\n"


def node_link_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Node-link JSON as ``nx.node_link_graph(data, edges="edges")`` reads it, one element a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> json.loads("".join(node_link_json(G)))["edges"]
    [{'source': 'D0', 'target': 'P1', 'key': 'IN_PLAN', 'type': 'IN_PLAN'}]
    """
    yield f'{{"directed": true, "multigraph": true, "graph": {_json(_present(G.graph))}, "nodes": [\n'
    yield from _json_lines(
        _reserved({"id": str(node), "caption": caption(node, attrs)}, attrs) for node, attrs in G.nodes(data=True)
    )
    yield '], "edges": [\n'
    yield from _json_lines(
        _reserved({"source": source, "target": target, "key": key}, attrs) for source, target, key, attrs in _edges(G)
    )
    yield "]}\n"


_WRITERS: Final = {
    ExportFormat.GRAPHML: graphml,
    ExportFormat.DOT: dot,
    ExportFormat.CYTOSCAPE: cytoscape_json,
    ExportFormat.NODE_LINK: node_link_json,
}


def _chunked(lines: Iterable[str], size: int) -> Iterator[str]:
    it = iter(lines)
    while batch := list(islice(it, size)):
        yield "".join(batch)


def _edges(G: nx.MultiDiGraph[str]) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    # An edge built without the model's builders may lack ``type``; its key stands in.
    for source, target, key, attrs in G.edges(keys=True, data=True):
        yield str(source), str(target), str(key), {"type": str(key), **_present(attrs)}


def _present(attrs: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(name): value for name, value in attrs.items() if value is not None}


def _reserved(reserved: dict[str, Any], attrs: Mapping[Any, Any]) -> dict[str, Any]:
    return {**reserved, **{name: _plain(v) for name, v in _present(attrs).items() if name not in reserved}}


def _shorten(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _CAPTION_CHARS else text[: _CAPTION_CHARS - 1] + "…"


def _plain(value: Any) -> Any:
    """A value JSON can hold: datetimes as ISO 8601, tuples and sets as lists, inf and NaN as text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _float_text(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((_plain(v) for v in value), key=str)
    iso_format = getattr(value, "isoformat", None)  # neo4j.time values
    return iso_format() if callable(iso_format) else str(value)


def _text(value: Any) -> str:
    """A value as one string, for GraphML and DOT."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _float_text(value)
    plain = _plain(value)
    return str(plain) if isinstance(plain, str) else _json(plain)


def _float_text(value: float) -> str:
    # The XML Schema spellings, which float() also reads.
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return repr(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _json_lines(items: Iterable[Any]) -> Iterator[str]:
    previous: str | None = None
    for item in items:
        if previous is not None:
            yield previous + ",\n"
        previous = _json(item)
    if previous is not None:
        yield previous + "\n"


# GraphML


def _graphml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    return "string"


def _key_types(records: Iterable[Mapping[Any, Any]]) -> dict[str, str]:
    types: dict[str, str] = {}
    for attrs in records:
        for name, value in _present(attrs).items():
            kind = _graphml_type(value)
            seen = types.setdefault(name, kind)
            if seen != kind:
                types[name] = "double" if {seen, kind} == {"long", "double"} else "string"
    return types


def _graphml_data(attrs: Mapping[str, Any], keys: Mapping[str, str]) -> str:
    # An int under a double key is still a valid xsd:double ("1"), so values need no retyping.
    return "".join(f'<data key="{keys[name]}">{_xml_text(_text(value))}</data>' for name, value in attrs.items())


# Outside XML 1.0's Char production: C0 controls but tab, newline and return; surrogates; U+FFFE, U+FFFF.
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    # A raw return would be read back as a newline; the character reference keeps it.
    return escape(_NOT_XML.sub("\ufffd", text), {"\r": "&#13;"})


def _xml_attr(text: str) -> str:
    entities = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
    return '"' + escape(_NOT_XML.sub("\ufffd", text), entities) + '"'


# DOT

_DOT_ESCAPES: Final = str.maketrans(
    {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}
    | {chr(c): None for c in range(0x20) if chr(c) not in "\t\n\r"}
    | {"\x7f": None}
)
_DOT_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOT_KEYWORDS: Final = frozenset({"node", "edge", "graph", "digraph", "subgraph", "strict"})
_DOT_SHAPES: Final[dict[str, str]] = {
    Label.PLAN: "box",
    Label.DECISION: "ellipse",
    Label.REVIEW: "note",
    Label.CORRECTION_ATTEMPT: "hexagon",
}


def _dot_id(text: str) -> str:
    # Always quoted, so an id like ``node`` or ``01J...`` is never read as a keyword or a number.
    return '"' + text.translate(_DOT_ESCAPES) + '"'


def _dot_name(name: str) -> str:
    return name if _DOT_NAME.fullmatch(name) and name.lower() not in _DOT_KEYWORDS else _dot_id(name)


def _dot_attrs(attrs: Mapping[str, Any]) -> str:
    return "[" + ", ".join(f"{_dot_name(name)}={_dot_id(_text(value))}" for name, value in attrs.items()) + "]"


def _dot_node(node: Any, attrs: Mapping[str, Any]) -> str:
    label = attrs.get("label")
    look: dict[str, Any] = {"label": caption(node, attrs), "shape": _DOT_SHAPES.get(str(label), "ellipse")}
    if label is not None:
        look["kind"] = label
    if attrs.get("status") in ("superseded", "invalidated"):
        look |= {"style": "dashed", "color": "gray"}
    if attrs.get("boundary"):
        look |= {"style": "dotted", "fontcolor": "gray"}
    rest = {name: value for name, value in _present(attrs).items() if name not in look and name != "label"}
    return f"{_dot_id(str(node))} {_dot_attrs(look | rest)};"
