"""The PROV-JSON and GEXF exports, read back by `prov` and `networkx.read_gexf`: over literal graphs,
over HTTP from the store, and from the CLI."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import networkx as nx
import pytest
from prov.model import (
    PROV,
    ProvActivity,
    ProvAssociation,
    ProvCommunication,
    ProvDerivation,
    ProvDocument,
    ProvEntity,
    ProvGeneration,
    ProvInvalidation,
    ProvRecord,
)

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.exports import PALETTE, ExportFormat, caption, export
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph
from decisiontrail.cli import build_parser, main
from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services import correction as correction_service
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.access import LOCAL
from factories import decision as a_decision

AT = datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=UTC)
NS = "https://decisiontrail.dev/ns#"


@pytest.fixture
def corrected() -> nx.MultiDiGraph[str]:
    """A plan owned by alice spawning a child plan (no owner), dependencies within and across the
    plans, and in the child a correction that superseded a decision and the one below it."""
    G = decision_graph()
    add_plan(G, "P1", description="parent plan", owner="alice")
    add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    add_decision(G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0", confidence_score=0.9)
    add_decision(G, "D2", plan_id="P1", decision_type="resource_selection", sequence_number=2, parent="D1")
    add_edge(G, "D2", "D1", "DEPENDS_ON", ordinal=0)  # parallel to D2 -PARENT-> D1
    add_decision(G, "D3", plan_id="P1", decision_type="subplan_spawn", sequence_number=3, parent="D1")
    add_edge(G, "D3", "D2", "DEPENDS_ON", ordinal=0)
    add_plan(G, "P2", description="child plan", phase="execute")
    add_edge(G, "P2", "P1", "CHILD_OF")
    add_edge(G, "P2", "D3", "SPAWNED_BY")
    add_decision(G, "E0", plan_id="P2", decision_type="prompt_definition", sequence_number=0)
    add_decision(G, "E1", plan_id="P2", decision_type="implementation_choice", sequence_number=1, parent="E0", superseded_at=AT)
    add_edge(G, "E1", "D2", "DEPENDS_ON", ordinal=0)
    add_decision(G, "E2", plan_id="P2", decision_type="tool_invocation", sequence_number=2, parent="E1", superseded_at=AT)
    add_decision(
        G, "E3", plan_id="P2", decision_type="implementation_choice", sequence_number=3, parent="E0",
        is_correction=True, corrects_decision_id="E1", correction_reason="too slow",
    )  # fmt: skip
    add_edge(G, "E3", "E1", "CORRECTS")
    add_edge(G, "E1", "E3", "SUPERSEDED_BY", at=AT)
    add_edge(G, "E2", "E3", "SUPERSEDED_BY", at=AT)
    add_review(G, "R1", plan_id="P2", status="pending", threshold=0.5)
    add_attempt(G, "A1", attempt_number=1, replay_outcome="replayed")
    add_edge(G, "A1", "E1", "ATTEMPT_ON")
    add_edge(G, "A1", "E3", "PRODUCED")
    return G


def edges_of_type(G: nx.MultiDiGraph[str], rel: str) -> set[tuple[str, str]]:
    return {(u, v) for u, v, k in G.edges(keys=True) if k == rel}


def text_of(fmt: ExportFormat, G: nx.MultiDiGraph[str]) -> str:
    chunks = list(export(G, fmt))
    assert all(chunk.endswith("\n") for chunk in chunks)
    return "".join(chunks)


# PROV-JSON, read back by the prov package


def read_prov(text: str) -> ProvDocument:
    document = ProvDocument.deserialize(content=text, format="json")
    # prov has no validator; PROV-N is its strictest syntax, so the document must survive a round trip through it.
    assert ProvDocument.deserialize(content=document.get_provn(), format="provn") == document
    return document


def local(name: object, kind: str) -> str:
    """The id in a ``dt:<kind>/<id>`` qualified name (checked to be one)."""
    text = str(name)
    assert text.startswith(f"dt:{kind}/"), text
    return text.removeprefix(f"dt:{kind}/")


def formal(document: ProvDocument, kind: type[ProvRecord]) -> list[dict[str, Any]]:
    """The formal attributes of every record of a kind, by their names without ``prov:``, plus the asserted types."""
    return [
        {str(name).removeprefix("prov:"): value for name, value in record.formal_attributes}
        | {"types": {str(t) for t in record.get_asserted_types()}}
        for record in document.get_records(kind)
    ]


def derivations(document: ProvDocument, *, revision: bool) -> set[tuple[str, str]]:
    return {
        (local(d["generatedEntity"], "decision"), local(d["usedEntity"], "decision"))
        for d in formal(document, ProvDerivation)
        if ("prov:Revision" in d["types"]) == revision
    }


def decision_invalidations(document: ProvDocument) -> dict[str, tuple[str | None, datetime]]:
    """Each invalidated decision: the decision whose activity invalidated it, and when."""
    return {
        local(i["entity"], "decision"): (local(i["activity"], "deciding") if i["activity"] else None, i["time"])
        for i in formal(document, ProvInvalidation)
        if str(i["entity"]).startswith("dt:decision/")
    }


def test_prov_json_maps_decisions_dependencies_corrections_and_supersession(corrected: nx.MultiDiGraph[str]) -> None:
    document = read_prov(text_of(ExportFormat.PROV_JSON, corrected))

    assert [ns.uri for ns in document.namespaces if ns.prefix == "dt"] == [NS]
    entities = {str(e.identifier): e for e in document.get_records(ProvEntity)}
    decision_ids = {n for n, d in corrected.nodes(data=True) if d["label"] == "Decision"}
    assert {local(e, "decision") for e in entities if e.startswith("dt:decision/")} == decision_ids
    assert {local(e, "plan") for e in entities if e.startswith("dt:plan/")} == {"P1", "P2"}
    assert all(PROV["Plan"] in entities[f"dt:plan/{p}"].get_asserted_types() for p in ("P1", "P2"))
    d1 = {str(name): value for name, value in entities["dt:decision/D1"].attributes}
    assert d1["prov:label"] == caption("D1", corrected.nodes["D1"])
    assert (d1["dt:decision_type"], d1["dt:confidence_score"], d1["dt:plan_id"], d1["dt:decision_status"], d1["dt:superseded"]) == (
        "strategy_choice", 0.9, "P1", "current", False,
    )  # fmt: skip
    e1 = {str(name): value for name, value in entities["dt:decision/E1"].attributes}
    assert (e1["dt:decision_status"], e1["dt:superseded"]) == ("superseded", True) and "dt:status" not in e1
    p2 = {str(name): value for name, value in entities["dt:plan/P2"].attributes}
    assert (p2["dt:plan_status"], p2["dt:invalidated"]) == ("active", False)
    assert d1["dt:question"] == corrected.nodes["D1"]["question"] and d1["dt:chosen_option"] == "option 1"

    assert derivations(document, revision=False) == edges_of_type(corrected, "DEPENDS_ON")
    assert derivations(document, revision=True) == edges_of_type(corrected, "CORRECTS") == {("E3", "E1")}
    # Both superseded decisions, the corrected one and the one below it, by the correction's activity.
    assert decision_invalidations(document) == {"E1": ("E3", AT), "E2": ("E3", AT)}


def test_prov_json_has_one_activity_per_decision_with_its_agent_and_the_tree_as_communication(
    corrected: nx.MultiDiGraph[str],
) -> None:
    document = read_prov(text_of(ExportFormat.PROV_JSON, corrected))

    decision_ids = {n for n, d in corrected.nodes(data=True) if d["label"] == "Decision"}
    activities = {local(a.identifier, "deciding"): a for a in document.get_records(ProvActivity)}
    assert set(activities) == decision_ids
    assert activities["D1"].get_startTime() == corrected.nodes["D1"]["created_at"]
    generated = {(str(g["entity"]), str(g["activity"])) for g in formal(document, ProvGeneration)}
    assert generated == {(f"dt:decision/{d}", f"dt:deciding/{d}") for d in decision_ids} | {("dt:plan/P2", "dt:deciding/D3")}
    associations = {
        local(a["activity"], "deciding"): (str(a["agent"]), str(a["plan"])) for a in formal(document, ProvAssociation)
    }
    # P1's owner is its agent; P2 has no owner, so an agent stands for whoever acted in it.
    assert associations == {
        d: ("dt:agent/alice", "dt:plan/P1") if corrected.nodes[d]["plan_id"] == "P1" else ("dt:agent/plan/P2", "dt:plan/P2")
        for d in decision_ids
    }
    informed = {
        (local(c["informed"], "deciding"), local(c["informant"], "deciding")) for c in formal(document, ProvCommunication)
    }
    assert informed == edges_of_type(corrected, "PARENT")


def test_prov_json_ids_escape_what_a_qualified_name_cannot_hold() -> None:
    G = decision_graph()
    add_plan(G, "P1", owner="ana maría@example.org")
    add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0, question='say "hi"\n')

    document = read_prov(text_of(ExportFormat.PROV_JSON, G))

    ((_, agent, _),) = [(a["activity"], str(a["agent"]), a["plan"]) for a in formal(document, ProvAssociation)]
    assert agent == "dt:agent/ana%20mar%C3%ADa%40example%2Eorg"
    (entity,) = [e for e in document.get_records(ProvEntity) if str(e.identifier) == "dt:decision/D0"]
    assert dict((str(k), v) for k, v in entity.attributes)["dt:question"] == 'say "hi"\n'


def test_prov_json_of_an_empty_graph_is_an_empty_document() -> None:
    assert not read_prov(text_of(ExportFormat.PROV_JSON, decision_graph())).get_records()


# GEXF, read back by networkx


def read_gexf(text: str) -> nx.MultiDiGraph[str]:
    G = nx.read_gexf(io.BytesIO(text.encode()))
    return G if G.is_multigraph() else nx.MultiDiGraph(G)


def test_gexf_reads_back_with_the_same_nodes_edges_and_typed_attributes(corrected: nx.MultiDiGraph[str]) -> None:
    drawn = read_gexf(text_of(ExportFormat.GEXF, corrected))

    assert set(drawn.nodes) == set(corrected.nodes)
    assert drawn.number_of_edges() == corrected.number_of_edges()
    assert {(u, v, d["type"]) for u, v, d in drawn.edges(data=True)} == {(u, v, k) for u, v, k in corrected.edges(keys=True)}
    assert {d["label"] for _, _, d in drawn.edges(data=True)} == {k for _, _, k in corrected.edges(keys=True)}
    d1 = drawn.nodes["D1"]
    assert d1["label"] == caption("D1", corrected.nodes["D1"]) and d1["kind"] == "Decision"
    assert (d1["decision_status"], d1["superseded"], drawn.nodes["E1"]["superseded"]) == ("current", False, True)
    assert drawn.nodes["R1"]["review_status"] == "pending" and not any("status" in a for _, a in drawn.nodes(data=True))
    assert (d1["sequence_number"], d1["confidence_score"], d1["is_correction"]) == (1, 0.9, False)
    assert drawn.nodes["P1"]["owner"] == "alice" and drawn.nodes["A1"]["kind"] == "CorrectionAttempt"


def test_gexf_colours_decisions_by_type_and_fades_the_superseded(corrected: nx.MultiDiGraph[str]) -> None:
    drawn = read_gexf(text_of(ExportFormat.GEXF, corrected))

    # One colour per decision type, so the colour tells the type.
    assert set(PALETTE) >= set(DecisionType) and len({PALETTE[t] for t in DecisionType}) == len(DecisionType)
    assert PALETTE[DecisionType.STRATEGY_CHOICE] == (44, 160, 44)  # as docs/checks.md lists it
    for node, attrs in corrected.nodes(data=True):
        colour = drawn.nodes[node]["viz"]["color"]
        kind = attrs["decision_type"] if attrs["label"] == "Decision" else attrs["label"]
        assert (colour["r"], colour["g"], colour["b"]) == PALETTE[kind], node
        faded = attrs["status"] in ("superseded", "invalidated")
        assert colour["a"] == (0.35 if faded else 1.0), node
    assert drawn.nodes["E1"]["viz"]["color"]["a"] < drawn.nodes["E3"]["viz"]["color"]["a"]


def test_gexf_sizes_decisions_by_blast_radius(corrected: nx.MultiDiGraph[str]) -> None:
    drawn = read_gexf(text_of(ExportFormat.GEXF, corrected))

    size = {n: drawn.nodes[n]["viz"]["size"] for n in drawn}
    # Each itself and its downstream through children, dependents and the child plan, superseded
    # decisions not counted: D0 reaches D1, D2, D3 and through P2 E0 and E3; each next one a decision less.
    radius = {"D0": 6, "D1": 5, "D2": 4, "D3": 3, "E0": 2, "E3": 1}
    assert {n: drawn.nodes[n].get("blast_radius") for n in radius} == radius
    assert sorted(radius, key=size.__getitem__) == ["E3", "E0", "D3", "D2", "D1", "D0"]
    assert len({size[n] for n in radius}) == len(radius)  # strictly larger with more downstream
    assert size["E1"] == size["E2"] == size["E3"] == min(size[n] for n in radius)


def test_gexf_lays_nodes_out_in_layers_right_of_what_they_hang_on(corrected: nx.MultiDiGraph[str]) -> None:
    drawn = read_gexf(text_of(ExportFormat.GEXF, corrected))

    x = {n: drawn.nodes[n]["viz"]["position"]["x"] for n in drawn}
    y = {n: drawn.nodes[n]["viz"]["position"]["y"] for n in drawn}
    hanging = ("PARENT", "IN_PLAN", "SPAWNED_BY", "CHILD_OF", "FOR_PLAN", "ATTEMPT_ON")
    for source, target, key in corrected.edges(keys=True):
        if key in hanging:
            assert x[source] > x[target], (source, key, target)
    assert x["P1"] < x["D0"] < x["D1"] < x["D3"] < x["P2"] < x["E0"] < x["E1"] < x["E2"]
    assert x["D2"] == x["D3"] and x["E1"] == x["E3"]  # siblings share a layer, one row apart
    assert len({(x[n], y[n]) for n in drawn}) == drawn.number_of_nodes()


# Over HTTP, from the store


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    """Named before the test's app (``base_url``, ``api``): recorded before its runtime workers start,
    as ``serve --demo-if-empty`` does."""
    yield record_demonstration(store, checkpointer(store))


def test_prov_json_over_http_matches_the_stored_decisions(demo: Demonstration, api: httpx.Client, store: Trail) -> None:
    plan_ids = [demo.root_plan.plan_id, demo.child_plan.plan_id]
    answer = api.get(f"/export/plans/{plan_ids[0]}.prov.json", params={"scope": "hierarchy"})

    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.headers["content-disposition"].endswith('-hierarchy.prov.json"')
    document = read_prov(answer.text)
    stored = [d for plan_id in plan_ids for d in reading.list_decisions(store, plan_id, current_only=False, principal=LOCAL)]
    entities = {str(e.identifier) for e in document.get_records(ProvEntity)}
    assert {local(e, "decision") for e in entities if e.startswith("dt:decision/")} == {d.decision_id for d in stored}
    assert derivations(document, revision=False) == {(d.decision_id, dep) for d in stored for dep in d.depends_on} != set()
    assert (
        derivations(document, revision=True)
        == {(d.decision_id, d.corrects_decision_id) for d in stored if d.corrects_decision_id}
        != set()
    )
    invalidated = decision_invalidations(document)
    assert {d: by for d, (by, _) in invalidated.items()} == {d.decision_id: d.superseded_by for d in stored if d.superseded_by}
    agents = {p: reading.get_plan(store, p, principal=LOCAL).owner for p in plan_ids}
    expected = {
        d.decision_id: f"dt:agent/{agents[d.plan_id]}" if agents[d.plan_id] else f"dt:agent/plan/{d.plan_id}" for d in stored
    }
    # An owner is named percent-encoded past [A-Za-z0-9_-]: the demonstration's, process:demonstration, has a colon.
    named = {local(a["activity"], "deciding"): unquote(str(a["agent"])) for a in formal(document, ProvAssociation)}
    assert named == expected


def test_gexf_over_http_sizes_a_decision_by_what_correcting_it_would_invalidate(
    demo: Demonstration, api: httpx.Client, store: Trail
) -> None:
    plan_id = demo.root_plan.plan_id
    answer = api.get(f"/export/plans/{plan_id}.gexf", params={"scope": "hierarchy"})

    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/gexf+xml")
    drawn = read_gexf(answer.text)
    current = reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)
    assert {d.decision_id for d in current} <= set(drawn)
    for d in current:
        invalidated = len(
            correction_service.preview(store, d.decision_id, principal=LOCAL).decisions
        )  # the decision itself first
        assert drawn.nodes[d.decision_id]["blast_radius"] == invalidated
        assert drawn.nodes[d.decision_id]["viz"]["size"] == pytest.approx(min(100, 10 + 8 * (invalidated - 1) ** 0.5))


def test_export_names_parse_by_the_longest_format_and_unknown_ones_are_404(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "named", principal=LOCAL)

    lineage = api.get(f"/export/decisions/{root.decision_id}/lineage.prov.json")
    node_link = api.get(f"/export/plans/{plan.plan_id}.json")
    unknown = [api.get(f"/export/plans/{plan.plan_id}{suffix}") for suffix in (".prov", ".prov.xml", ".gexf.gz", "")]

    assert lineage.status_code == 200 and "dt:decision/" + root.decision_id in lineage.json()["entity"]
    assert node_link.status_code == 200 and root.decision_id in {n["id"] for n in node_link.json()["nodes"]}
    for answer in unknown:
        assert answer.status_code == 404, answer.request.url
        assert "prov.json" in answer.json()["errors"][0]["message"]  # the formats are listed


# The CLI


@pytest.fixture
def cli_env(graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))


def test_the_cli_writes_gexf_and_prov_json(store: Trail, cli_env: None, tmp_path: Path) -> None:
    plan, root = instantiate_plan(store, "exported", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    dependent = a_decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, strategy.decision_id, depends_on=(root.decision_id,))
    resource = recording_service.record(store, dependent, principal=LOCAL)

    assert main(["-q", "export", "--plan", plan.plan_id, "--format", "gexf", "-o", str(tmp_path / "p.gexf")]) == 0
    assert main(["-q", "export", "--plan", plan.plan_id, "--format", "prov.json", "-o", str(tmp_path / "p.prov.json")]) == 0

    drawn = read_gexf((tmp_path / "p.gexf").read_text(encoding="utf-8"))
    ids = {root.decision_id, strategy.decision_id, resource.decision_id}
    assert ids <= set(drawn) and drawn.nodes[root.decision_id]["blast_radius"] == 3
    document = read_prov((tmp_path / "p.prov.json").read_text(encoding="utf-8"))
    assert derivations(document, revision=False) == {(resource.decision_id, root.decision_id)}


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_the_cli_offers_every_export_format(fmt: ExportFormat) -> None:
    # The CLI lists its choices by hand (it does not import the exports to start); none may be missing.
    assert build_parser().parse_args(["export", "--plan", "P", "--format", fmt.value]).format == fmt.value
