"""Offline use-cases over a loaded decision graph: check, analyze, export.

The CLI, the GraphQL ``plan.analytics`` field and the ``/export`` route call these. Each loads
what it needs from Neo4j through the one adapter (``graphdb.loading``), then hands the graph to
pure functions (``checks``, ``analytics``, ``exports``). Each is a read: the caller's
``principal`` must be allowed to read, and one some plans are hidden from has what it may not see
cut out. Entry points reach those pure rooms only through
here: the names they need of them (``ExportFormat``, ``export_graph``, ``Analytics``,
``render_text``, ``CoverageSpec``, ``load_spec``, ``Report``) are this module's too.
"""

from __future__ import annotations

import atexit
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

import networkx as nx

from decisiontrail.access import Action, Principal
from decisiontrail.analytics import Analytics, analyze as analyze_graph, render_text
from decisiontrail.checks import CoverageSpec, Report, all_rules, history, run_checks
from decisiontrail.checks.coverage import load_spec
from decisiontrail.checks.model import Label
from decisiontrail.exports import (
    ExportFormat,
    Part,
    decisions_only as only_decisions,
    export as export_graph,
    export_parts,
    group_part,
)
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.graphdb.connection import Graph, create_driver
from decisiontrail.graphdb import loading
from decisiontrail.graphdb.loading import decision_total, independent_units, load_graph, load_plans, loads_of
from decisiontrail.services import correction, reading
from decisiontrail.services.trail import Trail
from decisiontrail.services.visibility import require_role

__all__ = [
    "WORKERS_FROM",
    "Analytics",
    "CoverageSpec",
    "ExportFormat",
    "Report",
    "View",
    "analyze",
    "check",
    "check_all",
    "export",
    "export_graph",
    "load_spec",
    "render_text",
    "view_graph",
    "visible_to",
]

T = TypeVar("T")


class View(StrEnum):
    """What an export draws."""

    PLAN = "plan"  # one plan's decisions
    HIERARCHY = "hierarchy"  # a plan and every plan below it
    ALL = "all"  # the whole database
    LINEAGE = "lineage"  # a decision and where it comes from
    IMPACT = "impact"  # a decision and what correcting it would invalidate


def check(
    trail: Trail,
    scope: LoadScope,
    plan_id: str | None = None,
    *,
    principal: Principal,
    spec: CoverageSpec | None = None,
    progress: bool | None = None,
) -> Report:
    """Run every validation and coverage rule over a plan, a hierarchy or the whole database (what
    of it ``principal`` may see)."""
    require_role(principal, Action.READ)
    G = visible_to(load_graph(trail.graph, scope, plan_id, progress=progress), principal, plan_id)
    label = "the whole database" if plan_id is None else f"{LoadScope(scope).value} {plan_id}"
    return run_checks(G, scope=label, rules=all_rules(spec or CoverageSpec()))


def check_all(
    trail: Trail,
    *,
    principal: Principal,
    spec: CoverageSpec | None = None,
    jobs: int = 1,
    credentials: tuple[str | None, str | None] = (None, None),
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Every rule over the whole database, one independent group of plans at a time
    (``graphdb.loading.independent_units``: a hierarchy, with any it shares an edge with; small
    groups loaded together, ``loads_of``), so memory holds the largest group (or load of small
    ones) rather than the database. With ``jobs`` above 1, that many worker processes (each
    with its own driver; ``credentials`` are the server's user and password, if it has any) take
    loads beside this process once they have started (``_Workers``), if the database holds
    ``WORKERS_FROM`` decisions or more. ``progress`` hears (groups done, groups) as loads finish.
    The report is the one ``check(ALL)`` gives: the same counts and violations (over what
    ``principal`` may see).
    """
    require_role(principal, Action.READ)
    if jobs < 1:
        raise ValidationFailed(f"jobs: at least 1, not {jobs}", field="jobs")
    spec = spec or CoverageSpec()
    reports: list[Report] = []
    done = 0

    def heard(report: Report, size: int) -> None:
        nonlocal done
        reports.append(report)
        done += size
        if progress:
            progress(done, len(units))

    with _workers(trail, jobs, credentials) as workers:  # starting while the groups are found
        units, loads = _loads(trail, jobs)
        pending = deque(loads)
        given: dict[Future[Report], int] = {}
        while pending or given:
            for future in [future for future in given if future.done()]:
                heard(future.result(), given.pop(future))
            if workers is not None and workers.ready():
                while pending and len(given) < 2 * workers.count:  # one being checked, one waiting, a worker
                    size, plan_ids = pending.popleft()
                    given[workers.submit(_check_unit, plan_ids, spec, principal)] = size
            if pending:
                size, plan_ids = pending.popleft()
                heard(_check_group(trail.graph, plan_ids, spec, principal), size)
            elif given:
                wait(given, return_when=FIRST_COMPLETED)
    return Report(
        scope="the whole database, group by group",
        decisions=sum(r.decisions for r in reports),
        plans=sum(r.plans for r in reports),
        rules=tuple(rule.name for rule in all_rules(spec)),
        violations=tuple(
            sorted((v for r in reports for v in r.violations), key=lambda v: (v.rule, v.message, v.decision_ids, v.plan_ids))
        ),
    )


def _loads(trail: Trail, jobs: int, *, shared: bool = True) -> tuple[list[list[str]], list[tuple[int, list[str]]]]:
    """The database's independent groups of plans, and the loads they are taken in, each with
    how many groups it holds: ``shared`` among processes, no larger than a process's share, so
    every process can have some (203 plans in loads of 200 left the second of two 3 plans).
    ``jobs`` is at least 1 (its callers refuse less before anything starts)."""
    units = independent_units(trail.graph)
    share = -(-sum(len(unit) for unit in units) // jobs) if jobs > 1 and shared else None
    loads = [
        (len(load), [plan for unit in load for plan in unit])
        for load in loads_of(units, min(loading.PLANS_PER_LOAD, share) if share else None)
    ]
    return units, loads


WORKERS_FROM = 20_000
"""Decisions from which the whole database is worth worker processes: starting one (a process
importing the package and connecting) takes about half a second of a core, which on a smaller
database cost more than the second core saved (10,150 decisions took twice as long with two
workers as in one process, docs/benchmarks.md at af6a8b5)."""


class _Workers:
    """Worker processes taking loads beside this one, each with its own connection
    (``_open_worker``). They are given loads once one has started (``ready``); until then this
    process takes them, so a start slower than the work costs nothing but the start."""

    def __init__(self, pool: ProcessPoolExecutor, count: int) -> None:
        self.count = count
        self._pool = pool
        # A worker runs its initializer before any call: a probe done is a worker started.
        self.probes = [pool.submit(_started) for _ in range(count)]

    def ready(self) -> bool:
        """Has a worker started? (A probe's error, a worker that could not connect, is raised.)"""
        done = [probe for probe in self.probes if probe.done()]
        for probe in done:
            probe.result()
        return bool(done)

    def submit(self, fn: Callable[..., T], *args: object) -> Future[T]:
        return self._pool.submit(fn, *args)


@contextmanager
def _workers(trail: Trail, jobs: int, credentials: tuple[str | None, str | None]) -> Iterator[_Workers | None]:
    """``jobs`` worker processes to work beside this one, starting now; None for one job, or for a
    database of fewer than ``WORKERS_FROM`` decisions."""
    graph = trail.graph
    if jobs == 1 or decision_total(graph) < WORKERS_FROM:
        yield None
        return
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),  # no driver threads forked mid-flight
        initializer=_open_worker,
        initargs=(graph.uri, graph.database, *credentials),
    )
    try:
        yield _Workers(pool, jobs)
    finally:
        # On an error, or a reader that stops early, the loads not begun are dropped, not made.
        pool.shutdown(wait=True, cancel_futures=True)


def _started() -> None:
    """A worker's first call: it returns once the worker has opened its connection."""


_worker_graph: Graph | None = None


def _open_worker(uri: str, database: str, user: str | None, password: str | None) -> None:
    """A worker's own connection, for every group it is given."""
    global _worker_graph
    driver = create_driver(uri, user, password)
    atexit.register(driver.close)
    _worker_graph = Graph(driver=driver, database=database, uri=uri)


def _check_unit(plan_ids: list[str], spec: CoverageSpec, principal: Principal) -> Report:
    if _worker_graph is None:
        raise RuntimeError("the worker opened no connection")
    return _check_group(_worker_graph, plan_ids, spec, principal)


def _check_group(graph: Graph, plan_ids: list[str], spec: CoverageSpec, principal: Principal) -> Report:
    """One group of plans loaded, cut to what ``principal`` may see, checked and dropped."""
    loaded = load_plans(graph, plan_ids, progress=False)
    G = visible_to(loaded, principal, None)
    try:
        return run_checks(G, rules=all_rules(spec))
    finally:
        for each in (G, loaded):
            _drop(each)


def _drop(G: nx.MultiDiGraph[str]) -> None:
    """Empty a graph now: a networkx graph is in a reference cycle (its cached views point back at
    it), so left alone it waits for the cycle collector and the next group's graph grows beside it."""
    G.clear()


def analyze(
    trail: Trail,
    scope: LoadScope,
    plan_id: str,
    *,
    top: int = 10,
    principal: Principal,
    progress: bool | None = None,
) -> Analytics:
    """Analytics of a plan or a hierarchy; only the plans ``principal`` may see count."""
    require_role(principal, Action.READ)
    G = load_graph(trail.graph, scope, plan_id, progress=progress)
    return analyze_graph(visible_to(G, principal, plan_id), top=top)


def view_graph(
    trail: Trail,
    view: View,
    target_id: str | None = None,
    *,
    principal: Principal,
    progress: bool | None = None,
    as_of: datetime | None = None,
    decisions_only: bool = False,
) -> nx.MultiDiGraph[str]:
    """The graph an export draws: a plan, a hierarchy, everything, or a decision's lineage or impact
    (with ``decisions_only``, its decisions and the edges between them alone).

    A lineage or impact is computed by the same Cypher traversals the API answers with, then
    the plans it touches are loaded and cut down to it. What ``principal`` may not see is cut out,
    and a target it may not see is NotFound as if it did not exist. With ``as_of``, the graph as it
    stood at that moment (``checks.history.as_of``); a lineage or impact is the one the API answers
    for that moment, and a plan that did not exist yet is NotFound.
    """
    G = _view_graph(trail, View(view), target_id, principal=principal, progress=progress, as_of=as_of)
    return only_decisions(G) if decisions_only else G


def _view_graph(
    trail: Trail,
    view: View,
    target_id: str | None,
    *,
    principal: Principal,
    progress: bool | None,
    as_of: datetime | None,
) -> nx.MultiDiGraph[str]:
    require_role(principal, Action.READ)
    if view in (View.PLAN, View.HIERARCHY, View.ALL):
        G = load_graph(trail.graph, LoadScope(view.value), target_id, progress=progress)
        G = visible_to(G, principal, None if view is View.ALL else target_id)
        if as_of is None:
            return G
        past = history.as_of(G, as_of)
        if target_id is not None and target_id not in past:
            raise ValidationFailed(f"asOf: plan {target_id} was instantiated after {as_of.isoformat()}", field="asOf")
        return past
    assert target_id is not None
    # Answered as for a decision that does not exist, not by naming its plan.
    origin = reading.get_decision(trail, target_id, principal)
    if view is View.LINEAGE:
        # The walk follows IN_PLAN from every decision it reaches, so their plans are in plan_ids.
        decision_ids, plan_ids = reading.lineage(trail, target_id, principal, as_of=as_of)
        decision_plans = set(plan_ids)
    else:
        impact = correction.preview(trail, target_id, principal=principal, as_of=as_of)
        decision_ids, plan_ids = [d.decision_id for d in impact.decisions], list(impact.plan_ids)
        decision_plans = {d.plan_id for d in impact.decisions}
    keep = {target_id, *decision_ids, *plan_ids, *decision_plans, origin.plan_id}
    G = load_plans(trail.graph, sorted(decision_plans | set(plan_ids) | {origin.plan_id}), progress=progress)
    cut: nx.MultiDiGraph[str] = nx.MultiDiGraph(G.subgraph(n for n in G if n in keep))
    return visible_to(cut if as_of is None else history.as_of(cut, as_of), principal, origin.plan_id)


def export(
    trail: Trail,
    view: View,
    target_id: str | None,
    fmt: ExportFormat,
    *,
    principal: Principal,
    as_of: datetime | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int = 1,
    credentials: tuple[str | None, str | None] = (None, None),
    decisions_only: bool = False,
) -> Iterator[str]:
    """The export document, in chunks; NotFound and other refusals are raised before the first chunk.
    With ``decisions_only``, the decisions and the edges between them alone (``exports.decisions_only``).

    The whole database is loaded and written one independent group of plans at a time, as
    ``check_all`` checks it, so memory holds the largest group rather than the database
    (``exports.export_parts``); ``progress`` hears (groups written, groups) as they go.
    With ``jobs`` above 1 the groups are loaded and made into their parts of the document in
    that many worker processes (``credentials`` as for ``check_all``), a few loads ahead of the
    one being written, and put in place in the same order, once they have started
    (``_Workers``; if the database holds ``WORKERS_FROM`` decisions or more); until then this
    process makes them. The document is the one ``jobs=1`` writes. Only the whole database is
    written by workers. What ``principal`` may not see is left out.
    """
    require_role(principal, Action.READ)
    fmt = ExportFormat(fmt)
    if jobs < 1:
        raise ValidationFailed(f"jobs: at least 1, not {jobs}", field="jobs")
    if View(view) is View.ALL:
        # The same loads however many workers make them: each load is drawn as a whole (GEXF's
        # layout), so the document would otherwise change with ``jobs``.
        units, loads = _loads(trail, jobs, shared=False)
        parts = _parts(
            trail,
            fmt,
            units,
            loads,
            principal=principal,
            as_of=as_of,
            jobs=jobs,
            credentials=credentials,
            decisions_only=decisions_only,
        )
        return export_parts(_heard(parts, loads, len(units), progress), fmt)
    if jobs != 1:
        raise ValidationFailed("jobs: only an export of the whole database is made in worker processes", field="jobs")
    G = view_graph(trail, view, target_id, principal=principal, progress=False, as_of=as_of, decisions_only=decisions_only)
    return export_graph(G, fmt)


def _parts(
    trail: Trail,
    fmt: ExportFormat,
    units: list[list[str]],
    loads: list[tuple[int, list[str]]],
    *,
    principal: Principal,
    as_of: datetime | None,
    jobs: int,
    credentials: tuple[str | None, str | None],
    decisions_only: bool,
) -> Iterator[Part]:
    """Each load's part of the document, in the order of ``loads``: made here as it is written
    (the load kept until its part has been put in place, then dropped), or, once workers have
    started, listed by them, at most two a worker ahead of the one being written."""
    with _workers(trail, jobs if len(loads) > 1 else 1, credentials) as workers:
        given: dict[int, Future[Part]] = {}
        for at, (_, plan_ids) in enumerate(loads):
            if workers is not None and (given or workers.ready()):
                for ahead in range(at + 1, min(at + 1 + 2 * jobs, len(loads))):
                    if ahead not in given:
                        given[ahead] = workers.submit(_export_unit, loads[ahead][1], fmt, principal, as_of, decisions_only)
            if at in given:
                yield given.pop(at).result()
                continue
            with _loaded(trail.graph, plan_ids, principal, as_of, decisions_only) as G:
                yield group_part(G, fmt, listed=False)


def _heard(
    parts: Iterator[Part], loads: list[tuple[int, list[str]]], units: int, progress: Callable[[int, int], None] | None
) -> Iterator[Part]:
    """``parts``, telling ``progress`` (groups written, groups) as each has been put in place."""
    done = 0
    for (size, _), part in zip(loads, parts, strict=True):
        yield part
        done += size
        if progress:
            progress(done, units)


def _export_unit(
    plan_ids: list[str], fmt: ExportFormat, principal: Principal, as_of: datetime | None, decisions_only: bool
) -> Part:
    """A worker's: one load made into its part of the document, listed."""
    if _worker_graph is None:
        raise RuntimeError("the worker opened no connection")
    with _loaded(_worker_graph, plan_ids, principal, as_of, decisions_only) as G:
        return group_part(G, fmt)


@contextmanager
def _loaded(
    graph: Graph, plan_ids: list[str], principal: Principal, as_of: datetime | None, decisions_only: bool = False
) -> Iterator[nx.MultiDiGraph[str]]:
    """One load of groups of plans, cut to what ``principal`` may see (as it stood ``as_of``; its
    decisions alone, with ``decisions_only``), dropped on leaving."""
    loaded = load_plans(graph, plan_ids, progress=False)
    G = visible_to(loaded, principal, None)
    past = G if as_of is None else history.as_of(G, as_of)
    shown = only_decisions(past) if decisions_only else past
    try:
        yield shown
    finally:
        for each in (shown, past, G, loaded):
            _drop(each)


def visible_to(G: nx.MultiDiGraph[str], principal: Principal, plan_id: str | None) -> nx.MultiDiGraph[str]:
    """``G`` without the plans ``principal`` may not see (and their decisions and reviews).

    A request about a plan it may not see is NotFound, as if it did not exist.
    """
    if not principal.limited:
        return G
    hidden = {
        p
        for p, data in G.nodes(data=True)
        if data.get("label") == Label.PLAN.value and not principal.sees(data.get("owner"), data.get("project"))
    }
    if plan_id is not None and plan_id in hidden:
        raise NotFound("plan", plan_id)
    drop = hidden | {n for n, data in G.nodes(data=True) if data.get("plan_id") in hidden}
    return nx.MultiDiGraph(G.subgraph(n for n in G if n not in drop))
