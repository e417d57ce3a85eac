"""GEXF 1.2 (Gephi, ``nx.read_gexf``), drawn: colours by decision type, sizes by blast radius, a layered layout."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from tempfile import TemporaryFile
from typing import Any, Final

import networkx as nx

from decisiontrail.analytics.radius import blast_radius
from decisiontrail.checks.model import Label, Rel
from decisiontrail.exports.document import Part, as_text, caption, colour, edges_in, node_attributes, nodes_in, present
from decisiontrail.exports.markup import TypedKeys, key_id, xml_attr, xml_text

__all__ = ["assemble", "decision_size", "gexf", "make_part"]


def gexf(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """GEXF 1.2 for Gephi with colours, sizes and a layered layout (``viz``), one element a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> from io import BytesIO
    >>> nx.read_gexf(BytesIO("".join(gexf(G)).encode())).nodes["D0"]["viz"]
    {'color': {'r': 31, 'g': 119, 'b': 180, 'a': 1.0}, 'size': 10.0, 'position': {'x': 200.0, 'y': 0.0, 'z': 0.0}}
    """
    return assemble(G.graph, [make_part(G, True)])


def make_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s part of a GEXF document: its nodes, coloured, sized and placed, and its edges (with ``every_node``, its boundary nodes too)."""
    # Sized by the group's own blast radii: a correction's downstream stays within its group of plans.
    keys = TypedKeys()
    radius = blast_radius(G)
    spots, rows = _layers(G, every_node)

    def nodes() -> Iterator[tuple[int, int, str]]:
        for node, attrs in nodes_in(G, every_node):
            values = _gexf_attributes(node, attrs, radius)
            layer, row = spots[str(node)]
            r, g, b = colour(attrs)
            alpha = _FADED if attrs.get("status") in ("superseded", "invalidated") or attrs.get("boundary") else 1.0
            head = (
                f"<node id={xml_attr(str(node))} label={xml_attr(caption(node, attrs))}>{keys.attvalues('node', values)}"
                f'<viz:color r="{r}" g="{g}" b="{b}" a="{alpha}"/><viz:size value="{_size(attrs, values)}"/>'
                f'<viz:position x="{layer * _LAYER_STEP}" y="'
            )
            yield layer, row, head

    edges = (
        f"<edge id={xml_attr(f'{source}-{key}-{target}')} source={xml_attr(source)} target={xml_attr(target)}"
        f" label={xml_attr(key)}>{keys.attvalues('edge', attrs)}</edge>\n"
        for source, target, key, attrs in edges_in(G, every_node)
    )
    return Part(lines=edges, nodes=nodes(), rows=rows, types=keys.types)


def assemble(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The GEXF document of ``parts``, each drawn below the ones before it."""
    # The attribute declarations come first, so the nodes and the edges wait in temporary files
    # until every part has been seen. Each part is drawn below the ones before it: the rows each
    # layer has taken carry over.
    keys = TypedKeys()
    taken: dict[int, int] = {}
    with TemporaryFile("w+", encoding="utf-8") as nodes, TemporaryFile("w+", encoding="utf-8") as edges:
        for part in parts:
            nodes.writelines(
                f'{head}{0.0 - (taken.get(layer, 0) + row) * _ROW_STEP}" z="0.0"/></node>\n' for layer, row, head in part.nodes
            )
            edges.writelines(part.lines)
            keys.learn(part.types)  # learnt as the lines were made
            for layer, used in part.rows.items():
                taken[layer] = taken.get(layer, 0) + used
        yield '<?xml version="1.0" encoding="UTF-8"?>\n'
        yield (
            '<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:viz="http://www.gexf.net/1.2draft/viz"'
            ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            ' xsi:schemaLocation="http://www.gexf.net/1.2draft http://www.gexf.net/1.2draft/gexf.xsd" version="1.2">\n'
        )
        described = f"<description>{xml_text(as_text(present(graph)))}</description>" if graph else ""
        yield f"<meta><creator>decisiontrail</creator>{described}</meta>\n"
        yield '<graph defaultedgetype="directed" mode="static">\n'
        for domain in ("node", "edge"):
            if keys.types[domain]:
                yield f'<attributes class="{domain}" mode="static">\n'
                for name, kind in keys.types[domain].items():
                    yield f'<attribute id="{key_id(domain, name)}" title={xml_attr(name)} type="{kind}"/>\n'
                yield "</attributes>\n"
        yield "<nodes>\n"
        nodes.seek(0)
        yield from nodes
        yield "</nodes>\n<edges>\n"
        edges.seek(0)
        yield from edges
    yield "</edges>\n</graph>\n</gexf>\n"


_FADED: Final = 0.35
_LAYER_STEP: Final = 200.0
_ROW_STEP: Final = 60.0
# What a node hangs on in the layout, first kind found wins: decisions' PARENT before IN_PLAN, so a
# root sits right of its plan; child plans' SPAWNED_BY before CHILD_OF.
_HANGS_ON: Final = tuple(r.value for r in (Rel.PARENT, Rel.SPAWNED_BY, Rel.CHILD_OF, Rel.IN_PLAN, Rel.FOR_PLAN, Rel.ATTEMPT_ON))


def _gexf_attributes(node: object, attrs: Mapping[str, Any], radius: Mapping[str, int]) -> dict[str, Any]:
    # GEXF's own ``label`` is the caption, as every format's is; the Neo4j label is ``kind``.
    values = node_attributes(attrs)
    reach = radius.get(str(node))
    if reach is not None:
        values["blast_radius"] = reach
    return values


def decision_size(radius: int) -> float:
    """How large GEXF draws a decision whose correction would invalidate ``radius`` decisions (its
    blast radius, itself included; none for a superseded one, which cannot be corrected): 10 for
    one that would invalidate only itself, growing with the square root of the others, so a hub
    stands out without covering the drawing.

    >>> [decision_size(r) for r in (0, 1, 2, 5, 201)]
    [10.0, 10.0, 18.0, 26.0, 100.0]
    """
    return min(100.0, 10.0 + 8.0 * math.sqrt(max(radius - 1, 0)))


def _size(attrs: Mapping[str, Any], values: Mapping[str, Any]) -> float:
    label = attrs.get("label")
    if label == Label.DECISION:
        return decision_size(int(values.get("blast_radius", 0)))
    return 16.0 if label == Label.PLAN else 6.0


def _layers(G: nx.MultiDiGraph[str], every_node: bool) -> tuple[dict[str, tuple[int, int]], dict[int, int]]:
    """Where each node drawn (``nodes_in``) is, as (layer, row): one layer right of what it hangs
    on, rows in a walk of that tree; and how many rows each layer takes."""
    drawn = dict.fromkeys(str(node) for node, _ in nodes_in(G, every_node))  # in the graph's order
    up: dict[str, str | None] = {}
    for node in drawn:
        kinds = {key: str(target) for _, target, key in G.out_edges(node, keys=True) if str(target) in drawn}
        up[node] = next((kinds[kind] for kind in _HANGS_ON if kind in kinds), None)
    below: dict[str | None, list[str]] = {}
    for node in sorted(up, key=lambda n: (_sequence_of(G.nodes[n]), n)):
        below.setdefault(up[node], []).append(node)
    spots: dict[str, tuple[int, int]] = {}
    rows: dict[int, int] = {}
    # Tops first, then whatever a cycle (which the checks report) kept from being reached.
    for top in [*below.get(None, []), *up]:
        stack = [(top, 0)]
        while stack:
            node, layer = stack.pop()
            if node in spots:
                continue
            spots[node] = (layer, rows.get(layer, 0))
            rows[layer] = rows.get(layer, 0) + 1
            stack.extend((child, layer + 1) for child in reversed(below.get(node, [])))
    return spots, rows


def _sequence_of(attrs: Mapping[str, Any]) -> tuple[int, int]:
    number = attrs.get("sequence_number", attrs.get("attempt_number"))
    return (0, number) if isinstance(number, int) else (1, 0)
