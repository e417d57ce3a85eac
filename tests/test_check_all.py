"""check --all, group by group: the same report as loading the whole database at once, with memory
holding one group of plans (a hierarchy and those it shares an edge with) at a time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from decisiontrail.actors.demonstration import Demonstration, record_demonstration
from decisiontrail.checks import CoverageSpec, Report
from decisiontrail.cli import main
from decisiontrail.domain import DecisionType
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb import loading
from decisiontrail.graphdb.loading import independent_units
from decisiontrail.services import Trail, analysis
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.access import LOCAL, Principal
from factories import decision


@pytest.fixture
def demo(store: Trail) -> Iterator[Demonstration]:
    yield record_demonstration(store, checkpointer(store))


def _plan_with_strategy(store: Trail, name: str) -> tuple[str, str]:
    plan, root = instantiate_plan(store, name, principal=LOCAL)
    strategy = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    return plan.plan_id, strategy.decision_id


def _same(a: Report, b: Report) -> None:
    assert (a.decisions, a.plans, a.rules) == (b.decisions, b.plans, b.rules)
    assert sorted(v.render() for v in a.violations) == sorted(v.render() for v in b.violations)


def test_groups_are_hierarchies_joined_by_the_edges_between_them(store: Trail, graph: Graph, demo: Demonstration) -> None:
    lone, _ = _plan_with_strategy(store, "alone")
    left, left_strategy = _plan_with_strategy(store, "left")
    right, right_strategy = _plan_with_strategy(store, "right")
    recording_service.record(
        store, decision(right, DecisionType.RESOURCE_SELECTION, right_strategy, depends_on=(left_strategy,)), principal=LOCAL
    )

    units = independent_units(graph)

    assert [demo.root_plan.plan_id in u and demo.child_plan.plan_id in u for u in units].count(True) == 1
    assert sorted([left, right]) in [sorted(u) for u in units]
    assert [lone] in units
    assert sorted(p for u in units for p in u) == sorted({p for u in units for p in u})  # each plan once


def test_group_by_group_reports_what_the_whole_load_reports_clean_and_broken(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch, started_workers: None
) -> None:
    left, left_strategy = _plan_with_strategy(store, "left")
    right, right_strategy = _plan_with_strategy(store, "right")
    dependent = recording_service.record(
        store, decision(right, DecisionType.RESOURCE_SELECTION, right_strategy, depends_on=(left_strategy,)), principal=LOCAL
    ).decision_id
    trail = Trail.on(graph)

    clean = analysis.check(trail, LoadScope.ALL, principal=LOCAL)
    assert clean.ok
    _same(analysis.check_all(trail, principal=LOCAL), clean)

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
    whole = analysis.check(trail, LoadScope.ALL, principal=LOCAL)
    assert {v.rule for v in whole.violations} >= {"no_dependency_cycle", "single_root"}
    seen: list[tuple[int, int]] = []

    by_group = analysis.check_all(trail, progress=lambda done, total: seen.append((done, total)), principal=LOCAL)
    heard_in_workers: list[tuple[int, int]] = []
    in_workers = analysis.check_all(
        trail, jobs=2, progress=lambda done, total: heard_in_workers.append((done, total)), principal=LOCAL
    )

    _same(by_group, whole)
    _same(in_workers, whole)
    assert seen and seen[-1][0] == seen[-1][1] == len(independent_units(graph))
    # Two processes can each have a load: loads are no larger than half the plans.
    assert len(heard_in_workers) >= 2 and heard_in_workers[-1][0] == len(independent_units(graph))
    # Small groups are loaded together (here all in one load); each alone, in one process or two, reports the same.
    assert len(loading.loads_of(independent_units(graph))) == 1
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    seen.clear()
    _same(analysis.check_all(trail, progress=lambda done, total: seen.append((done, total)), principal=LOCAL), whole)
    _same(analysis.check_all(trail, jobs=2, principal=LOCAL), whole)
    units = len(independent_units(graph))
    assert seen == [(done, units) for done in range(1, units + 1)]


def _checked_here(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The loads this process checks from now on (a worker's are checked in its own process)."""
    here: list[list[str]] = []
    check_group = analysis._check_group

    def counted(graph: Graph, plan_ids: list[str], spec: CoverageSpec, principal: Principal) -> Report:
        here.append(plan_ids)
        return check_group(graph, plan_ids, spec, principal)

    monkeypatch.setattr(analysis, "_check_group", counted)
    return here


def test_started_workers_take_loads_beside_this_process(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch, started_workers: None
) -> None:
    for name in ("one", "two", "three", "four", "five"):
        _plan_with_strategy(store, name)
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    trail = Trail.on(graph)
    whole = analysis.check(trail, LoadScope.ALL, principal=LOCAL)
    here = _checked_here(monkeypatch)

    _same(analysis.check_all(trail, jobs=2, principal=LOCAL), whole)

    # Six loads: four given to the two workers once one has started (one to check, one waiting,
    # each), the fifth checked here, and the sixth here too unless a worker was done first.
    assert len(independent_units(graph)) == 6
    assert 1 <= len(here) <= 2


def test_this_process_checks_every_load_while_no_worker_has_started(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("one", "two"):
        _plan_with_strategy(store, name)
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    monkeypatch.setattr(analysis, "WORKERS_FROM", 0)
    monkeypatch.setattr(analysis._Workers, "ready", lambda workers: False)
    trail = Trail.on(graph)
    whole = analysis.check(trail, LoadScope.ALL, principal=LOCAL)
    here = _checked_here(monkeypatch)

    _same(analysis.check_all(trail, jobs=2, principal=LOCAL), whole)

    assert sorted(p for load in here for p in load) == sorted(p for unit in independent_units(graph) for p in unit)


def test_a_small_database_is_checked_without_starting_a_worker(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "PLANS_PER_LOAD", 1)
    monkeypatch.setattr(analysis, "ProcessPoolExecutor", lambda **_: pytest.fail("a worker process was started"))
    trail = Trail.on(graph)
    assert analysis.WORKERS_FROM > analysis.check(trail, LoadScope.ALL, principal=LOCAL).decisions

    _same(analysis.check_all(trail, jobs=2, principal=LOCAL), analysis.check(trail, LoadScope.ALL, principal=LOCAL))


def test_the_cli_checks_the_whole_database_in_worker_processes(
    store: Trail, graph: Graph, demo: Demonstration, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)

    assert main(["-q", "check", "--all", "--jobs", "2", "--format", "json"]) == 0
    assert '"violations": []' in capsys.readouterr().out
    assert main(["-q", "check", "--all", "--jobs", "0"]) == 2
    assert "jobs: at least 1" in capsys.readouterr().err
