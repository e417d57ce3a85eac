"""The exports opened in the tools people draw them with: networkx reads GraphML, GEXF and node-link
with the caption as ``label``; Graphviz's ``dot`` renders the DOT coloured by decision type with its
labels wrapped; Cytoscape.js, in Chromium, draws the Cytoscape JSON where it says, plans holding
their decisions, in the explorer's shape; the explorer's menu downloads GEXF and PROV-JSON; and a
decisions-only export holds the decisions alone.

Graphviz is Debian's ``graphviz`` (``.ci/run`` installs it), Cytoscape.js the explorer's own
(``explorer/node_modules``, which ``make install`` fills), Chromium as in tests/test_explorer.py;
without one of them its tests are skipped on a workstation and fail under CI (``CI`` set).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import networkx as nx
import pytest
from prov.model import ProvDocument, ProvEntity

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph
from decisiontrail.cli import main
from decisiontrail.exports import PALETTE, ExportFormat, caption, decisions_only, export
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.services.checkpoints import checkpointer
from bench.explorer import CHROMIUM, FLAGS

ROOT = Path(__file__).resolve().parent.parent
CYTOSCAPE = ROOT / "explorer" / "node_modules" / "cytoscape" / "dist" / "cytoscape.min.js"
DOT = shutil.which("dot")
AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
LONG = "Use a queue for the uploads, retry each with exponential backoff and alert after the fifth failure"


def _in_ci_without(missing: str | None) -> None:
    """Fail a test whose tool is missing under CI, where it must run (elsewhere it is skipped)."""
    if missing is not None and os.environ.get("CI"):
        pytest.fail(f"an export's tool is missing in CI: {missing}")


@pytest.fixture
def corrected() -> nx.MultiDiGraph[str]:
    """A plan and its child plan; in the child a superseded decision and its correction, a review
    pending under it and an attempt; a caption of the longest kind."""
    G = decision_graph()
    add_plan(G, "P1", description="release the billing service", owner="alice")
    add_decision(G, "D0", plan_id="P1", decision_type="prompt_definition", sequence_number=0)
    add_decision(G, "D1", plan_id="P1", decision_type="strategy_choice", sequence_number=1, parent="D0")
    add_decision(G, "D2", plan_id="P1", decision_type="subplan_spawn", sequence_number=2, parent="D1")
    add_decision(G, "D3", plan_id="P1", decision_type="resource_selection", sequence_number=3, parent="D1")
    add_edge(G, "D3", "D2", "DEPENDS_ON", ordinal=0)
    add_plan(G, "P2", description="migrate the ledger", phase="execute")
    add_edge(G, "P2", "P1", "CHILD_OF")
    add_edge(G, "P2", "D2", "SPAWNED_BY")
    add_decision(G, "E0", plan_id="P2", decision_type="prompt_definition", sequence_number=0)
    add_decision(
        G, "E1", plan_id="P2", decision_type="implementation_choice", sequence_number=11, parent="E0",
        chosen_option=LONG, superseded_at=AT,
    )  # fmt: skip
    add_decision(
        G, "E2", plan_id="P2", decision_type="implementation_choice", sequence_number=12, parent="E0",
        is_correction=True, corrects_decision_id="E1",
    )  # fmt: skip
    add_edge(G, "E2", "E1", "CORRECTS")
    add_edge(G, "E1", "E2", "SUPERSEDED_BY", at=AT)
    add_decision(G, "E3", plan_id="P2", decision_type="tool_invocation", sequence_number=13, parent="E2")
    add_review(G, "R1", plan_id="P2", status="pending", parent_decision_id="E2", threshold=0.5)
    add_attempt(G, "A1", attempt_number=1, replay_outcome="replayed")
    add_edge(G, "A1", "E1", "ATTEMPT_ON")
    add_edge(G, "A1", "E2", "PRODUCED")
    return G


def text_of(G: nx.MultiDiGraph[str], fmt: ExportFormat) -> str:
    return "".join(export(G, fmt))


# networkx: label is the caption, kind the Neo4j label, each status its kind's own


def read_networkx(fmt: ExportFormat, text: str) -> nx.MultiDiGraph[Any]:
    if fmt is ExportFormat.GRAPHML:
        G = nx.read_graphml(io.BytesIO(text.encode()), force_multigraph=True)
    elif fmt is ExportFormat.GEXF:
        G = nx.read_gexf(io.BytesIO(text.encode()))
    elif fmt is ExportFormat.CYTOSCAPE:
        G = nx.cytoscape_graph(json.loads(text))
    else:
        G = nx.node_link_graph(json.loads(text), edges="edges")
    return G if isinstance(G, nx.MultiDiGraph) else nx.MultiDiGraph(G)


@pytest.mark.parametrize("fmt", [ExportFormat.GRAPHML, ExportFormat.GEXF, ExportFormat.NODE_LINK, ExportFormat.CYTOSCAPE])
def test_networkx_reads_the_caption_as_label_and_the_kind_and_state_apart(
    corrected: nx.MultiDiGraph[str], fmt: ExportFormat
) -> None:
    back = read_networkx(fmt, text_of(corrected, fmt))

    for node, attrs in corrected.nodes(data=True):
        read = back.nodes[node]
        assert read["label"] == caption(node, attrs) and read["kind"] == attrs["label"], (fmt, node)
        assert "status" not in read, (fmt, node)  # no one name for four kinds' values
    state = {n: (back.nodes[n].get("decision_status"), back.nodes[n].get("superseded")) for n in ("E1", "E2")}
    assert state == {"E1": ("superseded", True), "E2": ("current", False)}
    assert all(type(back.nodes[n]["superseded"]) is bool for n, a in corrected.nodes(data=True) if a["label"] == "Decision")
    assert (back.nodes["P2"]["plan_status"], back.nodes["P2"]["invalidated"]) == ("active", False)
    assert back.nodes["R1"]["review_status"] == "pending" and back.nodes["A1"]["replay_outcome"] == "replayed"


# Graphviz: rendered by `dot`, coloured by decision type, labels wrapped

SVG = "{http://www.w3.org/2000/svg}"


def rendered(text: str) -> dict[str, ElementTree.Element]:
    """The DOT rendered to SVG by Graphviz, refused on any complaint: its node and cluster groups by their titles."""
    _in_ci_without(None if DOT else "Graphviz's dot (apt-get install graphviz)")
    assert DOT is not None
    done = subprocess.run([DOT, "-Tsvg"], input=text, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    svg = ElementTree.fromstring(done.stdout)
    return {
        str(group.findtext(f"{SVG}title")): group for group in svg.iter(f"{SVG}g") if group.get("class") in ("node", "cluster")
    }


def shape_of(group: ElementTree.Element) -> ElementTree.Element:
    shape = next((e for e in group if e.tag in (f"{SVG}ellipse", f"{SVG}polygon", f"{SVG}path")), None)
    assert shape is not None
    return shape


def lines_of(group: ElementTree.Element) -> list[str]:
    return [str(t.text) for t in group.iter(f"{SVG}text")]


@pytest.mark.skipif(DOT is None and not os.environ.get("CI"), reason="no Graphviz (apt-get install graphviz)")
def test_graphviz_draws_the_dot_coloured_by_decision_type_with_wrapped_labels(corrected: nx.MultiDiGraph[str]) -> None:
    drawn = rendered(text_of(corrected, ExportFormat.DOT))

    for node, attrs in corrected.nodes(data=True):
        kind = attrs["decision_type"] if attrs["label"] == "Decision" else attrs["label"]
        shape = shape_of(drawn[node])
        assert shape.get("fill") == "#{:02x}{:02x}{:02x}".format(*PALETTE[kind]), node
        # The caption, every word of it, in lines no wider than 30 characters.
        lines = lines_of(drawn[node])
        assert " ".join(lines) == caption(node, attrs) and max(map(len, lines)) <= 30, node
    assert len(caption("E1", corrected.nodes["E1"])) > 80 and len(lines_of(drawn["E1"])) >= 3
    # The superseded faded and dashed, the current opaque.
    assert float(shape_of(drawn["E1"]).get("fill-opacity", "1")) == pytest.approx(0.35, abs=0.01)
    assert shape_of(drawn["E1"]).get("stroke-dasharray") and shape_of(drawn["E2"]).get("fill-opacity") is None
    # Text that reads on its fill: white on the dark blue root, black on the green strategy.
    assert {t.get("fill") for t in drawn["D0"].iter(f"{SVG}text")} == {"white"}
    assert {t.get("fill", "black") for t in drawn["D1"].iter(f"{SVG}text")} == {"black"}
    assert {"cluster_P1", "cluster_P2"} <= drawn.keys()


# decisions only


@pytest.mark.parametrize("fmt", [ExportFormat.GRAPHML, ExportFormat.GEXF, ExportFormat.NODE_LINK, ExportFormat.CYTOSCAPE])
def test_a_decisions_only_export_holds_the_decisions_and_the_edges_between_them(
    corrected: nx.MultiDiGraph[str], fmt: ExportFormat
) -> None:
    back = read_networkx(fmt, text_of(decisions_only(corrected), fmt))

    decision_ids = {n for n, a in corrected.nodes(data=True) if a["label"] == "Decision"}
    assert set(back.nodes) == decision_ids and {a["kind"] for _, a in back.nodes(data=True)} == {"Decision"}
    between = {(u, v, k) for u, v, k in corrected.edges(keys=True) if u in decision_ids and v in decision_ids}
    assert {(u, v, d.get("type", k)) for u, v, k, d in back.edges(keys=True, data=True)} == between
    assert {k for _, _, k in between} == {"PARENT", "DEPENDS_ON", "CORRECTS", "SUPERSEDED_BY"}


def test_a_decisions_only_cytoscape_document_has_no_compounds_but_keeps_each_plans_shape(
    corrected: nx.MultiDiGraph[str],
) -> None:
    alone = nodes_by_id(text_of(decisions_only(corrected), ExportFormat.CYTOSCAPE))
    corrected.remove_nodes_from(["R1", "A1"])  # the review under E2 took a row of P2's tree; the attempt one below
    whole = nodes_by_id(text_of(corrected, ExportFormat.CYTOSCAPE))

    assert all("parent" not in n["data"] for n in alone.values())
    for plan in ("P1", "P2"):
        members = [d for d, n in alone.items() if n["data"]["plan_id"] == plan]
        assert offsets(alone, members) == offsets(whole, members)


def nodes_by_id(text: str) -> dict[str, dict[str, Any]]:
    return {n["data"]["id"]: n for n in json.loads(text)["elements"]["nodes"]}


def offsets(nodes: dict[str, dict[str, Any]], members: list[str]) -> dict[str, tuple[float, float]]:
    """Where each member is from the top left of them all: a drawing's shape, wherever it is placed."""
    left = min(nodes[m]["position"]["x"] for m in members)
    top = min(nodes[m]["position"]["y"] for m in members)
    return {m: (nodes[m]["position"]["x"] - left, nodes[m]["position"]["y"] - top) for m in members}


@pytest.fixture
def cli_env(graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    """Recorded before the test's app (``base_url``) starts its runtime workers."""
    yield record_demonstration(store, checkpointer(store))


def test_the_cli_exports_decisions_only_and_draws_the_demonstration_with_graphviz(
    demo: Demonstration, cli_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = demo.root_plan.plan_id
    for scope in (["--hierarchy", root], ["--all"]):
        out = tmp_path / "decisions.json"
        assert main(["-q", "export", *scope, "--decisions-only", "--format", "json", "-o", str(out)]) == 0
        back = read_networkx(ExportFormat.NODE_LINK, out.read_text(encoding="utf-8"))
        assert len(back) > 10 and {a["kind"] for _, a in back.nodes(data=True)} == {"Decision"}, scope
        assert {demo.root_plan.plan_id, demo.child_plan.plan_id} <= {a["plan_id"] for _, a in back.nodes(data=True)}
    assert main(["-q", "export", "corrections", "--plan", root, "--decisions-only"]) == 2
    assert "--decisions-only draws a graph" in capsys.readouterr().err

    out = tmp_path / "hierarchy.dot"
    assert main(["-q", "export", "--hierarchy", root, "--format", "dot", "-o", str(out)]) == 0
    if DOT is None and not os.environ.get("CI"):
        return
    drawn = rendered(out.read_text(encoding="utf-8"))
    decisions = [g for title, g in drawn.items() if not title.startswith("cluster_") and shape_of(g).tag.endswith("ellipse")]
    assert len(decisions) > 10
    fills = {shape_of(g).get("fill") for g in decisions}
    assert len(fills) >= 4 and "#2ca02c" in fills  # one colour a type; strategy_choice green
    assert max(len(line) for g in decisions for line in lines_of(g)) <= 30


# Cytoscape.js in Chromium


def _browser_missing() -> str | None:
    if shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set DECISIONTRAIL_CHROMIUM)"
    if not CYTOSCAPE.exists():
        return f"no {CYTOSCAPE.relative_to(ROOT)} (make install, or npm ci in explorer/)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


BROWSER_MISSING = _browser_missing()
in_chromium = pytest.mark.skipif(BROWSER_MISSING is not None and not os.environ.get("CI"), reason=BROWSER_MISSING or "")

# The explorer's own sizes (explorer/src/graph.ts), so the boxes are the ones the page draws.
STYLE = [
    {
        "selector": "node",
        "style": {"label": "data(label)", "width": 190, "height": 46, "text-wrap": "wrap", "text-max-width": "180px"},
    },
    {"selector": "node.plan", "style": {"width": 240, "height": 58}},
    {"selector": ":parent", "style": {"padding": "18px", "text-valign": "top", "compound-sizing-wrt-labels": "exclude"}},
]
# Loads a document into Cytoscape.js on a blank page and reports what it draws, node by node.
DRAW = """([elements, style]) => {
  const container = document.createElement("div");
  container.style.cssText = "width: 1200px; height: 800px";
  document.body.append(container);
  const cy = cytoscape({ container, elements, style, layout: { name: "preset" } });
  return cy.nodes().map((n) => {
    const box = n.boundingBox({ includeLabels: false });
    return {
      id: n.id(), x: n.position("x"), y: n.position("y"), label: n.style("label"), isParent: n.isParent(),
      parent: n.parent().nonempty() ? n.parent().id() : null, classes: n.classes(),
      box: { x1: box.x1, x2: box.x2, y1: box.y1, y2: box.y2 },
    };
  });
}"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    _in_ci_without(BROWSER_MISSING)
    if BROWSER_MISSING is not None:
        pytest.skip(BROWSER_MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def tab(chromium: Any) -> Iterator[Any]:
    """A fresh tab; fails the test if its console reports an error or a warning."""
    context = chromium.new_context(viewport={"width": 1600, "height": 950}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    yield page
    context.close()
    assert not errors, errors


def cytoscape_draws(tab: Any, document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What Cytoscape.js draws of ``document`` on a blank page, by node id."""
    tab.set_content("<!doctype html><title>cyjs</title><body></body>")
    tab.add_script_tag(path=str(CYTOSCAPE))
    return {n["id"]: n for n in tab.evaluate(DRAW, [document["elements"], STYLE])}


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]


@in_chromium
def test_cytoscape_js_draws_the_json_where_it_says_plans_holding_their_decisions(
    tab: Any, corrected: nx.MultiDiGraph[str]
) -> None:
    document = json.loads(text_of(corrected, ExportFormat.CYTOSCAPE))
    drawn = cytoscape_draws(tab, document)

    stated = {n["data"]["id"]: n for n in document["elements"]["nodes"]}
    assert set(drawn) == set(stated) == set(corrected.nodes)
    for node, element in stated.items():
        at = drawn[node]
        # Where it says: a node exactly; a plan holding nodes (which Cytoscape.js places around them) within a pixel.
        assert (at["x"], at["y"]) == pytest.approx(
            (element["position"]["x"], element["position"]["y"]), abs=0.5 if at["isParent"] else 0
        )
        assert at["parent"] == element["data"].get("parent") and at["label"] == caption(node, corrected.nodes[node]), node
        assert set(at["classes"]) == set(element["classes"].split()), node
    assert {n for n, at in drawn.items() if at["isParent"]} == {"P1", "P2"}
    assert {n for n, at in drawn.items() if at["parent"] == "P2"} == {"E0", "E1", "E2", "E3", "R1", "A1"}
    assert "t-implementation_choice" in drawn["E1"]["classes"] and "superseded" in drawn["E1"]["classes"]
    # Laid out as the explorer lays out a tree: a child one rank (250) right of its parent, rows 60 apart.
    assert drawn["D1"]["x"] - drawn["D0"]["x"] == drawn["D2"]["x"] - drawn["D1"]["x"] == 250
    assert (drawn["D3"]["y"] - drawn["D2"]["y"], drawn["D1"]["y"]) == (60, (drawn["D2"]["y"] + drawn["D3"]["y"]) / 2)
    # The child plan right of its parent, and no two boxes over each other.
    assert drawn["P2"]["box"]["x1"] > drawn["P1"]["box"]["x2"]
    boxes = [at["box"] for at in drawn.values() if at["parent"] is None]
    assert not any(overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    inside = [at["box"] for at in drawn.values() if at["parent"] == "P2"]
    assert not any(overlap(a, b) for i, a in enumerate(inside) for b in inside[i + 1 :])


@in_chromium
def test_the_exported_json_has_the_shape_the_explorer_draws(demo: Demonstration, base_url: str, tab: Any, chromium: Any) -> None:
    root = demo.root_plan.plan_id
    document = httpx_json(f"{base_url}/export/plans/{root}.cyjs?scope=hierarchy")
    exported = cytoscape_draws(tab, document)
    plans = sorted(n for n, at in exported.items() if "plan" in at["classes"])
    assert len(plans) >= 2

    page = chromium.new_page(viewport={"width": 1600, "height": 950})
    try:
        page.goto(f"{base_url}/explore?plan={root}&open={','.join(plans)}")
        settle(page)
        explorer = page.evaluate("window.decisiontrailExplorer.graph()")
    finally:
        page.close()

    # Each plan's decisions where the page draws them, from the top left of them all.
    for plan in plans:
        page_drew = {n["id"]: n for n in explorer if n["kind"] == "decision" and n["parent"] == plan}
        ours = [n for n, at in exported.items() if at["parent"] == plan and "decision" in at["classes"]]
        assert set(page_drew) == set(ours) and ours, plan
        assert shape(exported, ours) == shape(page_drew, ours), plan
    assert any(
        len({y for _, y in shape(exported, [n for n in exported if exported[n]["parent"] == p]).values()}) > 1 for p in plans
    )


def shape(drawn: dict[str, dict[str, Any]], members: list[str]) -> dict[str, tuple[float, float]]:
    """Where each member is drawn from the top left of them all, to the thousandth of a pixel."""
    placed = offsets({m: {"position": {"x": drawn[m]["x"], "y": drawn[m]["y"]}} for m in members}, members)
    return {m: (round(x, 3), round(y, 3)) for m, (x, y) in placed.items()}


def settle(page: Any) -> None:
    """Waits until the explorer page has no request of its own in flight (tests/test_explorer.py's way)."""
    from playwright.sync_api import expect

    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=30_000)


def httpx_json(url: str) -> dict[str, Any]:
    import httpx

    answer = httpx.get(url, timeout=60)
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


@in_chromium
def test_the_explorer_menu_downloads_gexf_and_prov_json(demo: Demonstration, base_url: str, chromium: Any) -> None:
    root = demo.root_plan.plan_id
    context = chromium.new_context(accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(f"{base_url}/explore?plan={root}&open={root}")
        settle(page)
        page.select_option("#export-scope", "hierarchy")
        offered = page.locator("#export-format option").evaluate_all("options => options.map(o => o.value)")
        assert offered == [f.value for f in (ExportFormat.GRAPHML, ExportFormat.DOT, ExportFormat.CYTOSCAPE,
                                             ExportFormat.NODE_LINK, ExportFormat.GEXF, ExportFormat.PROV_JSON)]  # fmt: skip
        downloaded = {}
        for fmt in (ExportFormat.GEXF, ExportFormat.PROV_JSON):
            page.select_option("#export-format", fmt.value)
            with page.expect_download() as started:
                page.locator("#export-file").click()
            downloaded[fmt] = (started.value.suggested_filename, Path(started.value.path()).read_text(encoding="utf-8"))
    finally:
        context.close()

    name, text = downloaded[ExportFormat.GEXF]
    drawn = read_networkx(ExportFormat.GEXF, text)
    assert name.endswith(".gexf") and root in drawn and drawn.nodes[root]["kind"] == "Plan"
    name, text = downloaded[ExportFormat.PROV_JSON]
    provenance = ProvDocument.deserialize(content=text, format="json")
    entities = {str(e.identifier) for e in provenance.get_records(ProvEntity)}
    assert name.endswith(".prov.json") and f"dt:plan/{root}" in entities
