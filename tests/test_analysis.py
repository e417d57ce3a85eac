"""Check, analyze and export as users reach them: the service, plan.analytics, /export and the CLI."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import networkx as nx
import pydot
import pytest

from decisiontrail.access import LOCAL, Principal, Role
from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.app import create_app
from decisiontrail.cli import main
from decisiontrail.exceptions import NotFound
from decisiontrail.graphdb import Graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services import analysis
from decisiontrail.services import correction as correction_service
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.services.checkpoints import checkpointer
from serving import served


def exported_decisions(G: nx.MultiDiGraph[str]) -> list[tuple[str, dict[str, Any]]]:
    """The decision nodes of an exported graph read back: their ``kind`` (``label`` is the caption)."""
    return [(n, data) for n, data in G.nodes(data=True) if data.get("kind") == "Decision" and not data.get("boundary")]


pytestmark = pytest.mark.filterwarnings("ignore::pyparsing.warnings.PyparsingDeprecationWarning")


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    """Named before the test's app (``base_url``, ``api``): recorded before its runtime workers start,
    as ``serve --demo-if-empty`` does."""
    yield record_demonstration(store, checkpointer(store))


@pytest.fixture
def base_url(store: Trail, graph: Graph) -> Iterator[str]:
    with served(create_app(graph=graph)) as url:
        yield url


@pytest.fixture
def cli_env(graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))


def test_analytics_of_the_demonstration_match_the_store(graph: Graph, store: Trail, demo: Demonstration) -> None:
    plan_id = demo.root_plan.plan_id
    stored = reading.list_decisions(store, plan_id, current_only=False, principal=LOCAL)

    result = analysis.analyze(store, LoadScope.PLAN, plan_id, principal=LOCAL)
    hierarchy = analysis.analyze(store, LoadScope.HIERARCHY, plan_id, principal=LOCAL)

    assert result.decisions.total == len(stored)
    assert result.decisions.superseded == sum(1 for d in stored if d.superseded_by)
    assert sum(result.decisions.by_type.values()) == len(stored)
    assert result.corrections.corrections == sum(1 for d in stored if d.is_correction) >= 1
    top = hierarchy.most_critical[0]
    # Over the hierarchy, the most critical decision's blast radius is what correcting it would
    # invalidate across plans, itself included (over one plan, only that plan's share counts).
    assert top.blast_radius == len(correction_service.preview(store, top.decision_id, principal=LOCAL).decisions) > 1
    assert [p.plan_id for p in hierarchy.plans] == [plan_id, demo.child_plan.plan_id]
    assert hierarchy.decisions.total == result.decisions.total + len(
        reading.list_decisions(store, demo.child_plan.plan_id, current_only=False, principal=LOCAL)
    )
    with pytest.raises(NotFound):
        analysis.analyze(store, LoadScope.PLAN, plan_id, principal=Principal("someone-else", Role.ACTOR))


def test_impact_analyze_and_gexf_count_what_a_correction_invalidates_alike(
    demo: Demonstration, store: Trail, cli_env: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Issue 46, Tried 5: `impact` said the demonstration's #3 would invalidate 12 decisions while
    # `analyze` and GEXF's blast radius said 11, leaving out the decision itself, which a correction
    # supersedes too. One count: the decision and its downstream, across child plans.
    plan_id = demo.root_plan.plan_id
    current = reading.list_decisions(store, plan_id, current_only=True, principal=LOCAL)
    strategy = next(d for d in current if d.sequence_number == 3)

    assert main(["-q", "impact", f"{plan_id}#3"]) == 0
    said = capsys.readouterr().out.splitlines()[0]
    assert main(["-q", "analyze", "--hierarchy", plan_id, "--top", "100", "--format", "json"]) == 0
    analyzed = {c["decision_id"]: c["blast_radius"] for c in json.loads(capsys.readouterr().out)["most_critical"]}
    assert main(["-q", "export", "--hierarchy", plan_id, "--format", "gexf", "-o", str(tmp_path / "h.gexf")]) == 0
    drawn = nx.read_gexf(tmp_path / "h.gexf")

    assert said.startswith(f"correcting {strategy.decision_id} would invalidate 12 decision(s) ")
    assert analyzed[strategy.decision_id] == drawn.nodes[strategy.decision_id]["blast_radius"] == 12
    for d in current:  # and so for every decision the demonstration left current
        invalidated = len(correction_service.preview(store, d.decision_id, principal=LOCAL).decisions)
        assert analyzed[d.decision_id] == drawn.nodes[d.decision_id]["blast_radius"] == invalidated, d


def test_plan_analytics_over_graphql(demo: Demonstration, base_url: str, graph: Graph) -> None:
    query = """query($id: ID!) { plan(id: $id) { analytics(scope: HIERARCHY, top: 3) {
        decisions { total current byType { decisionType count } byPhase { phase count } }
        confidence { scored histogram { low high count } }
        corrections { corrections corrected rate mostCorrected { decisionId corrections } }
        shape { decisionDepth hierarchyDepth maxFanOut }
        mostCritical { decisionId decisionType blastRadius }
        reviews { total byStatus { name count } rate }
        plans { planId level phase }
    } } }"""
    with httpx.Client(base_url=base_url, timeout=60) as client:
        body = client.post("/graphql", json={"query": query, "variables": {"id": demo.root_plan.plan_id}}).json()
        refused = client.post(
            "/graphql", json={"query": query.replace("top: 3", "top: 1000"), "variables": {"id": demo.root_plan.plan_id}}
        ).json()
    assert "errors" not in body, body
    analytics = body["data"]["plan"]["analytics"]
    expected = analysis.analyze(Trail.on(graph), LoadScope.HIERARCHY, demo.root_plan.plan_id, top=3, principal=LOCAL)

    assert analytics["decisions"]["total"] == expected.decisions.total
    assert {t["decisionType"]: t["count"] for t in analytics["decisions"]["byType"]} == {
        k.upper(): n for k, n in expected.decisions.by_type.items()
    }
    assert [c["blastRadius"] for c in analytics["mostCritical"]] == [c.blast_radius for c in expected.most_critical]
    assert len(analytics["mostCritical"]) <= 3
    assert analytics["reviews"]["total"] == expected.reviews.total == 1
    assert [p["level"] for p in analytics["plans"]] == [0, 1]
    assert sum(b["count"] for b in analytics["confidence"]["histogram"]) == analytics["confidence"]["scored"]
    assert refused["errors"][0]["extensions"] == {"code": "VALIDATION_FAILED", "field": "top"}


def test_exports_over_http_parse_back_to_the_loaded_graph(demo: Demonstration, base_url: str, graph: Graph, store: Trail) -> None:
    plan_id, child_id = demo.root_plan.plan_id, demo.child_plan.plan_id
    loaded = load_graph(graph, LoadScope.PLAN, plan_id)
    with httpx.Client(base_url=base_url, timeout=60) as client:
        graphml = client.get(f"/export/plans/{plan_id}.graphml")
        hierarchy = client.get(f"/export/plans/{plan_id}.json", params={"scope": "hierarchy"})
        dot = client.get(f"/export/plans/{child_id}.dot")
        cyjs = client.get(f"/export/plans/{child_id}.cyjs")
        spawn = next(
            d for d in reading.list_decisions(store, plan_id, principal=LOCAL) if d.decision_type.value == "subplan_spawn"
        )
        impact = client.get(f"/export/decisions/{spawn.decision_id}/impact.json")
        unknown_plan = client.get("/export/plans/01ARZ3NDEKTSV4RRFFQ69G5FAV.graphml")
        unknown_format = client.get(f"/export/plans/{plan_id}.png")

    assert graphml.status_code == 200 and graphml.headers["content-type"].startswith("application/graphml+xml")
    parsed = nx.read_graphml(io.BytesIO(graphml.content), force_multigraph=True)
    assert set(parsed.nodes) == set(loaded.nodes)
    assert sorted(parsed.edges(keys=True)) == sorted(loaded.edges(keys=True))

    linked = nx.node_link_graph(hierarchy.json(), edges="edges")
    assert {data["plan_id"] for _, data in exported_decisions(linked)} == {plan_id, child_id}

    (drawn,) = pydot.graph_from_dot_data(dot.text)
    assert {n.get_name().strip('"') for n in _dot_nodes(drawn)} >= {
        d.decision_id for d in reading.list_decisions(store, child_id, current_only=False, principal=LOCAL)
    }
    assert {e["data"]["source"] for e in cyjs.json()["elements"]["edges"]} >= {
        d.decision_id for d in reading.list_decisions(store, child_id, principal=LOCAL)
    }

    expected = {d.decision_id for d in correction_service.preview(store, spawn.decision_id, principal=LOCAL).decisions}
    assert {n for n, _ in exported_decisions(nx.node_link_graph(impact.json(), edges="edges"))} == expected | {spawn.decision_id}

    assert unknown_plan.status_code == 404 and unknown_plan.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert unknown_format.status_code == 404


def test_check_all_on_the_demonstration_is_clean_and_a_broken_one_is_precise(
    graph: Graph, demo: Demonstration, cli_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", "check", "--all"]) == 0
    clean = capsys.readouterr().out
    graph.driver.execute_query(
        "MATCH (d:Decision {decision_type: 'tool_invocation'}) WITH d LIMIT 1 SET d.phase = 'strategize' RETURN d.decision_id AS id",
        database_=graph.database,
    )
    assert main(["-q", "check", "--hierarchy", demo.root_plan.plan_id, "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)

    assert "no violations" in clean and "checked the whole database" in clean
    assert not report["ok"]
    (violation,) = report["violations"]
    assert violation["rule"] == "type_in_phase" and violation["decision_ids"]


def test_analyze_export_and_prune_from_the_cli(
    demo: Demonstration, cli_env: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plan_id = demo.root_plan.plan_id
    assert main(["-q", "analyze", "--hierarchy", plan_id, "--format", "json"]) == 0
    analytics = json.loads(capsys.readouterr().out)
    assert main(["-q", "export", "--hierarchy", plan_id, "--format", "graphml", "-o", str(tmp_path / "h.graphml")]) == 0
    assert main(["-q", "prune", "--older-than", "30", "--dry-run", "--format", "json"]) == 0
    dry = json.loads(capsys.readouterr().out)

    exported = nx.read_graphml(tmp_path / "h.graphml", force_multigraph=True)
    assert analytics["decisions"]["total"] == sum(1 for _, d in exported.nodes(data=True) if d.get("kind") == "Decision")
    assert dry["dry_run"] is True and dry["decision_ids"] == []  # nothing is older than 30 days


def test_every_offline_command_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    for command, words in {
        "check": ("--hierarchy", "--coverage", "docs/checks.md", "Exit status"),
        "analyze": ("blast radius", "--top"),
        "export": ("GraphML", "Cytoscape", "--lineage", "--impact"),
        "prune": ("--dry-run", "--older-than", "Correction attempt"),
    }.items():
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        for word in words:
            assert word in out, (command, word)


def _dot_nodes(graph: pydot.Dot) -> list[pydot.Node]:
    nodes = list(graph.get_nodes())
    for sub in graph.get_subgraphs():
        nodes.extend(_dot_nodes(sub))
    return nodes
