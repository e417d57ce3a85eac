"""GraphML (Gephi, yEd, ``nx.read_graphml``): attributes under their own names, typed; ``label`` the caption, ``kind`` the Neo4j label."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from tempfile import TemporaryFile
from typing import Any

import networkx as nx

from decisiontrail.exports.document import Part, caption, edges_in, node_attributes, nodes_in, present
from decisiontrail.exports.markup import TypedKeys, xml_attr

__all__ = ["assemble", "graphml", "make_part"]


def graphml(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """GraphML with typed attribute keys, one element a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> any('attr.name="sequence_number" attr.type="long"' in line for line in graphml(G))
    True
    """
    return assemble(G.graph, [make_part(G, True)])


def make_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s part of a GraphML document: its nodes and edges, each a line (with ``every_node``, its boundary nodes too)."""
    keys = TypedKeys()

    def lines() -> Iterator[str]:
        for node, attrs in nodes_in(G, every_node):
            data = keys.data("node", node_attributes(attrs) | {"label": caption(node, attrs)})
            yield f"<node id={xml_attr(str(node))}>{data}</node>\n"
        for source, target, key, attrs in edges_in(G, every_node):
            data = keys.data("edge", attrs | {"key": key})
            yield f"<edge source={xml_attr(source)} target={xml_attr(target)}>{data}</edge>\n"

    return Part(lines=lines(), types=keys.types)


def assemble(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The GraphML document of ``parts``: the body waits in a temporary file until the typed keys are known."""
    keys = TypedKeys()
    graph_data = keys.data("graph", present(graph))
    with TemporaryFile("w+", encoding="utf-8") as body:
        for part in parts:
            body.writelines(part.lines)
            keys.learn(part.types)  # learnt as the lines were made
        yield '<?xml version="1.0" encoding="UTF-8"?>\n'
        yield (
            '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"'
            ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
            ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
        )
        yield from keys.declarations()
        yield '<graph id="decisions" edgedefault="directed">\n'
        if graph_data:
            yield graph_data + "\n"
        body.seek(0)
        yield from body
    yield "</graph>\n</graphml>\n"
