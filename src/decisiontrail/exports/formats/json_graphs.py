"""The JSON drawings: Cytoscape.js JSON (laid out as the explorer draws, plans as compound nodes;
``nx.cytoscape_graph``) and node-link JSON (d3, ``nx.node_link_graph``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from tempfile import TemporaryFile
from typing import Any, Final

import networkx as nx

from decisiontrail.checks.model import Label
from decisiontrail.exports.document import (
    Part,
    caption,
    edges_in,
    joined_lines,
    node_attributes,
    nodes_in,
    present,
    reserved,
    to_json,
)
from decisiontrail.exports.layout import draw

__all__ = [
    "assemble_cytoscape",
    "assemble_node_link",
    "classes",
    "cytoscape_json",
    "make_cytoscape_part",
    "make_node_link_part",
    "node_link_json",
]


def cytoscape_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Cytoscape.js JSON (``elements`` split into nodes and edges), one element a line: each node
    with its ``position``, its ``classes``, and its plan as its compound ``parent``.

    >>> import json
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> node = json.loads("".join(cytoscape_json(G)))["elements"]["nodes"][0]
    >>> node["data"]["label"], node["data"]["parent"], node["classes"], node["position"]
    ('prompt_definition #0: option 0', 'P1', 'decision t-prompt_definition', {'x': 113.0, 'y': 65.0})
    """
    return assemble_cytoscape(G.graph, [make_cytoscape_part(G, True)])


def node_link_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Node-link JSON as ``nx.node_link_graph(data, edges="edges")`` reads it, one element a line.

    >>> import json
    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> json.loads("".join(node_link_json(G)))["edges"]
    [{'source': 'D0', 'target': 'P1', 'key': 'IN_PLAN', 'type': 'IN_PLAN'}]
    """
    return assemble_node_link(G.graph, [make_node_link_part(G, True)])


def make_cytoscape_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s nodes and edges as Cytoscape.js elements (with ``every_node``, its boundary nodes too),
    the nodes placed (``layout.draw``) but for where the part's drawing starts, which the document decides."""
    # Laid out before any node is written (the layout reads the graph's shape, not its captions).
    drawing = draw(G, dict(nodes_in(G, every_node)))
    positions, holders = drawing.positions, drawing.holders

    def placed() -> Iterator[tuple[float, str]]:
        for n, attrs in nodes_in(G, every_node):
            node = str(n)
            shown = caption(n, attrs)
            names = {"id": node, "value": node, "name": shown, "label": shown}
            holder = holders.get(node)
            if holder is not None:
                names["parent"] = holder
            element = to_json({"data": reserved(names, node_attributes(attrs)), "classes": classes(attrs)})
            x, y = positions[node]
            yield y, f'{element[:-1]}, "position": {{"x": {x!r}, "y": '

    edges = (
        reserved({"id": f"{source}-{key}-{target}", "source": source, "target": target, "key": key}, attrs)
        for source, target, key, attrs in edges_in(G, every_node)
    )
    edge_elements = (to_json({"data": data, "classes": str(data["type"]).lower()}) for data in edges)
    return Part(placed=placed(), edges=edge_elements, height=drawing.height)


def classes(attrs: Mapping[str, Any]) -> str:
    """A node's Cytoscape.js classes, as the explorer names them: its kind, a decision's type
    (``t-<type>``) and state (``superseded``, ``correction``), a plan's (``invalidated``), a
    review's status (``review-<status>``), an attempt's outcome (``replay-<outcome>``), ``boundary``.

    >>> classes({"label": "Decision", "decision_type": "strategy_choice", "status": "superseded", "boundary": True})
    'decision t-strategy_choice superseded boundary'
    """
    label = attrs.get("label")
    names = [_KIND_CLASSES.get(str(label), "node")]
    if label == Label.DECISION:
        names.append(f"t-{attrs.get('decision_type')}")
        if attrs.get("status") == "superseded":
            names.append("superseded")
        if attrs.get("is_correction"):
            names.append("correction")
    elif label == Label.PLAN and attrs.get("status") == "invalidated":
        names.append("invalidated")
    elif label == Label.REVIEW:
        names.append(f"review-{attrs.get('status')}")
    elif label == Label.CORRECTION_ATTEMPT:
        names.append(f"replay-{attrs.get('replay_outcome', attrs.get('status'))}")
    if attrs.get("boundary"):
        names.append("boundary")
    return " ".join(names)


_KIND_CLASSES: Final[Mapping[str, str]] = {
    Label.DECISION: "decision",
    Label.PLAN: "plan",
    Label.REVIEW: "review",
    Label.CORRECTION_ATTEMPT: "attempt",
}


def assemble_cytoscape(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The Cytoscape.js document of ``parts``, each drawn below the ones before it."""

    def placed(part: Part, below: float) -> Iterator[str]:
        for y, start in part.placed:
            yield f"{start}{y + below!r}}}}}"

    def drawn() -> Iterator[Part]:
        below = 0.0
        for part in parts:
            yield Part(members=placed(part, below), edges=part.edges)
            below += part.height

    head = f'{{"data": {to_json(present(graph))}, "directed": true, "multigraph": true, "elements": {{"nodes": [\n'
    return _json_document(head, drawn(), tail="]}}\n")


def make_node_link_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s nodes and edges as node-link members (with ``every_node``, its boundary nodes too)."""
    nodes = (reserved({"id": str(n), "label": caption(n, attrs)}, node_attributes(attrs)) for n, attrs in nodes_in(G, every_node))
    edges = (reserved({"source": s, "target": t, "key": k}, attrs) for s, t, k, attrs in edges_in(G, every_node))
    return Part(members=(to_json(node) for node in nodes), edges=(to_json(edge) for edge in edges))


def assemble_node_link(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The node-link document of ``parts``."""
    head = f'{{"directed": true, "multigraph": true, "graph": {to_json(present(graph))}, "nodes": [\n'
    return _json_document(head, parts, tail="]}\n")


def _json_document(head: str, parts: Iterable[Part], *, tail: str) -> Iterator[str]:
    """``head``, every part's nodes, ``], "edges": [``, every part's edges, ``tail``: the edges
    wait in a temporary file, one JSON value a line, while the nodes are written."""
    with TemporaryFile("w+", encoding="utf-8") as edges:

        def nodes() -> Iterator[str]:
            for part in parts:
                edges.writelines(edge + "\n" for edge in part.edges)
                yield from part.members

        yield head
        yield from joined_lines(nodes())
        yield '], "edges": [\n'
        edges.seek(0)
        yield from joined_lines(line.rstrip("\n") for line in edges)
    yield tail
