"""The networkx adapter and the checks over data written through the real store."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.checks import run_checks
from decisiontrail.checks.closure import downstream, lineage
from decisiontrail.checks.model import Label, Rel, decisions, edges_of
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import loading
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services import correction as correction_service
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.access import LOCAL


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    yield record_demonstration(store, checkpointer(store))


def _write(graph: Graph, statement: str, **params: object) -> None:
    """Break the stored data by hand, as a bug or an operator with cypher-shell might."""
    graph.driver.execute_query(statement, params, database_=graph.database)  # type: ignore[arg-type]


def test_the_demonstration_loads_whole_and_passes_every_check(graph: Graph, store: Trail, demo: Demonstration) -> None:
    G = load_graph(graph, LoadScope.ALL)

    stored = {
        d.decision_id: d
        for p in (demo.root_plan, demo.child_plan)
        for d in reading.list_decisions(store, p.plan_id, current_only=False, principal=LOCAL)
    }
    loaded = dict(decisions(G))
    assert loaded.keys() == stored.keys()
    for decision_id, d in stored.items():
        data = loaded[decision_id]
        assert (data["decision_type"], data["plan_id"], data["sequence_number"]) == (
            d.decision_type.value,
            d.plan_id,
            d.sequence_number,
        )
        assert data["status"] == ("superseded" if d.superseded_by else "current")
        assert data["created_at"] == d.created_at
    parents = {(s, t) for s, t, _ in edges_of(G, Rel.PARENT)}
    assert parents == {(d.decision_id, d.parent_decision_id) for d in stored.values() if d.parent_decision_id}
    assert {(s, t) for s, t, _ in edges_of(G, Rel.SPAWNED_BY)} == {
        (demo.child_plan.plan_id, demo.child_plan.spawned_by_decision_id)
    }
    assert any(data["label"] == Label.REVIEW.value for _, data in G.nodes(data=True))
    assert any(data["label"] == Label.CORRECTION_ATTEMPT.value for _, data in G.nodes(data=True))

    report = run_checks(G, scope="all")
    assert report.ok, report.render()
    assert report.decisions == len(stored) and report.plans == 2


def test_scopes_load_a_plan_or_its_hierarchy_with_boundary_nodes(graph: Graph, demo: Demonstration) -> None:
    child = load_graph(graph, LoadScope.PLAN, demo.child_plan.plan_id)
    hierarchy = load_graph(graph, LoadScope.HIERARCHY, demo.root_plan.plan_id)
    root_only = load_graph(graph, LoadScope.PLAN, demo.root_plan.plan_id)

    assert {data["plan_id"] for _, data in decisions(child)} == {demo.child_plan.plan_id}
    spawning = demo.child_plan.spawned_by_decision_id
    assert child.nodes[spawning]["boundary"] is True  # the parent plan's spawn decision, read but not judged
    assert child.nodes[demo.root_plan.plan_id]["boundary"] is True
    assert {data["plan_id"] for _, data in decisions(hierarchy)} == {demo.root_plan.plan_id, demo.child_plan.plan_id}
    assert {data["plan_id"] for _, data in decisions(root_only)} == {demo.root_plan.plan_id}
    assert run_checks(child).ok and run_checks(hierarchy).ok


def test_an_applied_parent_plan_loaded_alone_passes_every_check(graph: Graph, demo: Demonstration) -> None:
    # Its spawn's child plan comes as a boundary node: `check --plan` on an applied parent found the spawn childless.
    assert run_checks(load_graph(graph, LoadScope.PLAN, demo.root_plan.plan_id)).ok


def test_a_parent_plan_loaded_alone_holds_its_child_plans_as_its_hierarchy_does(
    graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_id, child_id = demo.root_plan.plan_id, demo.child_plan.plan_id
    statements: list[str] = []
    named = loading.query

    def noted(name: str) -> Any:
        statements.append(name)
        return named(name)

    monkeypatch.setattr(loading, "query", noted)
    alone = load_graph(graph, LoadScope.PLAN, plan_id)
    asked_alone = statements.count("graph/boundary_child_plans")
    hierarchy = load_graph(graph, LoadScope.HIERARCHY, plan_id)
    load_graph(graph, LoadScope.ALL)
    load_graph(graph, LoadScope.PLAN, child_id)  # a plan that spawns nothing

    # The child plan as the hierarchy has it (properties, status, edges out), but outside the scope.
    assert alone.nodes[child_id] == {**hierarchy.nodes[child_id], "boundary": True}
    assert sorted(alone.out_edges(child_id, keys=True, data=True), key=repr) == sorted(
        hierarchy.out_edges(child_id, keys=True, data=True), key=repr
    )
    assert {(s, t) for s, t, _ in edges_of(alone, Rel.SPAWNED_BY)} == {(child_id, demo.child_plan.spawned_by_decision_id)}
    assert not any(data["plan_id"] == child_id for _, data in decisions(alone, include_boundary=True))
    # Asked for once, and only where a spawn's children were left out.
    assert asked_alone == statements.count("graph/boundary_child_plans") == 1


def test_a_parent_plan_loaded_alone_still_finds_its_spawn_childless_when_the_child_is_invalidated(
    graph: Graph, demo: Demonstration
) -> None:
    plan_id, child_id = demo.root_plan.plan_id, demo.child_plan.plan_id
    _write(graph, "MATCH (p:Plan {plan_id: $child}) SET p.invalidated_at = datetime()", child=child_id)

    loaded = load_graph(graph, LoadScope.PLAN, plan_id)
    alone = [v for v in run_checks(loaded).violations if v.rule == "spawns_have_children"]
    whole = [
        v for v in run_checks(load_graph(graph, LoadScope.HIERARCHY, plan_id)).violations if v.rule == "spawns_have_children"
    ]

    assert loaded.nodes[child_id]["status"] == "invalidated" and loaded.nodes[child_id]["boundary"] is True
    assert [v.message for v in alone] == [v.message for v in whole]
    assert [v.decision_ids for v in alone] == [(demo.child_plan.spawned_by_decision_id,)]
    assert "has 0 active child plans" in alone[0].message


def test_loading_refuses_an_unknown_plan_and_a_scope_without_one(graph: Graph, store: Trail) -> None:
    with pytest.raises(NotFound):
        load_graph(graph, LoadScope.HIERARCHY, "01J0000000000000000000000X")
    with pytest.raises(ValidationFailed):
        load_graph(graph, LoadScope.PLAN)


@pytest.mark.parametrize(
    ("limit", "streamed", "collected"),
    [(1, 2, 0), (8, 1, 1), (10_000, 0, 1)],  # both plans streamed; the larger one; neither, both in one statement
)
def test_plans_too_large_to_collect_are_streamed_into_the_same_graph(
    graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch, limit: int, streamed: int, collected: int
) -> None:
    """A plan of more decisions than one statement may collect is read a decision a row; the graph
    is the one read plan by plan (nodes, edges, every property), whichever way each plan came."""
    whole = load_graph(graph, LoadScope.ALL)
    statements: list[str] = []
    named = loading.query

    def noted(name: str) -> Any:
        statements.append(name)
        return named(name)

    monkeypatch.setattr(loading, "query", noted)
    monkeypatch.setattr(loading, "DECISIONS_PER_STATEMENT", limit)
    split = load_graph(graph, LoadScope.ALL)

    assert dict(split.nodes(data=True)) == dict(whole.nodes(data=True))
    assert sorted(split.edges(keys=True, data=True), key=repr) == sorted(whole.edges(keys=True, data=True), key=repr)
    plans = (demo.root_plan.plan_id, demo.child_plan.plan_id)
    assert sorted(sum(1 for _, d in decisions(whole) if d["plan_id"] == p) for p in plans) == [6, 12]  # what the limits fit
    assert statements.count("graph/plan_decision_rows") == streamed
    assert statements.count("graph/decision_rows") == collected


def test_the_garbage_collector_is_held_off_while_a_graph_is_built_and_back_after(
    graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    add_row = loading._add_decision_row

    def watched(G: Any, row: Any) -> None:
        seen.append(gc.isenabled())
        add_row(G, row)

    monkeypatch.setattr(loading, "_add_decision_row", watched)
    G = load_graph(graph, LoadScope.ALL)
    assert seen and not any(seen) and gc.isenabled()
    assert len(list(decisions(G))) == len(seen)

    def failing(G: Any, row: Any) -> None:
        raise RuntimeError("the row could not be read")

    monkeypatch.setattr(loading, "_add_decision_row", failing)
    with pytest.raises(RuntimeError):
        load_graph(graph, LoadScope.ALL)
    assert gc.isenabled()  # back on after a load that failed, too
    gc.disable()
    try:
        monkeypatch.setattr(loading, "_add_decision_row", add_row)
        load_graph(graph, LoadScope.ALL)
        assert not gc.isenabled()  # left off when it was off
    finally:
        gc.enable()


def test_networkx_closures_agree_with_the_cypher_traversals(graph: Graph, store: Trail, demo: Demonstration) -> None:
    G = load_graph(graph, LoadScope.ALL)
    for decision_id, data in decisions(G):
        if data["status"] != "current":
            continue
        impact = correction_service.preview(store, decision_id, principal=LOCAL)
        assert set(downstream(G, decision_id).decision_ids) == set(impact.decision_ids) - {decision_id}, decision_id
        assert set(downstream(G, decision_id).plan_ids) == set(impact.plan_ids), decision_id
        ancestors, plans = reading.lineage(store, decision_id, principal=LOCAL)
        assert set(lineage(G, decision_id).decision_ids) == set(ancestors), decision_id
        assert set(lineage(G, decision_id).plan_ids) == set(plans), decision_id


BREAKAGES = [
    # rule, Cypher that breaks exactly that rule on the demonstration data
    (
        "single_root",
        "MATCH (p:Plan {plan_id: $plan})<-[:IN_PLAN]-(d:Decision {decision_type: 'strategy_choice'})-[r:PARENT]->() "
        "WITH r LIMIT 1 DELETE r",
    ),
    (
        "parent_in_same_plan",
        "MATCH (c:Plan {plan_id: $child})<-[:IN_PLAN]-(d:Decision {decision_type: 'implementation_choice'})-[r:PARENT]->() "
        "MATCH (:Plan {plan_id: $plan})<-[:IN_PLAN]-(s:Decision {decision_type: 'strategy_choice'}) "
        "WHERE s.superseded_at IS NULL "
        "WITH d, r, s LIMIT 1 DELETE r CREATE (d)-[:PARENT]->(s)",
    ),
    (
        "no_dependency_cycle",
        "MATCH (:Plan {plan_id: $plan})<-[:IN_PLAN]-(a:Decision {decision_type: 'strategy_choice'}) WHERE a.superseded_at IS NULL "
        "MATCH (b:Decision)-[:PARENT]->(a) WHERE b.superseded_at IS NULL "
        "WITH a, b LIMIT 1 CREATE (a)-[:DEPENDS_ON {ordinal: 0}]->(b), (b)-[:DEPENDS_ON {ordinal: 0}]->(a)",
    ),
    (
        "dependency_is_current",
        "MATCH (a:Decision) WHERE a.superseded_at IS NULL AND a.decision_type = 'strategy_choice' "
        "MATCH (b:Decision) WHERE b.superseded_at IS NOT NULL "
        "WITH a, b LIMIT 1 CREATE (a)-[:DEPENDS_ON {ordinal: 9}]->(b)",
    ),
    (
        "no_partial_invalidation",
        "MATCH (d:Decision)-[:PARENT]->(s:Decision) WHERE d.superseded_at IS NOT NULL AND s.superseded_at IS NOT NULL "
        "WITH d LIMIT 1 MATCH (d)-[r:SUPERSEDED_BY]->() DELETE r SET d.superseded_at = null",
    ),
    ("correction_consistency", "MATCH (c:Decision {is_correction: true}) WITH c LIMIT 1 SET c.is_correction = false"),
    # (a unique constraint keeps sequence numbers apart; their order against creation is the check's)
    (
        "sequence_order",
        "MATCH (:Plan {plan_id: $plan})<-[:IN_PLAN]-(d:Decision {sequence_number: 2}) "
        "SET d.created_at = d.created_at - duration('PT1H')",
    ),
    ("type_in_phase", "MATCH (d:Decision {decision_type: 'tool_invocation'}) WITH d LIMIT 1 SET d.phase = 'strategize'"),
    ("context_snapshot", "MATCH (d:Decision {decision_type: 'strategy_choice'})-[r:CAPTURED]->() WITH r LIMIT 1 DELETE r"),
    ("spawn_link", "MATCH (:Plan {plan_id: $child})-[r:SPAWNED_BY]->() DELETE r"),
    (
        "strategize_coverage",
        "MATCH (:Plan {plan_id: $child})<-[:IN_PLAN]-(d:Decision {decision_type: 'strategy_choice'}) "
        "SET d.decision_type = 'resource_selection'",
    ),
    (
        "invariant_coverage",
        "MATCH (:Plan {plan_id: $plan})<-[:IN_PLAN]-(d:Decision {decision_type: 'invariant_enforced'}) "
        "WITH d LIMIT 1 SET d.decision_type = 'strategy_choice'",
    ),
    (
        "execute_under_strategize",
        "MATCH (:Plan {plan_id: $child})<-[:IN_PLAN]-(d:Decision)-[r:PARENT]->(p:Decision) "
        "WHERE d.phase = 'execute' AND p.phase = 'strategize' AND d.superseded_at IS NULL "
        "MATCH (:Plan {plan_id: $child})<-[:IN_PLAN]-(root:Decision {decision_type: 'prompt_definition'}) "
        "WHERE root.superseded_at IS NULL "
        "WITH d, r, root LIMIT 1 DELETE r CREATE (d)-[:PARENT]->(root)",
    ),
]


@pytest.mark.parametrize(("rule", "statement"), BREAKAGES, ids=[rule for rule, _ in BREAKAGES])
def test_a_hand_broken_copy_fails_with_the_rule_it_breaks(
    graph: Graph, store: Trail, demo: Demonstration, rule: str, statement: str
) -> None:
    _write(graph, statement, plan=demo.root_plan.plan_id, child=demo.child_plan.plan_id)

    report = run_checks(load_graph(graph, LoadScope.ALL))

    assert not report.ok
    assert rule in report.by_rule(), report.render()
    # The report says where: every violation of that rule names a decision or a plan it involves.
    assert all(v.decision_ids or v.plan_ids for v in report.violations if v.rule == rule)
