"""The benchmark workload: deterministic rows, and data that passes every check once loaded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, LiteralString

import networkx as nx
import pytest
from neo4j.time import DateTime

from bench.workload import PlanRows, WorkloadSpec, generate, load, subtree_fixture, tree_fixture
from decisiontrail.checks import run_checks
from decisiontrail.checks.model import add_decision, add_edge, add_plan, decision_graph
from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services import correction as correction_service
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL


SMALL = WorkloadSpec(hierarchies=2, depth=2, fan_out=2, decisions_per_plan=30)


def _in_memory(plans: Iterable[PlanRows]) -> nx.MultiDiGraph[str]:
    """The rows as the loader would read them back, built with the checks' own builders."""
    G = decision_graph()
    for rows in plans:
        add_plan(G, rows.plan_id, **{k: v for k, v in rows.plan.items() if k != "plan_id"})
        for row in rows.decisions:
            fixed = ("decision_id", "plan_id", "decision_type", "sequence_number")
            add_decision(
                G,
                row["decision_id"],
                plan_id=row["plan_id"],
                decision_type=row["decision_type"],
                sequence_number=row["sequence_number"],
                **{k: v for k, v in row.items() if k not in fixed},
            )
        for kind, links in (
            ("PARENT", rows.parents),
            ("CORRECTS", rows.corrects),
            ("CHILD_OF", [rows.child_of] if rows.child_of else []),
            ("SPAWNED_BY", [rows.spawned_by] if rows.spawned_by else []),
        ):
            for link in links:
                add_edge(G, link.source, link.target, kind)
        for dependency in rows.depends_on:
            add_edge(G, dependency.source, dependency.target, "DEPENDS_ON", ordinal=dependency.ordinal)
        for supersession in rows.superseded_by:
            add_edge(G, supersession.source, supersession.target, "SUPERSEDED_BY", at=supersession.at)
    return G


def _stored(graph: Graph, statement: LiteralString, key: str) -> dict[str, dict[str, Any]]:
    records, _, _ = graph.driver.execute_query(statement, database_=graph.database, routing_="r")
    native: list[dict[str, Any]] = [
        {k: v.to_native() if isinstance(v, DateTime) else v for k, v in r["p"].items()} for r in records
    ]
    return {props[key]: props for props in native}


def test_generate_is_deterministic_and_matches_the_spec() -> None:
    spec = WorkloadSpec(hierarchies=3, depth=2, fan_out=3, decisions_per_plan=60)
    first = list(generate(spec))

    assert first == list(generate(spec))
    assert [r.plan for r in first] != [r.plan for r in generate(replace(spec, seed=8))]
    assert len(first) == spec.plans == 3 * (1 + 3 + 9)
    assert sum(len(r.decisions) for r in first) == spec.total_decisions == 13 * 3 * 60
    assert Counter(r.level for r in first) == {0: 3, 1: 9, 2: 27}
    superseded = sum("superseded_at" in d for r in first for d in r.decisions)
    assert abs(superseded / spec.total_decisions - spec.superseded_share) < 0.03
    assert all(r.plan["next_sequence"] == len(r.decisions) == 60 for r in first)


def test_sized_picks_the_hierarchies_that_come_nearest() -> None:
    spec = WorkloadSpec.sized(100_000)
    assert spec.hierarchies == round(100_000 / (7 * 50)) and spec.depth == 2
    assert abs(spec.total_decisions - 100_000) <= 7 * 50 / 2
    assert WorkloadSpec.sized(10, decisions_per_plan=20).hierarchies == 1
    with pytest.raises(ValueError, match="at least 5"):
        WorkloadSpec(fan_out=2, decisions_per_plan=4)  # no room for the root, a strategy, two spawns and an implementation choice


@pytest.mark.parametrize(
    "spec",
    [
        WorkloadSpec(seed=1, hierarchies=2, depth=3, fan_out=2, decisions_per_plan=40, superseded_share=0.2),
        WorkloadSpec(seed=2, hierarchies=2, depth=1, fan_out=4, decisions_per_plan=300, depends_on_density=0.6),
        WorkloadSpec(seed=3, hierarchies=3, depth=2, fan_out=2, decisions_per_plan=5, superseded_share=0.5),
        WorkloadSpec(seed=4, hierarchies=2, depth=0, decisions_per_plan=20, superseded_share=0.0, depends_on_density=0.0),
    ],
)
def test_generated_rows_pass_every_check_in_memory(spec: WorkloadSpec) -> None:
    report = run_checks(_in_memory(generate(spec)))
    assert report.ok, report.render()
    assert report.decisions == spec.total_decisions


def test_a_loaded_workload_passes_every_check(graph: Graph, store: Trail) -> None:
    progress: list[tuple[int, int]] = []
    result = load(graph, SMALL, batch_size=100, progress=lambda done, total: progress.append((done, total)))

    report = run_checks(load_graph(graph, LoadScope.ALL, progress=False))
    assert report.ok, report.render()
    assert (report.plans, report.decisions) == (result.plans, result.decisions) == (SMALL.plans, SMALL.total_decisions)
    counts = count_graph(graph)
    assert (counts.nodes, counts.relationships) == (result.plans + result.decisions, result.relationships)
    assert result.relationships == sum(rows.relationships for rows in generate(SMALL))
    assert progress[-1] == (SMALL.total_decisions, SMALL.total_decisions)

    # Every property is stored as generated, and every node reads back as a valid domain record.
    assert _stored(graph, "MATCH (d:Decision) RETURN properties(d) AS p", "decision_id") == {
        row["decision_id"]: row for rows in generate(SMALL) for row in rows.decisions
    }
    assert _stored(graph, "MATCH (p:Plan) RETURN properties(p) AS p", "plan_id") == {
        rows.plan_id: rows.plan for rows in generate(SMALL)
    }
    plans = reading.get_plans(store, list(result.root_plan_ids), principal=LOCAL)
    assert [p.parent_plan_id for p in plans if p] == [None, None]
    read = [d for rows in generate(SMALL) for d in reading.list_decisions(store, rows.plan_id, principal=LOCAL)]
    assert len(read) == SMALL.total_decisions
    assert any(d.superseded_by and d.superseded_at for d in read) and any(d.is_correction for d in read)

    root, top, deep = reading.get_decisions(
        store, [result.root_decision_id, result.top_decision_id, result.deep_decision_id], principal=LOCAL
    )
    assert root and top and deep
    assert (root.decision_type, top.decision_type) == (DecisionType.PROMPT_DEFINITION, DecisionType.STRATEGY_CHOICE)
    assert root.plan_id == top.plan_id == result.root_plan_ids[0]
    parent_plan = reading.get_plan(store, reading.get_plan(store, deep.plan_id, LOCAL).parent_plan_id or "", LOCAL)
    assert parent_plan.parent_plan_id is not None  # the deep decision is in a plan two levels down
    assert reading.children_of(store, [deep.decision_id]) == [[]] and deep.is_current
    assert (
        result.corrected_decision_id is not None
        and reading.get_decision(store, result.corrected_decision_id, principal=LOCAL).superseded_by
    )
    top_impact = correction_service.preview(store, result.top_decision_id, principal=LOCAL)
    assert top_impact.plan_ids  # the top strategy's downstream reaches the plans spawned below it


def test_subtree_fixture_invalidates_exactly_the_downstream_asked_for(graph: Graph, store: Trail) -> None:
    targets = subtree_fixture(graph, 100, copies=2)

    assert len(set(targets)) == 2
    for target in targets:
        impact = correction_service.preview(store, target, principal=LOCAL)
        assert impact.decision_ids[0] == target  # the preview counts the corrected decision itself
        assert len(impact.decisions) == 100 and not impact.plan_ids
    (single,) = subtree_fixture(graph, 1, seed=8)  # another seed: no id collides with the plans above
    assert correction_service.preview(store, single, principal=LOCAL).decision_ids == (single,)
    report = run_checks(load_graph(graph, LoadScope.ALL, progress=False))
    assert report.ok, report.render()


def test_tree_fixture_is_one_plan_of_the_asked_size(graph: Graph, store: Trail) -> None:
    plan_id = tree_fixture(graph, 1000)

    decisions = reading.list_decisions(store, plan_id, principal=LOCAL)
    assert len(decisions) == 1000 and all(d.is_current for d in decisions)
    assert 0.2 < sum(len(d.depends_on) for d in decisions) / 1000 < 0.4
    parent = {d.decision_id: d.parent_decision_id for d in decisions}
    depth: dict[str, int] = {}
    for d in decisions:  # in sequence order: parents first
        depth[d.decision_id] = 0 if parent[d.decision_id] is None else depth[parent[d.decision_id] or ""] + 1
    assert 4 <= max(depth.values()) <= 8
    report = run_checks(load_graph(graph, LoadScope.PLAN, plan_id, progress=False))
    assert report.ok, report.render()
