"""Offline use-cases over a loaded decision graph: check, analyze, export.

The CLI, the GraphQL ``plan.analytics`` field and the ``/export`` route call these. Each loads
what it needs from Neo4j through the one adapter, then hands the graph to pure functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

import networkx as nx

from decisiontrail.checks import CoverageSpec, Report, all_rules, run_checks
from decisiontrail.checks.analytics import Analytics, analyze as analyze_graph
from decisiontrail.checks.export import ExportFormat, export as export_graph
from decisiontrail.checks.model import Label
from decisiontrail.exceptions import NotFound
from decisiontrail.graphdb import DecisionStore, Graph
from decisiontrail.graphdb.loading import LoadScope, load_graph, load_plans


class View(StrEnum):
    """What an export draws."""

    PLAN = "plan"  # one plan's decisions
    HIERARCHY = "hierarchy"  # a plan and every plan below it
    ALL = "all"  # the whole database
    LINEAGE = "lineage"  # a decision and where it comes from
    IMPACT = "impact"  # a decision and what correcting it would invalidate


def check(
    graph: Graph, scope: LoadScope, plan_id: str | None = None, *, spec: CoverageSpec | None = None, progress: bool | None = None
) -> Report:
    """Run every validation and coverage rule over a plan, a hierarchy or the whole database."""
    G = load_graph(graph, scope, plan_id, progress=progress)
    label = "the whole database" if plan_id is None else f"{LoadScope(scope).value} {plan_id}"
    return run_checks(G, scope=label, rules=all_rules(spec or CoverageSpec()))


def analyze(
    graph: Graph,
    scope: LoadScope,
    plan_id: str,
    *,
    top: int = 10,
    owner: str | None = None,
    project: str | None = None,
    progress: bool | None = None,
) -> Analytics:
    """Analytics of a plan or a hierarchy; with ``owner`` or ``project``, only the plans that
    owner, in that project, may see count."""
    G = load_graph(graph, scope, plan_id, progress=progress)
    return analyze_graph(visible_to(G, owner, plan_id, project=project), top=top)


def view_graph(
    graph: Graph,
    view: View,
    target_id: str | None = None,
    *,
    owner: str | None = None,
    project: str | None = None,
    progress: bool | None = None,
) -> nx.MultiDiGraph[str]:
    """The graph an export draws: a plan, a hierarchy, everything, or a decision's lineage or impact.

    A lineage or impact is computed by the same Cypher traversals the API answers with, then
    the plans it touches are loaded and cut down to it. With ``owner`` or ``project``, what they
    may not see is cut out, and a target they may not see is NotFound as if it did not exist.
    """
    view = View(view)
    if view in (View.PLAN, View.HIERARCHY, View.ALL):
        G = load_graph(graph, LoadScope(view.value), target_id, progress=progress)
        return visible_to(G, owner, None if view is View.ALL else target_id, project=project)
    assert target_id is not None
    store = DecisionStore(graph)
    origin = store.get_decision(target_id)
    if owner is not None or project is not None:
        plan = store.get_plan(origin.plan_id)
        hidden = (owner is not None and plan.owner != owner) or (project is not None and plan.project != project)
        if hidden:  # answered as for a decision that does not exist, not by naming its plan
            raise NotFound("decision", target_id)
    if view is View.LINEAGE:
        # The walk follows IN_PLAN from every decision it reaches, so their plans are in plan_ids.
        decision_ids, plan_ids = store.lineage(target_id)
        decision_plans = set(plan_ids)
    else:
        impact = store.preview_correction(target_id)
        decision_ids, plan_ids = [d.decision_id for d in impact.decisions], list(impact.plan_ids)
        decision_plans = {d.plan_id for d in impact.decisions}
    keep = {target_id, *decision_ids, *plan_ids, *decision_plans, origin.plan_id}
    G = load_plans(graph, sorted(decision_plans | set(plan_ids) | {origin.plan_id}), progress=progress)
    cut: nx.MultiDiGraph[str] = nx.MultiDiGraph(G.subgraph(n for n in G if n in keep))
    return visible_to(cut, owner, origin.plan_id, project=project)


def export(
    graph: Graph,
    view: View,
    target_id: str | None,
    fmt: ExportFormat,
    *,
    owner: str | None = None,
    project: str | None = None,
) -> Iterator[str]:
    """The export document, in chunks; NotFound and other refusals are raised before the first chunk."""
    return export_graph(view_graph(graph, view, target_id, owner=owner, project=project, progress=False), ExportFormat(fmt))


def visible_to(
    G: nx.MultiDiGraph[str], owner: str | None, plan_id: str | None, *, project: str | None = None
) -> nx.MultiDiGraph[str]:
    """``G`` without the plans ``owner`` may not see, or outside ``project`` (and their decisions
    and reviews); with neither, everything.

    A request about a plan the owner may not see is NotFound, as if it did not exist.
    """
    if owner is None and project is None:
        return G
    hidden = {
        p
        for p, data in G.nodes(data=True)
        if data.get("label") == Label.PLAN.value
        and ((owner is not None and data.get("owner") != owner) or (project is not None and data.get("project") != project))
    }
    if plan_id is not None and plan_id in hidden:
        raise NotFound("plan", plan_id)
    drop = hidden | {n for n, data in G.nodes(data=True) if data.get("plan_id") in hidden}
    return nx.MultiDiGraph(G.subgraph(n for n in G if n not in drop))
