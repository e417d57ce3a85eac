"""The JSON drawings: Cytoscape.js JSON (``nx.cytoscape_graph``) and node-link JSON (d3, ``nx.node_link_graph``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from tempfile import TemporaryFile
from typing import Any

import networkx as nx

from decisiontrail.exports.document import Part, caption, edges_in, joined_lines, nodes_in, present, reserved, to_json

__all__ = [
    "assemble_cytoscape",
    "assemble_node_link",
    "cytoscape_json",
    "make_cytoscape_part",
    "make_node_link_part",
    "node_link_json",
]


def cytoscape_json(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Cytoscape.js JSON (``elements`` split into nodes and edges), one element a line.

    >>> import json
    >>> from decisiontrail.checks.model import add_plan, decision_graph
    >>> G = decision_graph()
    >>> _ = add_plan(G, "P1", description="Ship it")
    >>> json.loads("".join(cytoscape_json(G)))["elements"]["nodes"][0]["data"]["name"]
    'plan: Ship it'
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
    """``G``'s nodes and edges as Cytoscape.js elements (with ``every_node``, its boundary nodes too)."""
    nodes = (reserved({"id": str(n), "value": str(n), "name": caption(n, attrs)}, attrs) for n, attrs in nodes_in(G, every_node))
    edges = (
        reserved({"id": f"{source}-{key}-{target}", "source": source, "target": target, "key": key}, attrs)
        for source, target, key, attrs in edges_in(G, every_node)
    )
    return Part(members=(to_json({"data": data}) for data in nodes), edges=(to_json({"data": data}) for data in edges))


def assemble_cytoscape(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The Cytoscape.js document of ``parts``."""
    head = f'{{"data": {to_json(present(graph))}, "directed": true, "multigraph": true, "elements": {{"nodes": [\n'
    return _json_document(head, parts, tail="]}}\n")


def make_node_link_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s nodes and edges as node-link members (with ``every_node``, its boundary nodes too)."""
    nodes = (reserved({"id": str(n), "caption": caption(n, attrs)}, attrs) for n, attrs in nodes_in(G, every_node))
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
