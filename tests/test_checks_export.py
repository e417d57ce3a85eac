"""Exports for viewers: every format parses back to the same nodes, typed edges and values."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import jsonschema
import networkx as nx
import pydot
import pytest

from decisiontrail.exports.document import as_text, node_attributes
from decisiontrail.exports.formats import dot as dot_format, json_graphs
from decisiontrail.exports import (
    ExportFormat,
    caption,
    cytoscape_json,
    dot,
    export,
    gexf,
    graphml,
    node_link_json,
    prov_json,
)
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph

QUOTED = "Say \"yes\" \\ or 'no'\n<b>&amp;</b> — naïve 日本語 🚀"
CONTROL = "tab\there\x07bell"  # BEL is not allowed in XML 1.0
RETURNS = "first\r\nsecond\rthird"
AT = datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)

# pydot 4 calls pyparsing's camelCase names, which pyparsing 3.3 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::pyparsing.warnings.PyparsingDeprecationWarning")


@pytest.fixture
def lineage() -> nx.MultiDiGraph[str]:
    """Two plans, parent and child, a superseded decision with its correction, a review, an attempt."""
    G = decision_graph()
    add_decision(G, "X0", plan_id="P0", decision_type="subplan_spawn", sequence_number=4, boundary=True)
    add_plan(G, "P1", description=QUOTED, owner="alice")
    add_edge(G, "P1", "P0", "CHILD_OF")
    add_edge(G, "P1", "X0", "SPAWNED_BY")
    add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0, question=RETURNS)
    add_decision(
        G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0",
        chosen_option=QUOTED, rationale=CONTROL, confidence_score=0.85,
        alternatives_considered=["queue", 'say "hi"', "a\\b", "ünïcode ✓"],
    )  # fmt: skip
    add_edge(G, "D1", "D0", "DEPENDS_ON", ordinal=0)  # parallel to D1 -PARENT-> D0
    add_decision(G, "D2", plan_id="P1", decision_type="subplan_spawn", sequence_number=2, parent="D1")
    add_plan(G, "P2", description="child plan", phase="execute")
    add_edge(G, "P2", "P1", "CHILD_OF")
    add_edge(G, "P2", "D2", "SPAWNED_BY")
    add_decision(G, "D3", plan_id="P2", decision_type="prompt_definition", sequence_number=0)
    add_decision(
        G, "D4", plan_id="P2", decision_type="implementation_choice", sequence_number=1, parent="D3",
        superseded_at=AT,
    )  # fmt: skip
    add_decision(
        G, "D5", plan_id="P2", decision_type="implementation_choice", sequence_number=2, parent="D3",
        is_correction=True, corrects_decision_id="D4", correction_reason=QUOTED,
    )  # fmt: skip
    add_edge(G, "D5", "D4", "CORRECTS")
    add_edge(G, "D4", "D5", "SUPERSEDED_BY", at=AT)
    add_review(G, "R1", plan_id="P2", status="pending", threshold=0.5, phase="execute", created_at=AT)
    add_attempt(
        G, "A1", original_decision_id="D4", corrected_decision_id="D4", correction_decision_id="D5",
        attempt_number=1, guidance=QUOTED, replay_outcome="succeeded", at=AT, invalidated_plan_ids=[],
    )  # fmt: skip
    add_edge(G, "A1", "D4", "ATTEMPT_ON")
    add_edge(G, "A1", "D5", "PRODUCED")
    return G


def typed_edges(G: nx.MultiDiGraph[Any]) -> set[tuple[str, str, str, str]]:
    return {(str(u), str(v), str(k), str(d.get("type"))) for u, v, k, d in G.edges(keys=True, data=True)}


def text_of(fmt: ExportFormat, G: nx.MultiDiGraph[str]) -> str:
    chunks = list(export(G, fmt))
    assert all(chunk.endswith("\n") for chunk in chunks)
    return "".join(chunks)


def test_the_fixture_has_parallel_edges_of_different_types(lineage: nx.MultiDiGraph[str]) -> None:
    assert set(lineage["D1"]["D0"]) == {"PARENT", "DEPENDS_ON"}


# GraphML


# Written as text, or changed on the way (an XML-illegal control character); checked one by one below.
TEXT_IN_GRAPHML = {"created_at", "superseded_at", "at", "alternatives_considered", "invalidated_plan_ids", "rationale"}


def read_graphml(text: str) -> nx.MultiDiGraph[Any]:
    G = nx.read_graphml(io.BytesIO(text.encode()), force_multigraph=True)
    assert isinstance(G, nx.MultiDiGraph)
    return G


# Each character a GraphML writer must not put into text or an attribute value as it is: markup,
# what XML would read back changed (a return, in an attribute a newline or a tab), and what is
# outside XML 1.0 (C0 controls but tab, newline and return; a lone surrogate; U+FFFE, U+FFFF).
NOT_AS_IS = '&<>"\n\r\t' + "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r") + "\ud800\udfff\ufffe\uffff"
OUTSIDE_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@pytest.mark.parametrize("char", list(NOT_AS_IS), ids=lambda c: f"U+{ord(c):04X}")
def test_graphml_writes_each_character_xml_cannot_hold_as_is_so_it_reads_back(char: str) -> None:
    # One such character in an otherwise plain value, in a node's text and in its id: the writer
    # notices it (most values have none and are written as they are) and escapes or replaces it.
    G = decision_graph()
    node = f"D{char}1"
    add_decision(G, node, plan_id="P1", decision_type="prompt_definition", sequence_number=0, rationale=f"a{char}b")

    back = read_graphml("".join(graphml(G)))

    expected = OUTSIDE_XML.sub("\ufffd", node)
    assert set(back.nodes) == {expected, "P1"}
    assert back.nodes[expected]["rationale"] == OUTSIDE_XML.sub("\ufffd", f"a{char}b")


def test_graphml_reads_back_with_the_same_nodes_edges_and_typed_values(lineage: nx.MultiDiGraph[str]) -> None:
    back = read_graphml(text_of(ExportFormat.GRAPHML, lineage))

    assert set(back.nodes) == set(lineage.nodes)
    assert typed_edges(back) == typed_edges(lineage)
    for node, attrs in lineage.nodes(data=True):
        read, written = back.nodes[node], node_attributes(attrs)
        assert set(read) == set(written) | {"label"} and "status" not in read
        assert read["label"] == caption(node, attrs).replace("\x07", "\ufffd") and read["kind"] == attrs["label"]
        for name in set(written) - TEXT_IN_GRAPHML:
            assert read[name] == written[name] and type(read[name]) is type(written[name]), (node, name)
    d1, d4 = back.nodes["D1"], back.nodes["D4"]
    assert d1["chosen_option"] == QUOTED
    assert d1["rationale"] == CONTROL.replace("\x07", "\ufffd")
    assert back.nodes["D0"]["question"] == RETURNS
    assert json.loads(d1["alternatives_considered"]) == lineage.nodes["D1"]["alternatives_considered"]
    assert json.loads(back.nodes["A1"]["invalidated_plan_ids"]) == []
    assert d1["confidence_score"] == 0.85 and d1["sequence_number"] == 1 and d1["is_correction"] is False
    assert datetime.fromisoformat(d4["superseded_at"]) == AT
    assert datetime.fromisoformat(d1["created_at"]) == lineage.nodes["D1"]["created_at"]
    assert back.nodes["X0"]["boundary"] is True and "boundary" not in back.nodes["D1"]
    assert (d4["superseded"], d4["decision_status"], d1["superseded"], d1["decision_status"]) == (
        True,
        "superseded",
        False,
        "current",
    )
    assert (back.nodes["P1"]["plan_status"], back.nodes["P1"]["invalidated"], back.nodes["R1"]["review_status"]) == (
        "active", False, "pending",
    )  # fmt: skip
    assert back.nodes["A1"]["replay_outcome"] == "succeeded"
    assert back.edges["D1", "D0", "DEPENDS_ON"]["ordinal"] == 0
    assert datetime.fromisoformat(back.edges["D4", "D5", "SUPERSEDED_BY"]["at"]) == AT


def test_graphml_types_a_name_by_all_its_values() -> None:
    G = decision_graph()
    G.add_node("a", n=1, mixed=1, flag=True)
    G.add_node("b", n=2.5, mixed="x", flag=False)
    G.graph["title"] = "Release <1>"

    back = read_graphml("".join(graphml(G)))

    assert back.nodes["a"] == {"n": 1.0, "mixed": "1", "flag": True, "label": "node a"}
    assert back.nodes["b"] == {"n": 2.5, "mixed": "x", "flag": False, "label": "node b"}
    assert back.graph["title"] == "Release <1>"


def test_graphml_leaves_edge_ids_out_so_viewers_need_not_make_types_unique(lineage: nx.MultiDiGraph[str]) -> None:
    assert "<edge " in (text := "".join(graphml(lineage)))
    assert not re.search(r"<edge [^>]*\bid=", text)


# DOT


def unquote(text: str) -> str:
    """A DOT string as pydot hands it over, quotes and escapes still in, decoded."""
    inner = text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m[1], m[1]), inner, flags=re.S)


def dot_nodes(graph: pydot.Dot | pydot.Subgraph) -> Iterator[tuple[str, dict[str, str], str]]:
    """Every node statement with its decoded attributes and the subgraph it is in."""
    for node in graph.get_nodes():
        attrs = {unquote(k): unquote(str(v)) for k, v in node.get_attributes().items()}
        yield unquote(node.get_name()), attrs, unquote(str(graph.get_name()))
    for sub in graph.get_subgraphs():
        yield from dot_nodes(sub)


def read_dot(text: str) -> tuple[dict[str, dict[str, str]], dict[str, str], set[tuple[str, str, str, str]]]:
    parsed = pydot.graph_from_dot_data(text)
    assert parsed is not None and len(parsed) == 1
    graph = parsed[0]
    assert graph.get_type() == "digraph"
    statements = list(dot_nodes(graph))
    nodes = {name: attrs for name, attrs, _ in statements}
    assert len(nodes) == len(statements), "each node is declared once"
    edges = set()
    for edge in graph.get_edges():
        attrs = {k: unquote(str(v)) for k, v in edge.get_attributes().items()}
        assert attrs["label"] == attrs["type"]
        edges.add((unquote(str(edge.get_source())), unquote(str(edge.get_destination())), attrs["key"], attrs["type"]))
    return nodes, {name: where for name, _, where in statements}, edges


def test_dot_parses_back_with_the_same_nodes_edges_and_values(lineage: nx.MultiDiGraph[str]) -> None:
    nodes, _, edges = read_dot(text_of(ExportFormat.DOT, lineage))

    assert set(nodes) == set(lineage.nodes)
    assert edges == typed_edges(lineage)
    for node, attrs in lineage.nodes(data=True):
        read, written = nodes[node], node_attributes(attrs)
        assert read["kind"] == attrs["label"] and "status" not in read
        # The caption, wrapped between its words in lines of at most 30 characters.
        lines = read["label"].split("\n")
        assert " ".join(lines) == caption(node, attrs).replace("\x07", "") and max(map(len, lines)) <= 30
        for name in ("decision_status", "superseded", "plan_status", "review_status", "replay_outcome", "plan_id"):
            assert read.get(name) == (as_text(written[name]) if name in written else None), (node, name)
    d1 = nodes["D1"]
    assert d1["chosen_option"] == QUOTED
    assert d1["rationale"] == CONTROL.replace("\x07", "")
    assert nodes["D0"]["question"] == RETURNS
    assert json.loads(d1["alternatives_considered"]) == lineage.nodes["D1"]["alternatives_considered"]
    assert (d1["sequence_number"], d1["is_correction"], float(d1["confidence_score"])) == ("1", "false", 0.85)
    assert datetime.fromisoformat(nodes["D4"]["superseded_at"]) == AT
    assert nodes["X0"]["boundary"] == "true"


def test_dot_draws_plans_as_clusters_and_superseded_decisions_faded(lineage: nx.MultiDiGraph[str]) -> None:
    nodes, where, _ = read_dot("".join(dot(lineage)))

    assert {n: where[n] for n in ("P1", "D0", "D1", "D2", "P2", "D3", "D4", "D5", "R1", "X0", "P0")} == {
        **dict.fromkeys(("P1", "D0", "D1", "D2"), "cluster_P1"),
        **dict.fromkeys(("P2", "D3", "D4", "D5", "R1"), "cluster_P2"),
        **dict.fromkeys(("X0", "P0"), "cluster_P0"),
    }
    assert where["A1"] == "decisions"
    assert (nodes["P1"]["shape"], nodes["D1"]["shape"], nodes["R1"]["shape"]) == ("box", "ellipse", "note")
    # Filled in the type's colour; the superseded faded (alpha 0x59) and dashed, the boundary dotted.
    assert (nodes["D4"]["style"], nodes["D4"]["color"], nodes["D4"]["fillcolor"]) == ("filled,dashed", "gray", "#ff7f0e59")
    assert (nodes["D5"]["style"], nodes["D5"]["fillcolor"], "color" not in nodes["D5"]) == ("filled", "#ff7f0e", True)
    assert nodes["X0"]["style"] == "filled,dotted"


# What DOT's quoted strings spell with a backslash, and the controls the writer leaves out.
DOT_SPECIAL = '\\"\n\r' + "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r") + "\x7f"


@pytest.mark.parametrize("char", list(DOT_SPECIAL), ids=lambda c: f"U+{ord(c):04X}")
def test_dot_writes_each_character_it_escapes_or_drops_so_it_parses_back(char: str) -> None:
    # One such character in an otherwise plain value and id: the writer notices it (most values
    # have none and are written as they are) and escapes it, or leaves a control out.
    G = decision_graph()
    add_decision(G, f"D{char}1", plan_id="P1", decision_type="prompt_definition", sequence_number=0, rationale=f"a{char}b")
    kept = char if char in '\\"\n\r' else ""

    nodes, _, _ = read_dot("".join(dot(G)))

    assert set(nodes) == {f"D{kept}1", "P1"}
    assert nodes[f"D{kept}1"]["rationale"] == f"a{kept}b"


def test_dot_quotes_ids_that_are_keywords_or_numbers() -> None:
    G = decision_graph()
    add_decision(G, "node", plan_id="graph", decision_type="prompt_definition", sequence_number=0)
    G.add_edge("node", "01", key="PARENT", type="PARENT")

    nodes, where, edges = read_dot("".join(dot(G)))

    assert set(nodes) == {"node", "graph", "01"} and where["node"] == "cluster_graph"
    assert edges == {("node", "graph", "IN_PLAN", "IN_PLAN"), ("node", "01", "PARENT", "PARENT")}


# Cytoscape.js

CYTOSCAPE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["data", "directed", "multigraph", "elements"],
    "properties": {
        "data": {"type": "object"},
        "directed": {"const": True},
        "multigraph": {"const": True},
        "elements": {
            "type": "object",
            "required": ["nodes", "edges"],
            "additionalProperties": False,
            "properties": {
                "nodes": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                "edges": {"type": "array", "items": {"$ref": "#/$defs/edge"}},
            },
        },
    },
    "$defs": {
        "node": {
            "type": "object",
            "required": ["data", "position", "classes"],
            "properties": {
                "position": {
                    "type": "object",
                    "required": ["x", "y"],
                    "additionalProperties": False,
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                },
                "classes": {"type": "string", "pattern": "^[a-z][a-z0-9_-]*( [a-z][a-z0-9_-]*)*$"},
                "data": {
                    "type": "object",
                    "required": ["id", "value", "name", "label", "kind"],
                    "not": {"required": ["status"]},
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "value": {"type": "string"},
                        "name": {"type": "string"},
                        "label": {"type": "string", "not": {"enum": ["Decision", "Plan", "Review", "CorrectionAttempt"]}},
                        "kind": {"enum": ["Decision", "Plan", "Review", "CorrectionAttempt"]},
                        "parent": {"type": "string"},
                        "superseded": {"type": "boolean"},
                        "invalidated": {"type": "boolean"},
                        "boundary": {"type": "boolean"},
                        "sequence_number": {"type": "integer"},
                        "alternatives_considered": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
        },
        "edge": {
            "type": "object",
            "required": ["data"],
            "properties": {
                "data": {
                    "type": "object",
                    "required": ["id", "source", "target", "key", "type"],
                    "properties": {
                        "id": {"type": "string", "minLength": 1},
                        "source": {"type": "string"},
                        "target": {"type": "string"},
                        "key": {"type": "string"},
                        "type": {"type": "string"},
                    },
                }
            },
        },
    },
}


def read_cytoscape(text: str) -> tuple[dict[str, Any], nx.MultiDiGraph[Any]]:
    document = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(CYTOSCAPE_SCHEMA)
    jsonschema.Draft202012Validator(CYTOSCAPE_SCHEMA).validate(document)
    ids = [element["data"]["id"] for group in ("nodes", "edges") for element in document["elements"][group]]
    assert len(ids) == len(set(ids)), "Cytoscape.js needs every element id unique"
    G = nx.cytoscape_graph(document)
    assert isinstance(G, nx.MultiDiGraph)
    return document, G


def test_cytoscape_json_is_valid_and_reads_back_with_the_same_nodes_edges_and_values(
    lineage: nx.MultiDiGraph[str],
) -> None:
    document, back = read_cytoscape(text_of(ExportFormat.CYTOSCAPE, lineage))

    assert set(back.nodes) == set(lineage.nodes)
    assert typed_edges(back) == typed_edges(lineage)
    for node, attrs in lineage.nodes(data=True):
        read = back.nodes[node]
        assert read["name"] == read["label"] == caption(node, attrs)
        assert {k: v for k, v in read.items() if k not in ("id", "value", "name", "label", "parent")} == as_json(
            node_attributes(attrs)
        )
    # Each decision and review in its plan's compound node; the attempt in the plan of the decision it is on.
    assert {n: back.nodes[n].get("parent") for n in lineage} == {
        **dict.fromkeys(("D0", "D1", "D2"), "P1"), **dict.fromkeys(("D3", "D4", "D5", "R1", "A1"), "P2"),
        "X0": "P0", "P0": None, "P1": None, "P2": None,
    }  # fmt: skip
    classes = {e["data"]["id"]: e["classes"] for e in document["elements"]["nodes"]}
    assert (classes["D4"], classes["D5"], classes["P1"]) == (
        "decision t-implementation_choice superseded", "decision t-implementation_choice correction", "plan",
    )  # fmt: skip
    assert (classes["R1"], classes["A1"], classes["X0"]) == (
        "review review-pending", "attempt replay-succeeded", "decision t-subplan_spawn boundary",
    )  # fmt: skip
    assert back.nodes["D1"]["chosen_option"] == QUOTED and back.nodes["D1"]["rationale"] == CONTROL
    assert back.edges["D1", "D0", "DEPENDS_ON"]["ordinal"] == 0
    edge_ids = {e["data"]["id"] for e in document["elements"]["edges"]}
    assert {"D1-PARENT-D0", "D1-DEPENDS_ON-D0"} <= edge_ids


def as_json(attrs: dict[str, Any]) -> dict[str, Any]:
    """What a JSON export should hold for these attributes: datetimes as ISO 8601, the rest as is."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in attrs.items()}


# node-link


def read_node_link(text: str) -> nx.MultiDiGraph[Any]:
    G = nx.node_link_graph(json.loads(text), edges="edges")
    assert isinstance(G, nx.MultiDiGraph)
    return G


def test_node_link_json_reads_back_with_the_same_nodes_edges_and_values(lineage: nx.MultiDiGraph[str]) -> None:
    back = read_node_link(text_of(ExportFormat.NODE_LINK, lineage))

    assert set(back.nodes) == set(lineage.nodes)
    assert typed_edges(back) == typed_edges(lineage)
    for node, attrs in lineage.nodes(data=True):
        assert back.nodes[node] == {**as_json(node_attributes(attrs)), "label": caption(node, attrs)}
        assert "status" not in back.nodes[node]
    for u, v, k, attrs in lineage.edges(keys=True, data=True):
        assert back.edges[u, v, k] == as_json(attrs)


def test_json_exports_write_infinite_and_missing_numbers_as_valid_json() -> None:
    G = decision_graph()
    G.add_node("a", score=float("inf"), gap=None, when=AT, tags=("x", "y"))

    for writer in (node_link_json, cytoscape_json):
        text = "".join(writer(G))
        assert "Infinity" not in text and "null" not in text
    assert read_node_link("".join(node_link_json(G))).nodes["a"] == {
        "score": "INF", "when": AT.isoformat(), "tags": ["x", "y"], "label": "node a",
    }  # fmt: skip


# every format


# PROV-JSON is provenance, not a drawing of the graph: tests/test_export_interop.py reads it back with prov.
DRAWINGS = [fmt for fmt in ExportFormat if fmt is not ExportFormat.PROV_JSON]


def read_back(fmt: ExportFormat, text: str) -> tuple[set[str], set[tuple[str, str, str, str]]]:
    """The node ids and typed edges a reader of ``fmt`` sees in ``text``."""
    if fmt is ExportFormat.DOT:
        nodes, _, edges = read_dot(text)
        return set(nodes), edges
    if fmt is ExportFormat.GEXF:  # edge ids are ``<source>-<type>-<target>``; the label is the type
        drawn = nx.read_gexf(io.BytesIO(text.encode()))
        return set(drawn.nodes), {(str(u), str(v), d["label"], d["type"]) for u, v, d in drawn.edges(data=True)}
    reader = {ExportFormat.GRAPHML: read_graphml, ExportFormat.NODE_LINK: read_node_link}.get(fmt)
    G = reader(text) if reader else read_cytoscape(text)[1]
    return set(G.nodes), typed_edges(G)


@pytest.mark.parametrize("fmt", DRAWINGS)
def test_an_empty_graph_exports_a_valid_empty_document(fmt: ExportFormat) -> None:
    assert read_back(fmt, "".join(export(decision_graph(), fmt))) == (set(), set())


WRITERS = {"graphml": graphml, "dot": dot, "cyjs": cytoscape_json, "json": node_link_json, "gexf": gexf, "prov.json": prov_json}


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_a_large_graph_streams_in_whole_line_chunks(fmt: ExportFormat) -> None:
    G = decision_graph()
    add_plan(G, "P", description="a long plan")
    for n in range(1999):
        parent = f"D{n - 1}" if n else None
        add_decision(G, f"D{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent=parent)

    chunks = list(export(G, fmt))

    assert len(chunks) > 1 and all(chunk.endswith("\n") for chunk in chunks)
    assert "".join(chunks) == "".join(WRITERS[fmt](G))
    # pydot needs minutes for a graph this size; the small graphs above parse it
    if fmt in DRAWINGS and fmt is not ExportFormat.DOT:
        assert read_back(fmt, "".join(chunks)) == ({str(n) for n in G}, typed_edges(G))


@pytest.mark.parametrize("fmt", [ExportFormat.DOT, ExportFormat.CYTOSCAPE, ExportFormat.NODE_LINK])
def test_a_format_that_declares_nothing_first_sends_its_first_chunk_before_it_has_made_every_node(
    fmt: ExportFormat, monkeypatch: pytest.MonkeyPatch
) -> None:
    G = decision_graph()
    add_plan(G, "P", description="a long plan")
    for n in range(1999):
        add_decision(G, f"D{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n)
    made: list[object] = []

    def counted(node: object, attrs: Any) -> str:
        made.append(node)
        return caption(node, attrs)

    for writer in (dot_format, json_graphs):
        monkeypatch.setattr(writer, "caption", counted)
    chunks = export(G, fmt)

    first = next(chunks)
    assert first and 0 < len(made) < len(G) // 2  # streamed as made, not made whole first
    assert len(first) + sum(map(len, chunks)) > 100_000 and set(made) == set(G)


def test_export_takes_a_format_by_name_and_refuses_an_unknown_one(lineage: nx.MultiDiGraph[str]) -> None:
    assert "".join(export(lineage, "graphml")) == "".join(export(lineage, ExportFormat.GRAPHML))
    with pytest.raises(ValueError, match="svg"):
        list(export(lineage, "svg"))


def test_formats_name_their_media_type_and_say_what_reads_them() -> None:
    assert {fmt.value: fmt.media_type for fmt in ExportFormat} == {
        "graphml": "application/graphml+xml",
        "dot": "text/vnd.graphviz",
        "cyjs": "application/json",
        "json": "application/json",
        "prov.json": "application/json",
        "gexf": "application/gexf+xml",
    }
    assert all(fmt.description for fmt in ExportFormat)
