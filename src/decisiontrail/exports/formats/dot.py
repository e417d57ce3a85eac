"""Graphviz DOT: one cluster per plan, nodes filled in their decision type's colour, the caption,
wrapped, as what Graphviz draws; one statement a line."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any, Final

import networkx as nx

from decisiontrail.checks.model import Label, Rel
from decisiontrail.exports.document import Part, as_text, caption, colour, edges_in, node_attributes, nodes_in, present

__all__ = ["assemble", "dot", "make_part"]


def dot(G: nx.MultiDiGraph[str]) -> Iterator[str]:
    """Graphviz DOT with one cluster per plan, one statement a line.

    >>> from decisiontrail.checks.model import add_decision, decision_graph
    >>> G = decision_graph()
    >>> _ = add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    >>> [line.strip() for line in dot(G) if "->" in line]
    ['"D0" -> "P1" [key="IN_PLAN", type="IN_PLAN", label="IN_PLAN", style="invis"];']
    """
    return assemble(G.graph, [make_part(G, True)])


def make_part(G: nx.MultiDiGraph[str], every_node: bool) -> Part:
    """``G``'s part of a DOT document: a cluster per plan, then its loose nodes and its edges (with ``every_node``, its boundary nodes too)."""
    return Part(lines=_dot_group(G, every_node))


def assemble(graph: Mapping[str, Any], parts: Iterable[Part]) -> Iterator[str]:
    """The DOT document of ``parts``: the graph's attributes, then every part's statements."""
    yield "digraph decisions {\n"
    yield '  rankdir="BT";\n'
    for name, value in present(graph).items():
        yield f"  {_dot_name(name)}={_dot_id(as_text(value))};\n"
    for part in parts:
        yield from part.lines
    yield "}\n"


def _dot_group(G: nx.MultiDiGraph[str], every_node: bool) -> Iterator[str]:
    nodes = dict(nodes_in(G, every_node))
    plans = {str(n): n for n, attrs in nodes.items() if attrs.get("label") == Label.PLAN}
    members: dict[str, list[Any]] = {plan_id: [] for plan_id in plans}
    loose: list[Any] = []
    for node, attrs in nodes.items():
        plan_id = str(attrs.get("plan_id"))
        if attrs.get("label") in (Label.DECISION, Label.REVIEW) and plan_id in members:
            members[plan_id].append(node)
        elif str(node) not in plans:
            loose.append(node)
    for plan_id, plan in plans.items():
        attrs = nodes[plan]
        yield f"  subgraph {_dot_id('cluster_' + plan_id)} {{\n"
        yield f"    label={_dot_id(wrapped(caption(plan, attrs), _CLUSTER_LINE))};\n"
        if attrs.get("status") == "invalidated":
            yield '    style="dashed";\n    color="gray";\n'
        for node in (plan, *members[plan_id]):
            yield f"    {_dot_node(node, nodes[node])}\n"
        yield "  }\n"
    for node in loose:
        yield f"  {_dot_node(node, nodes[node])}\n"
    for source, target, key, attrs in edges_in(G, every_node):
        look = {"key": key, "type": attrs["type"], "label": key}
        if key in _DRAWN_AS_CLUSTERS and G.nodes[target].get("label") == Label.PLAN:
            # The plan's cluster already shows membership; drawn, these edges would bury the tree.
            look |= {"style": "invis"}
        rest = {name: value for name, value in attrs.items() if name not in look}
        yield f"  {_dot_id(source)} -> {_dot_id(target)} {_dot_attrs(look | rest)};\n"


_DRAWN_AS_CLUSTERS: Final = {Rel.IN_PLAN.value, Rel.FOR_PLAN.value}


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


_DOT_SPECIAL: Final = re.compile('[\\\\"\x00-\x08\x0a-\x1f\x7f]')
"""What ``_DOT_ESCAPES`` changes: most ids and values hold none of it, and one search tells (the
translation, a lookup per character, was run on every value)."""


def _dot_id(text: str) -> str:
    # Always quoted, so an id like ``node`` or ``01J...`` is never read as a keyword or a number.
    if _DOT_SPECIAL.search(text) is None:
        return '"' + text + '"'
    return '"' + text.translate(_DOT_ESCAPES) + '"'


@lru_cache(maxsize=1024)
def _dot_name(name: str) -> str:
    # An attribute's name, once per name rather than once per value (the names repeat on every node).
    return name if _DOT_NAME.fullmatch(name) and name.lower() not in _DOT_KEYWORDS else _dot_id(name)


def _dot_attrs(attrs: Mapping[str, Any]) -> str:
    return (
        "["
        + ", ".join(
            f"{_dot_name(name)}={_dot_id(value if type(value) is str else as_text(value))}" for name, value in attrs.items()
        )
        + "]"
    )


def _dot_node(node: Any, attrs: Mapping[str, Any]) -> str:
    label, status, boundary = attrs.get("label"), attrs.get("status"), attrs.get("boundary")
    rgb = colour(attrs)
    faded = status in ("superseded", "invalidated") or bool(boundary)
    look: dict[str, Any] = {
        "label": wrapped(caption(node, attrs), _NODE_LINE),
        "shape": _DOT_SHAPES.get(str(label), "ellipse"),
        "style": "filled,dotted" if boundary else "filled,dashed" if faded else "filled",
        "fillcolor": "#{:02x}{:02x}{:02x}".format(*rgb) + (_FADED if faded else ""),
        "fontcolor": _ink(rgb, faded),
    }
    if faded:
        look["color"] = "gray"
    rest = {name: value for name, value in node_attributes(attrs).items() if name not in look}
    return f"{_dot_id(str(node))} {_dot_attrs(look | rest)};"


_NODE_LINE: Final = 30
_CLUSTER_LINE: Final = 48
_FADED: Final = "59"  # the alpha of a superseded decision's fill (0.35, as in GEXF), an invalidated plan's, a boundary node's


def wrapped(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken between words where it can be.

    >>> wrapped("implementation_choice #12: Use a queue for uploads", 30)
    'implementation_choice #12: Use\\na queue for uploads'
    """
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def _ink(rgb: tuple[int, int, int], faded: bool) -> str:
    """The text colour that reads best on a fill: black or white by its luminance (WCAG's), dark gray on a faded one."""
    if faded:
        return "#404040"
    linear = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return "white" if (1.05 / (luminance + 0.05)) > ((luminance + 0.05) / 0.05) else "black"
