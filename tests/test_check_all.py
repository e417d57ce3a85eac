"""check --all, group by group: the same report as loading the whole database at once, with memory
holding one group of plans (a hierarchy and those it shares an edge with) at a time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.actors.graph import sqlite_checkpointer
from decisiontrail.checks.report import Report
from decisiontrail.cli import main
from decisiontrail.domain import DecisionType
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import loading
from decisiontrail.graphdb.loading import independent_units
from decisiontrail.services import Trail, analysis
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import instantiate_plan
from factories import decision


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    with sqlite_checkpointer(":memory:") as checkpointer:
        yield record_demonstration(store, checkpointer)


def _plan_with_strategy(store: Trail, name: str) -> tuple[str, str]:
    plan, root = instantiate_plan(store, name)
    strategy = recording_service.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id))
    return plan.plan_id, strategy.decision_id


def _same(a: Report, b: Report) -> None:
    assert (a.decisions, a.plans, a.rules) == (b.decisions, b.plans, b.rules)
    assert sorted(v.render() for v in a.violations) == sorted(v.render() for v in b.violations)


def test_groups_are_hierarchies_joined_by_the_edges_between_them(store: Trail, graph: Graph, demo: Demonstration) -> None:
    lone, _ = _plan_with_strategy(store, "alone")
    left, left_strategy = _plan_with_strategy(store, "left")
    right, right_strategy = _plan_with_strategy(store, "right")
    recording_service.record(store, decision(right, DecisionType.RESOURCE_SELECTION, right_strategy, depends_on=(left_strategy,)))

    units = independent_units(graph)

    assert [demo.root_plan.plan_id in u and demo.child_plan.plan_id in u for u in units].count(True) == 1
    assert sorted([left, right]) in [sorted(u) for u in units]
    assert [lone] in units
    assert sorted(p for u in units for p in u) == sorted({p for u in units for p in u})  # each plan once


def test_group_by_group_reports_what_the_whole_load_reports_clean_and_broken(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch
) -> None:
    left, left_strategy = _plan_with_strategy(store, "left")
    right, right_strategy = _plan_with_strategy(store, "right")
    dependent = recording_service.record(
        store, decision(right, DecisionType.RESOURCE_SELECTION, right_strategy, depends_on=(left_strategy,))
    ).decision_id
    trail = Trail.on(graph)

    clean = analysis.check(trail, LoadScope.ALL)
    assert clean.ok
    _same(analysis.check_all(trail), clean)

    # Broken by hand: a dependency cycle through two hierarchies, and a second root in one plan.
    graph.driver.execute_query(
        "MATCH (a:Decision {decision_id: $a}), (b:Decision {decision_id: $b}) CREATE (a)-[:DEPENDS_ON {ordinal: 9}]->(b)",
        a=left_strategy,
        b=dependent,
        database_=graph.database,
    )
    graph.driver.execute_query(
        "MATCH (r:Decision {plan_id: $p, decision_type: 'strategy_choice'})-[e:PARENT]->() DELETE e",
        p=left,
        database_=graph.database,
    )
    whole = analysis.check(trail, LoadScope.ALL)
    assert {v.rule for v in whole.violations} >= {"no_dependency_cycle", "single_root"}
    seen: list[tuple[int, int]] = []

    by_group = analysis.check_all(trail, progress=lambda done, total: seen.append((done, total)))
    heard_in_workers: list[tuple[int, int]] = []
    in_workers = analysis.check_all(trail, jobs=2, progress=lambda done, total: heard_in_workers.append((done, total)))

    _same(by_group, whole)
    _same(in_workers, whole)
    assert seen and seen[-1][0] == seen[-1][1] == len(independent_units(graph))
    # Two workers each get a load: loads are no larger than half the plans.
    assert len(heard_in_workers) >= 2 and heard_in_workers[-1][0] == len(independent_units(graph))
    # Small groups are loaded together (here all in one load); each alone, in one process or two, reports the same.
    assert len(loading.loads_of(independent_units(graph))) == 1
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    seen.clear()
    _same(analysis.check_all(trail, progress=lambda done, total: seen.append((done, total))), whole)
    _same(analysis.check_all(trail, jobs=2), whole)
    units = len(independent_units(graph))
    assert seen == [(done, units) for done in range(1, units + 1)]


def test_the_cli_checks_the_whole_database_in_worker_processes(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)

    assert main(["-q", "check", "--all", "--jobs", "2", "--format", "json"]) == 0
    assert '"violations": []' in capsys.readouterr().out
    assert main(["-q", "check", "--all", "--jobs", "0"]) == 2
    assert "jobs: at least 1" in capsys.readouterr().err
