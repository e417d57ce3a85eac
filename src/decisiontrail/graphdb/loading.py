"""The one adapter from Neo4j to networkx: a plan, a hierarchy or the whole database as a MultiDiGraph.

Rows are streamed plan batch by plan batch and added to the graph as they arrive, so memory
holds the graph being built and one fetch of rows, never a second copy of the result. The
shape of what comes out is ``decisiontrail.checks.model``'s.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Final, LiteralString

import networkx as nx
import neo4j
from neo4j.time import DateTime
from tqdm import tqdm

from decisiontrail.checks.model import (
    Rel,
    add_attempt,
    add_decision,
    add_edge,
    add_plan,
    add_review,
    collector_held_off,
    decision_graph,
    decisions,
    sources,
)
from decisiontrail.cypher import query
from decisiontrail.exceptions import NotFound, ValidationFailed
from decisiontrail.domain.decision import SPAWNING_TYPES
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.database import translated_errors
from decisiontrail.graphdb.records import native_datetime

PLANS_PER_QUERY = 200
FETCH_SIZE = 2000
PLANS_PER_LOAD = 200
"""Small independent groups are loaded together up to this many plans (see ``loads_of``)."""
DECISIONS_PER_STATEMENT = 20_000
"""Decisions collected by one statement (``graph/decision_rows`` gathers a plan's into one value, and
Neo4j holds a transaction's values within ``db.memory.transaction.max``); a plan larger than this
is streamed a decision a row (``graph/plan_decision_rows``)."""


def load_graph(
    graph: Graph, scope: LoadScope, plan_id: str | None = None, *, progress: bool | None = None
) -> nx.MultiDiGraph[str]:
    """Read ``scope`` from Neo4j into a decision graph.

    Nodes outside the scope that nodes inside it point at (a child plan's spawning decision when
    the plan is loaded alone, a dependency in another hierarchy) come too, marked ``boundary``, and
    so do the child plans of its current spawning decisions that it leaves out (a parent plan
    loaded alone), with their edges.
    ``progress`` shows a bar on stderr; by default only when stderr is a terminal.
    """
    scope = LoadScope(scope)
    if (scope is LoadScope.ALL) != (plan_id is None):
        raise ValidationFailed(
            "plan_id: give a plan for the plan and hierarchy scopes, and none for the whole database", field="plan_id"
        )
    with _session(graph) as session:
        plan_ids = _plan_ids(session, scope, plan_id)
        return _load(session, plan_ids, every_plan=scope is LoadScope.ALL, progress=progress)


def load_plans(graph: Graph, plan_ids: Iterable[str], *, progress: bool | None = None) -> nx.MultiDiGraph[str]:
    """Read the given plans (each as the plan scope would) into one decision graph."""
    with _session(graph) as session:
        return _load(session, list(dict.fromkeys(plan_ids)), every_plan=False, progress=progress)


def independent_units(graph: Graph) -> list[list[str]]:
    """The database's plans in groups that can be loaded and checked apart: each a plan hierarchy,
    joined with the hierarchies it shares an edge with (a DEPENDS_ON across them, or a PARENT
    across plans in broken data), so no rule misses what spans them (a dependency cycle through
    two hierarchies, say). Largest first; each group's plans in a stable order."""
    with _session(graph) as session:
        row = _single(session, query("graph/plan_links"))
    return units_of(row["parents"], row["crossings"])


def decision_total(graph: Graph) -> int:
    """How many decisions the database holds."""
    with _session(graph) as session:
        return int(_single(session, query("graph/decision_total"))["decisions"])


def units_of(parents: Iterable[Sequence[str | None]], crossings: Iterable[Sequence[str]]) -> list[list[str]]:
    """Group plans joined by a parent link or a crossing edge (union-find), largest group first.

    >>> units_of([["A", None], ["A1", "A"], ["B", None], ["C", None]], [["A1", "C"]])
    [['A', 'A1', 'C'], ['B']]
    """
    leader: dict[str, str] = {}

    def find(plan: str) -> str:
        leader.setdefault(plan, plan)
        while leader[plan] != plan:
            leader[plan] = leader[leader[plan]]
            plan = leader[plan]
        return plan

    def join(a: str, b: str) -> None:
        leader[find(a)] = find(b)

    for plan, parent in parents:
        assert plan is not None
        find(plan)
        if parent is not None:
            join(plan, parent)
    for a, b in crossings:
        join(a, b)
    groups: dict[str, list[str]] = {}
    for plan in sorted(leader):
        groups.setdefault(find(plan), []).append(plan)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def loads_of(units: Sequence[Sequence[str]], plans_per_load: int | None = None) -> list[list[list[str]]]:
    """``units`` (independent groups of plans) packed into loads: consecutive groups together up to
    ``plans_per_load`` plans (``PLANS_PER_LOAD`` by default), a larger group in a load of its own.

    A load is read by one statement of each kind, where a group alone cost its own handful (a
    database of many small hierarchies spent most of a ``check --all`` on round trips), and the
    rules run once over it; groups share no edge, so checking them together reports what checking
    each apart does. Memory holds the largest load: the largest group, or up to
    ``plans_per_load`` plans of smaller ones.

    >>> loads_of([["A", "A1", "A2"], ["B", "B1"], ["C"], ["D"]], 3)
    [[['A', 'A1', 'A2']], [['B', 'B1'], ['C']], [['D']]]
    """
    limit = PLANS_PER_LOAD if plans_per_load is None else plans_per_load
    loads: list[list[list[str]]] = []
    size = 0
    for unit in units:
        if not loads or size + len(unit) > limit:
            loads.append([])
            size = 0
        loads[-1].append(list(unit))
        size += len(unit)
    return loads


@contextmanager
def _session(graph: Graph) -> Iterator[neo4j.Session]:
    with (
        translated_errors(),
        graph.driver.session(database=graph.database, default_access_mode=neo4j.READ_ACCESS, fetch_size=FETCH_SIZE) as session,
    ):
        yield session


def _load(session: neo4j.Session, plan_ids: list[str], *, every_plan: bool, progress: bool | None) -> nx.MultiDiGraph[str]:
    show = sys.stderr.isatty() if progress is None else progress
    total = _single(session, query("graph/count_decisions"), plan_ids=plan_ids)["decisions"] if show else None
    G = decision_graph()
    with (
        tqdm(total=total, unit="decision", desc="loading", disable=not show, file=sys.stderr) as bar,
        collector_held_off(),
    ):
        for batch in _batches(plan_ids, PLANS_PER_QUERY):
            sizes = {}
            for row in session.run(query("graph/plan_rows"), plan_ids=batch):
                _add_plan_row(G, row)
                sizes[row["plan"]["plan_id"]] = row["decisions"]
            for collected in _by_size(batch, sizes, DECISIONS_PER_STATEMENT):
                if sizes.get(collected[0], 0) > DECISIONS_PER_STATEMENT:  # a plan too large to collect
                    for row in session.run(query("graph/plan_decision_rows"), plan_id=collected[0]):
                        _add_decision_row(G, row)
                        bar.update(1)
                    continue
                for plan_row in session.run(query("graph/decision_rows"), plan_ids=collected):
                    for row in plan_row["decisions"]:
                        _add_decision_row(G, row)
                    bar.update(len(plan_row["decisions"]))
            for row in session.run(query("graph/review_rows"), plan_ids=batch):
                _add_review_row(G, row)
            if not every_plan:
                for row in session.run(query("graph/attempt_rows"), plan_ids=batch):
                    _add_attempt_row(G, row)
        if every_plan:
            for row in session.run(query("graph/all_attempt_rows")):
                _add_attempt_row(G, row)
        else:  # with every plan loaded, no child plan is left out
            _add_child_plans(session, G)
    _add_boundary(session, G)
    return G


def _by_size(plan_ids: Sequence[str], sizes: Mapping[str, int], limit: int) -> Iterator[list[str]]:
    """``plan_ids`` in consecutive runs of at most ``limit`` decisions (by ``sizes``), a larger plan alone.

    >>> list(_by_size(["A", "B", "C", "D"], {"A": 2, "B": 2, "C": 5, "D": 1}, 4))
    [['A', 'B'], ['C'], ['D']]
    """
    run: list[str] = []
    total = 0
    for plan_id in plan_ids:
        size = sizes.get(plan_id, 0)
        if run and total + size > limit:
            yield run
            run, total = [], 0
        run.append(plan_id)
        total += size
    if run:
        yield run


def _plan_ids(session: neo4j.Session, scope: LoadScope, plan_id: str | None) -> list[str]:
    if scope is LoadScope.ALL:
        return [r["plan_id"] for r in session.run(query("graph/all_plan_ids"))]
    ids = [r["plan_id"] for r in session.run(query("graph/hierarchy_plan_ids"), plan_id=plan_id)]
    if not ids:
        raise NotFound("plan", plan_id or "")
    return ids if scope is LoadScope.HIERARCHY else ids[:1]


def _add_plan_row(G: nx.MultiDiGraph[str], row: neo4j.Record, *, boundary: bool = False) -> None:
    props = _properties(row["plan"])
    plan_id = props.pop("plan_id")
    add_plan(G, plan_id, boundary=boundary or None, **props)
    for parent in row["parent_plan_ids"]:
        add_edge(G, plan_id, parent, Rel.CHILD_OF)
    for spawning in row["spawned_by_ids"]:
        add_edge(G, plan_id, spawning, Rel.SPAWNED_BY)
    for attempt in row["invalidated_by_ids"]:
        add_edge(G, plan_id, attempt, Rel.INVALIDATED_BY)


def _add_decision_row(G: nx.MultiDiGraph[str], row: Mapping[str, Any]) -> None:
    props = _properties(row["decision"])
    decision_id = props.pop("decision_id")
    plan_id = props.pop("plan_id")
    add_decision(
        G,
        decision_id,
        plan_id=plan_id,
        decision_type=props.pop("decision_type"),
        sequence_number=props.pop("sequence_number"),
        has_context=row["has_context"],
        **props,
    )
    # The IN_PLAN edge the builder added follows the property; these follow the stored edges,
    # so a broken database shows as it is (a decision's one edge to its own plan is the builder's).
    if row["plan_ids"] != [plan_id]:
        for stored in row["plan_ids"]:
            add_edge(G, decision_id, stored, Rel.IN_PLAN)
    for parent in row["parent_ids"]:
        add_edge(G, decision_id, parent, Rel.PARENT)
    for dependency, ordinal in row["depends_on"]:
        add_edge(G, decision_id, dependency, Rel.DEPENDS_ON, ordinal=ordinal)
    for original in row["corrects_ids"]:
        add_edge(G, decision_id, original, Rel.CORRECTS)
    for successor, at in row["superseded_by"]:
        add_edge(G, decision_id, successor, Rel.SUPERSEDED_BY, at=_time(at))


def _add_review_row(G: nx.MultiDiGraph[str], row: neo4j.Record) -> None:
    props = _properties(row["review"])
    review_id = props.pop("review_id")
    props.pop("plan_id", None)
    add_review(G, review_id, plan_id=row["plan_id"], status=props.pop("status"), **props)
    for decision_id in row["resolved_as_ids"]:
        add_edge(G, review_id, decision_id, Rel.RESOLVED_AS)


def _add_attempt_row(G: nx.MultiDiGraph[str], row: neo4j.Record) -> None:
    props = _properties(row["attempt"])
    attempt_id = props.pop("attempt_id")
    add_attempt(G, attempt_id, **props)
    for decision_id in row["attempt_on_ids"]:
        add_edge(G, attempt_id, decision_id, Rel.ATTEMPT_ON)
    for decision_id in row["produced_ids"]:
        add_edge(G, attempt_id, decision_id, Rel.PRODUCED)


def _add_child_plans(session: neo4j.Session, G: nx.MultiDiGraph[str]) -> None:
    """Add the child plans of the scope's current spawning decisions that the scope left out (a
    parent plan loaded alone), marked boundary, with their edges as a loaded plan's: their
    SPAWNED_BY points into the scope, so ``_add_boundary`` never reaches them, and without them
    ``spawns_have_children`` found the spawns childless. Asked only for spawns no plan in the
    graph points at, so a hierarchy, which holds its spawns' children, is read as before."""
    childless = [
        d
        for d, data in decisions(G)
        if data["decision_type"] in _SPAWNING and data["status"] == "current" and not sources(G, d, Rel.SPAWNED_BY)
    ]
    if childless:
        for row in session.run(query("graph/boundary_child_plans"), decision_ids=childless):
            _add_plan_row(G, row, boundary=True)


_SPAWNING: Final = frozenset(t.value for t in SPAWNING_TYPES)


def _add_boundary(session: neo4j.Session, G: nx.MultiDiGraph[str]) -> None:
    """Fill in the far ends of edges that leave the scope, with their properties."""
    unknown = [n for n, data in G.nodes(data=True) if "label" not in data]
    kinds = {n: {key for _, _, key in G.in_edges(n, keys=True)} for n in unknown}
    decision_ids = [n for n, k in kinds.items() if k & _POINTS_AT_DECISION]
    for row in session.run(query("graph/boundary_decisions"), decision_ids=decision_ids):
        props = _properties(row["decision"])
        decision_id = props.pop("decision_id")
        plan_id = props.pop("plan_id")
        if plan_id not in G:
            kinds[plan_id] = {Rel.IN_PLAN.value}
        add_decision(
            G,
            decision_id,
            plan_id=plan_id,
            decision_type=props.pop("decision_type"),
            sequence_number=props.pop("sequence_number"),
            boundary=True,
            **props,
        )
    plan_ids = [n for n, k in kinds.items() if k & _POINTS_AT_PLAN]
    for row in session.run(query("graph/boundary_plans"), plan_ids=plan_ids):
        props = _properties(row["plan"])
        add_plan(G, props.pop("plan_id"), boundary=True, **props)
    for attempt_id in (n for n, k in kinds.items() if Rel.INVALIDATED_BY.value in k):
        add_attempt(G, attempt_id, boundary=True)


_POINTS_AT_DECISION = {
    r.value
    for r in (
        Rel.PARENT,
        Rel.DEPENDS_ON,
        Rel.CORRECTS,
        Rel.SUPERSEDED_BY,
        Rel.SPAWNED_BY,
        Rel.RESOLVED_AS,
        Rel.ATTEMPT_ON,
        Rel.PRODUCED,
    )
}
_POINTS_AT_PLAN = {r.value for r in (Rel.IN_PLAN, Rel.CHILD_OF, Rel.FOR_PLAN)}


TIMES = frozenset({"created_at", "superseded_at", "invalidated_at", "resolved_at", "at", "replayed_at"})
"""The properties the row statements send as ISO text (``toString``), made datetimes again here."""


def _properties(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _time(v) if k in TIMES else v if type(v) in _PLAIN else _value(v) for k, v in props.items() if v is not None}


_PLAIN: Final = frozenset({str, int, float, bool})
"""Values the driver gives as they are kept: nothing to convert."""


def _time(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return native_datetime(value)
        except ValueError:  # not a time after all (broken data shows as it is)
            return value
    return _value(value)


def _value(value: Any) -> Any:
    if isinstance(value, DateTime):
        native: datetime = value.to_native()
        return native
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _single(session: neo4j.Session, statement: LiteralString, **params: Any) -> neo4j.Record:
    return session.run(statement, params).single(strict=True)


def _batches(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
