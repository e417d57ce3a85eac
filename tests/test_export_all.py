"""export --all, group by group, in every format: the document the whole database loaded at once
gives (the same nodes, edges and values; only the order of lines, PROV-JSON's blank-node ids and
where GEXF places nodes may differ), written while memory holds one group of plans (a hierarchy
and those it shares an edge with) at a time, and made the same in worker processes (--jobs)."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import networkx as nx
import pytest

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.exports import ExportFormat, export, export_groups
from decisiontrail.checks.model import add_decision, add_edge, decision_graph, Rel
from decisiontrail.cli import main
from decisiontrail.domain import DecisionType
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import loading
from decisiontrail.graphdb.loading import independent_units, load_graph
from decisiontrail.services import Trail, analysis
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.access import LOCAL
from factories import decision


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    yield record_demonstration(store, checkpointer(store))


@pytest.fixture
def linked(store: Trail, demo: Demonstration) -> None:
    """Beside the demonstration (a correction, a child plan): a lone plan, and two hierarchies one depends on."""
    plans = {}
    for name in ("alone", "left", "right"):
        plan, root = instantiate_plan(store, name, principal=LOCAL)
        plans[name] = recording_service.record(
            store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
        )
    right = plans["right"]
    recording_service.record(
        store,
        decision(right.plan_id, DecisionType.RESOURCE_SELECTION, right.decision_id, depends_on=(plans["left"].decision_id,)),
        principal=LOCAL,
    )


def _graphml(text: str) -> nx.MultiDiGraph[Any]:
    G = nx.read_graphml(io.BytesIO(text.encode()), force_multigraph=True)
    assert isinstance(G, nx.MultiDiGraph)
    return G


def _node_link(text: str) -> nx.MultiDiGraph[Any]:
    G = nx.node_link_graph(json.loads(text), edges="edges")
    assert isinstance(G, nx.MultiDiGraph)
    return G


def _cytoscape(text: str) -> nx.MultiDiGraph[Any]:
    G = nx.cytoscape_graph(json.loads(text))
    assert isinstance(G, nx.MultiDiGraph)
    return G


def _contents(G: nx.MultiDiGraph[Any]) -> tuple[dict[Any, Any], Counter[Any]]:
    edges = Counter((s, t, k, json.dumps(a, sort_keys=True, default=str)) for s, t, k, a in G.edges(keys=True, data=True))
    return dict(G.nodes(data=True)), edges


@pytest.mark.parametrize(
    "fmt, read",
    [(ExportFormat.GRAPHML, _graphml), (ExportFormat.NODE_LINK, _node_link), (ExportFormat.CYTOSCAPE, _cytoscape)],
)
@pytest.mark.parametrize("plans_per_load", [1, loading.PLANS_PER_LOAD])  # each group alone, or loaded together
def test_the_whole_database_group_by_group_reads_back_as_the_whole_load_does(
    store: Trail, graph: Graph, linked: None, fmt: ExportFormat, read: Any, plans_per_load: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", plans_per_load)
    whole = "".join(export(load_graph(graph, LoadScope.ALL), fmt))
    heard: list[tuple[int, int]] = []

    by_group = "".join(analysis.export(store, analysis.View.ALL, None, fmt, progress=lambda *p: heard.append(p), principal=LOCAL))

    back, expected = read(by_group), read(whole)
    assert len(back) > 20 and {a.get("kind") for _, a in back.nodes(data=True)} >= {"Plan", "Decision", "CorrectionAttempt"}
    assert _contents(back) == _contents(expected)
    units = len(independent_units(graph))
    assert units == 3  # the demonstration's, the lone plan, left with right
    # Progress is heard per load: each group alone, or all three (11 plans) in one load.
    assert heard == ([(1, 3), (2, 3), (3, 3)] if plans_per_load == 1 else [(3, 3)])


def test_dot_group_by_group_has_the_statements_of_the_whole_load(store: Trail, graph: Graph, linked: None) -> None:
    whole = "".join(export(load_graph(graph, LoadScope.ALL), ExportFormat.DOT))

    by_group = "".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.DOT, principal=LOCAL))

    assert by_group.startswith("digraph decisions {\n") and by_group.endswith("}\n")
    assert Counter(by_group.splitlines()) == Counter(whole.splitlines())


@pytest.mark.parametrize("fmt", [ExportFormat.GRAPHML, ExportFormat.GEXF, ExportFormat.PROV_JSON, ExportFormat.CYTOSCAPE])
def test_worker_processes_make_the_document_one_process_makes(
    store: Trail, graph: Graph, linked: None, fmt: ExportFormat, monkeypatch: pytest.MonkeyPatch, started_workers: None
) -> None:
    # The formats whose parts carry something across groups: typed keys, the layout's rows, blank-node numbers,
    # how far down the drawing reaches.
    for name in ("four", "five"):
        instantiate_plan(store, name, principal=LOCAL)
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)  # five loads, so both processes have some
    one = "".join(analysis.export(store, analysis.View.ALL, None, fmt, principal=LOCAL))
    heard: list[tuple[int, int]] = []
    here = _made_here(monkeypatch)

    in_workers = "".join(
        analysis.export(store, analysis.View.ALL, None, fmt, jobs=2, progress=lambda *p: heard.append(p), principal=LOCAL)
    )

    assert in_workers == one and len(one) > 5_000
    assert heard == [(done, 5) for done in range(1, 6)]
    # The first here, the rest by the workers (given once one has started).
    assert len(here) == 1


def test_this_process_makes_every_part_while_no_worker_has_started(
    store: Trail, graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    monkeypatch.setattr(analysis, "WORKERS_FROM", 0)
    monkeypatch.setattr(analysis._Workers, "ready", lambda workers: False)
    one = "".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.GRAPHML, principal=LOCAL))
    here = _made_here(monkeypatch)

    in_workers = "".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.GRAPHML, jobs=2, principal=LOCAL))

    assert in_workers == one
    assert len(here) == 3


def _made_here(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The loads this process makes into parts from now on (a worker's are made in its own process)."""
    here: list[list[str]] = []
    loaded = analysis._loaded

    @contextmanager
    def counted(graph: Graph, plan_ids: list[str], *rest: Any) -> Iterator[nx.MultiDiGraph[str]]:
        here.append(plan_ids)
        with loaded(graph, plan_ids, *rest) as G:
            yield G

    monkeypatch.setattr(analysis, "_loaded", counted)
    return here


def test_a_groups_boundary_nodes_are_left_to_the_group_that_holds_them() -> None:
    mine, theirs = decision_graph(), decision_graph()
    add_decision(mine, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1)
    add_decision(mine, "D9", plan_id="P9", decision_type="strategy_choice", sequence_number=1, boundary=True)
    add_edge(mine, "D1", "D9", Rel.DEPENDS_ON, ordinal=0)
    add_decision(theirs, "D9", plan_id="P9", decision_type="strategy_choice", sequence_number=1)
    written = {fmt: "".join(export_groups([mine, theirs], fmt)) for fmt in ExportFormat}

    node_ids = {
        ExportFormat.GRAPHML: [n.split('"')[1] for n in written[ExportFormat.GRAPHML].split("<node id=")[1:]],
        ExportFormat.NODE_LINK: [n["id"] for n in json.loads(written[ExportFormat.NODE_LINK])["nodes"]],
        ExportFormat.CYTOSCAPE: [n["data"]["id"] for n in json.loads(written[ExportFormat.CYTOSCAPE])["elements"]["nodes"]],
        ExportFormat.DOT: [line.split('"')[1] for line in written[ExportFormat.DOT].splitlines() if line.startswith('    "')],
        ExportFormat.GEXF: list(_gexf(written[ExportFormat.GEXF])),
        ExportFormat.PROV_JSON: [i.split("/")[-1] for i in json.loads(written[ExportFormat.PROV_JSON])["entity"]],
    }
    for fmt, ids in node_ids.items():
        assert sorted(ids) == ["D1", "D9", "P1", "P9"], fmt  # D9 once, P1 and P9 as their plans' nodes
    back = _node_link(written[ExportFormat.NODE_LINK])
    assert "boundary" not in back.nodes["D9"]
    # Each edge once, in the group of its source: D9's IN_PLAN is theirs, not mine too.
    union = [("D1", "P1", "IN_PLAN"), ("D1", "D9", "DEPENDS_ON"), ("D9", "P9", "IN_PLAN")]
    assert Counter(list(back.edges(keys=True))) == Counter(union)
    assert Counter(list(_graphml(written[ExportFormat.GRAPHML]).edges(keys=True))) == Counter(union)
    edge_ids = re.findall(r'<edge id="([^"]+)"', written[ExportFormat.GEXF])
    assert sorted(edge_ids) == sorted(f"{s}-{k}-{t}" for s, t, k in union)
    # Drawn without rows for mine's boundary nodes: theirs on each layer's second row, right below mine.
    drawn = _gexf(written[ExportFormat.GEXF])
    rows = {n: drawn.nodes[n]["viz"]["position"]["y"] for n in ("P1", "D1", "P9", "D9")}
    assert rows == {"P1": 0.0, "D1": 0.0, "P9": -60.0, "D9": -60.0}
    derived = json.loads(written[ExportFormat.PROV_JSON])["wasDerivedFrom"]
    assert [(d["prov:generatedEntity"], d["prov:usedEntity"]) for d in derived.values()] == [("dt:decision/D1", "dt:decision/D9")]


def _gexf(text: str) -> nx.DiGraph[Any]:
    G = nx.read_gexf(io.BytesIO(text.encode()))  # a MultiDiGraph where two edges join the same nodes
    assert isinstance(G, nx.DiGraph)
    return G


def _drawn(G: nx.DiGraph[Any]) -> tuple[dict[Any, Any], Counter[Any]]:
    """A GEXF document's contents but where it places its nodes: colours, sizes and attributes stay."""
    nodes = {n: {**a, "viz": {k: v for k, v in a["viz"].items() if k != "position"}} for n, a in G.nodes(data=True)}
    return nodes, Counter((s, t, json.dumps(a, sort_keys=True)) for s, t, a in G.edges(data=True))


def _prov(text: str) -> dict[str, Any]:
    """A PROV-JSON document's sections: records by id, and relations as a multiset (their blank-node ids aside)."""
    document = json.loads(text)
    return {
        section: Counter(json.dumps(r, sort_keys=True) for r in records.values()) if ident.startswith("_:") else records
        for section, records in document.items()
        for ident in [next(iter(records), "")]
    }


def test_gexf_and_prov_json_group_by_group_read_back_as_the_whole_load_does(
    store: Trail, graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)  # a group a load: three loads
    whole = {fmt: "".join(export(load_graph(graph, LoadScope.ALL), fmt)) for fmt in (ExportFormat.GEXF, ExportFormat.PROV_JSON)}
    heard: list[tuple[int, int]] = []

    by_group = {
        fmt: "".join(analysis.export(store, analysis.View.ALL, None, fmt, progress=lambda *p: heard.append(p), principal=LOCAL))
        for fmt in whole
    }

    drawn, expected = _gexf(by_group[ExportFormat.GEXF]), _gexf(whole[ExportFormat.GEXF])
    assert len(drawn) > 20 and _drawn(drawn) == _drawn(expected)
    # Each group is drawn below the ones before it: no two nodes on one spot.
    spots = Counter((a["viz"]["position"]["x"], a["viz"]["position"]["y"]) for _, a in drawn.nodes(data=True))
    assert spots.most_common(1)[0][1] == 1
    # Sized by blast radius: the demonstration's root as much as in the whole load, and larger than its leaves.
    sizes = {a["viz"]["size"] for _, a in drawn.nodes(data=True) if a.get("kind") == "Decision"}
    assert len(sizes) > 2
    provenance = _prov(by_group[ExportFormat.PROV_JSON])
    assert provenance == _prov(whole[ExportFormat.PROV_JSON])
    assert {"entity", "activity", "agent", "wasGeneratedBy", "wasDerivedFrom", "wasInvalidatedBy"} <= provenance.keys()
    ids = [i for section in json.loads(by_group[ExportFormat.PROV_JSON]).values() for i in section if i.startswith("_:")]
    assert len(ids) == len(set(ids))  # blank-node ids count on across groups
    assert heard == [(1, 3), (2, 3), (3, 3)] * 2


def test_cytoscape_json_group_by_group_draws_each_group_below_the_ones_before_it(
    store: Trail, graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)  # a group a load: three loads
    whole = json.loads("".join(export(load_graph(graph, LoadScope.ALL), ExportFormat.CYTOSCAPE)))["elements"]["nodes"]

    by_group = json.loads("".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.CYTOSCAPE, principal=LOCAL)))
    nodes = by_group["elements"]["nodes"]

    # Each plan as the whole load draws it (the same shape, the same members), only placed elsewhere.
    def shapes(elements: list[dict[str, Any]]) -> dict[str, dict[str, tuple[float, float]]]:
        held: dict[str, list[dict[str, Any]]] = {}
        for element in elements:
            if "parent" in element["data"]:
                held.setdefault(element["data"]["parent"], []).append(element)
        return {
            plan: {
                e["data"]["id"]: (
                    e["position"]["x"] - min(m["position"]["x"] for m in members),
                    e["position"]["y"] - min(m["position"]["y"] for m in members),
                )
                for e in members
            }
            for plan, members in held.items()
        }

    assert len(nodes) > 20 and shapes(nodes) == shapes(whole)
    # The groups one below another: no two plans' boxes (round their members' boxes, 190 by 46) overlap,
    # though each group's part starts its drawing at the top.
    boxes: dict[str, list[float]] = {}
    for element in nodes:
        plan, at = element["data"].get("parent"), element["position"]
        if plan is not None:
            box = boxes.setdefault(plan, [at["x"], at["x"], at["y"], at["y"]])
            box[:] = [min(box[0], at["x"]), max(box[1], at["x"]), min(box[2], at["y"]), max(box[3], at["y"])]
    drawn = [(x1 - 95, x2 + 95, y1 - 23, y2 + 23) for x1, x2, y1, y2 in boxes.values()]
    assert len(drawn) >= 5
    for i, a in enumerate(drawn):
        for b in drawn[i + 1 :]:
            assert not (a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]), (a, b)


def test_a_decisions_only_export_of_the_whole_database_holds_its_decisions_alone(
    store: Trail, graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    loaded = load_graph(graph, LoadScope.ALL)

    only = "".join(analysis.export(store, analysis.View.ALL, None, ExportFormat.NODE_LINK, principal=LOCAL, decisions_only=True))

    back = _node_link(only)
    decision_ids = {n for n, a in loaded.nodes(data=True) if a["label"] == "Decision"}
    assert set(back) == decision_ids and {a["kind"] for _, a in back.nodes(data=True)} == {"Decision"}
    assert Counter(list(back.edges(keys=True))) == Counter(
        (u, v, k) for u, v, k in loaded.edges(keys=True) if u in decision_ids and v in decision_ids
    )


@pytest.mark.parametrize("fmt, declared", [(ExportFormat.GRAPHML, "attr.type"), (ExportFormat.GEXF, "type")])
def test_a_key_is_typed_by_its_values_in_every_group(fmt: ExportFormat, declared: str) -> None:
    groups = []
    for n, value in enumerate([1, 2.5, 3]):  # an int, a float, an int: a double
        G = decision_graph()
        add_decision(G, f"D{n}", plan_id=f"P{n}", decision_type="strategy_choice", sequence_number=1, weight=value)
        groups.append(G)
    text = "".join(export_groups(groups, fmt))

    assert re.search(rf'<(key|attribute) id="n.weight"[^>]* {declared}="double"', text)
    groups[1].nodes["D1"]["weight"] = "heavy"  # and with a string among them, a string
    assert re.search(rf'<(key|attribute) id="n.weight"[^>]* {declared}="string"', "".join(export_groups(groups, fmt)))


def test_the_cli_exports_the_whole_database(graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    out = tmp_path / "all.graphml"

    assert main(["-q", "export", "--all", "--format", "graphml", "-o", str(out)]) == 0
    assert _contents(_graphml(out.read_text(encoding="utf-8"))) == _contents(
        _graphml("".join(export(load_graph(graph, LoadScope.ALL), ExportFormat.GRAPHML)))
    )


def test_the_cli_exports_the_whole_database_in_worker_processes(
    graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    one, two = tmp_path / "one.gexf", tmp_path / "two.gexf"

    assert main(["-q", "export", "--all", "--format", "gexf", "-o", str(one)]) == 0
    assert main(["-q", "export", "--all", "--format", "gexf", "--jobs", "2", "-o", str(two)]) == 0

    assert two.read_text(encoding="utf-8") == one.read_text(encoding="utf-8")
    plan_id = next(n for n, a in _gexf(one.read_text(encoding="utf-8")).nodes(data=True) if a.get("kind") == "Plan")
    assert main(["-q", "export", "--plan", plan_id, "--jobs", "2"]) == 2
    assert "--jobs: only an export of the whole database (--all)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["-q", "export", "--all", "--jobs", "0"])
    assert "at least 1, not 0" in capsys.readouterr().err


def test_each_group_is_emptied_as_soon_as_it_is_checked_or_written(
    store: Trail, graph: Graph, linked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A networkx graph is freed only by the cycle collector; emptied, it holds nothing meanwhile.
    loaded: list[nx.MultiDiGraph[str]] = []
    load = analysis.load_plans

    def recorded(*args: Any, **kwargs: Any) -> nx.MultiDiGraph[str]:
        loaded.append(load(*args, **kwargs))
        return loaded[-1]

    monkeypatch.setattr(analysis, "load_plans", recorded)
    analysis.check_all(store, principal=LOCAL)
    decision_ids = [n for n, a in load_graph(graph, LoadScope.ALL).nodes(data=True) if a.get("label") == "Decision"]
    for fmt in ExportFormat:
        written = "".join(analysis.export(store, analysis.View.ALL, None, fmt, principal=LOCAL))
        assert all(d in written for d in decision_ids), fmt  # made before its group was emptied

    loads = len(loading.loads_of(independent_units(graph)))
    assert len(loaded) == (1 + len(ExportFormat)) * loads and all(G.number_of_nodes() == 0 for G in loaded)
