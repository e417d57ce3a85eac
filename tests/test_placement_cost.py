"""Placing a decision reads what it is judged by through indexes: its cost does not grow with its plan.

On fresh index statistics the planner scanned the whole (plan_id, decision_type) index for the
plan's root, and a recording without an idempotency key (a correction, guidance) looked the null
key up by scanning the plan's decisions: a correction in a plan of 100,000 decisions spent most of
a second placing its one decision. Parent inference read every current decision of the parent's
types in the plan (about a microsecond each: a tenth of a second a recording in a plan of 100,000
tool invocations); it is an ordered seek from the end of an index now.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import neo4j
import pytest

from decisiontrail.cypher import query
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.placement import Recording, place_all
from decisiontrail.graphdb import Graph, decisions
from decisiontrail.graphdb.database import Transaction, lock_holder
from decisiontrail.services import Trail
from decisiontrail.services.recording import propose
from factories import actor_snapshot, db_hits, tool_input
from planning import operators


def _plan(graph: Graph, plan_id: str, size: int) -> None:
    graph.driver.execute_query(
        "CREATE (p:Plan {plan_id: $plan_id, next_sequence: $size, phase: 'execute'}) "
        "WITH p UNWIND range(0, $size - 1) AS i "
        "CREATE (:Decision {decision_id: $plan_id + '-' + i, plan_id: $plan_id, sequence_number: i, "
        "  decision_type: CASE i WHEN 0 THEN 'prompt_definition' ELSE 'tool_invocation' END, "
        "  actor_state_thread_id: 'run-' + (i % 3), idempotency_key: 'key-' + i})-[:IN_PLAN]->(p)",
        plan_id=plan_id,
        size=size,
        database_=graph.database,
    )


@contextmanager
def _rolled_back(graph: Graph) -> Iterator[neo4j.Transaction]:
    """A write transaction whose work is rolled back: a statement's cost without its writes."""
    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        try:
            yield tx
        finally:
            tx.rollback()


def _db_hits(graph: Graph, plan_id: str, key: str | None, infer_parent: bool) -> int:
    item = {
        "index": 0,
        "plan_id": plan_id,
        "decision_id": "NEW",
        "parent": None if infer_parent else 0,
        "inference_index": 0 if infer_parent else None,
        "depends_on": [],
        "corrects": None,
        "idempotency_key": key,
    }
    with _rolled_back(graph) as tx:
        summary = tx.run(
            "PROFILE " + query("decision/read_placements"),  # type: ignore[operator]
            plan_ids=[plan_id],
            holder=lock_holder(tx),
            dependency_ids=[],
            named_ids=[] if infer_parent else [f"{plan_id}-1"],
            inferences=[{"plan_id": plan_id, "parent_types": ["tool_invocation"], "actor_thread": "run-1"}]
            if infer_parent
            else [],
            items=[item],
        ).consume()
    assert summary.profile is not None
    return db_hits(summary.profile)


@pytest.mark.parametrize("infer_parent", [False, True], ids=["a parent named", "a parent inferred"])
@pytest.mark.parametrize("key", [None, "key-7"], ids=["no key", "a key"])
def test_placing_costs_the_same_in_a_plan_of_any_size(store: Trail, graph: Graph, key: str | None, infer_parent: bool) -> None:
    _plan(graph, "SMALL", 10)
    _plan(graph, "LARGE", 3_000)
    small = _db_hits(graph, "SMALL", key, infer_parent)
    large = _db_hits(graph, "LARGE", key, infer_parent)
    # An index seek's hits do not depend on the plan's size; a scan's grow with it (thousands here,
    # and a scan of a whole index with the database's 3,010 decisions).
    assert large <= small + 50, (small, large)
    assert small < 1_000, small


class _Profiled:
    """A transaction whose statements run under PROFILE: ``db_hits`` is the last one's, once read."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx
        self.db_hits = 0

    def run(self, statement: str, **params: Any) -> _Profiled:
        self.result = self.tx.run("PROFILE " + statement, **params)  # type: ignore[arg-type]
        return self

    def single(self, strict: bool = False) -> Any:
        record = self.result.single(strict=strict)
        profile = self.result.consume().profile
        assert profile is not None
        self.db_hits = db_hits(profile)
        return record


def _placement_hits(graph: Graph, plan_id: str, recordings: list[Recording]) -> int:
    with _rolled_back(graph) as tx:
        profiled = _Profiled(tx)
        decisions.read_placements(profiled, recordings)  # type: ignore[arg-type]
    return profiled.db_hits


def test_each_recording_of_a_batch_adds_only_its_own_facts(store: Trail, graph: Graph) -> None:
    """A batch infers a parent once for each plan, type and actor run, and looks each recording's
    key up by a seek: fifty recordings cost one and fifty small lookups, not fifty reads of the plan.
    (Planned on the statistics of a database that had since grown, the key's lookup read the plan's
    decisions for each recording: 200,341 hits for fifty.)"""
    plan_id = new_ulid()
    _plan(graph, plan_id, 2_000)

    def batch(size: int, runs: int = 1) -> list[Recording]:
        return [
            Recording.of(
                propose(
                    tool_input("error_recovery", question=f"recover {i}?"),
                    plan_id=plan_id,
                    snapshot=actor_snapshot(f"run-{i % runs}"),
                )
            )
            for i in range(size)
        ]

    one, fifty, fifty_in_two_runs = (
        _placement_hits(graph, plan_id, batch(1)),
        _placement_hits(graph, plan_id, batch(50)),
        _placement_hits(graph, plan_id, batch(50, runs=2)),
    )
    # Each further recording adds its own few facts (its key's seek), not another read of the plan's
    # 2,000 decisions (thousands of hits).
    assert one < 1_000, one
    assert fifty < one + 50 * 40, (one, fifty)
    assert fifty_in_two_runs < 2 * one + 50 * 40, (one, fifty_in_two_runs)


def test_each_decision_a_batch_names_is_read_once(store: Trail, graph: Graph) -> None:
    """Fifty recordings that depend on the same two decisions read them once, as they read their
    shared parent once: the placement read looked each dependency up twice for each recording (is
    it there, is it superseded), 480 hits against 76 for the same batch without dependencies."""
    plan_id, (parent, *dependencies) = new_ulid(), [new_ulid() for _ in range(3)]
    _named_decisions(graph, plan_id, [parent, *dependencies])

    def batch(depends_on: list[str]) -> list[Recording]:
        return [
            Recording.of(
                propose(
                    tool_input("error_recovery", question=f"recover {i}?", parent_decision_id=parent),
                    plan_id=plan_id,
                    snapshot=actor_snapshot(),
                    depends_on=depends_on,
                )
            )
            for i in range(50)
        ]

    without = _placement_hits(graph, plan_id, batch([]))
    depending = _placement_hits(graph, plan_id, batch(dependencies))
    assert depending < without + 50, (without, depending)


def _named_decisions(graph: Graph, plan_id: str, named: list[str]) -> None:
    """A plan in Execute that never holds a decision for review, with its root and the decisions ``named``."""
    graph.driver.execute_query(
        "CREATE (p:Plan {plan_id: $plan_id, next_sequence: size($named) + 1, phase: 'execute', "
        "  automation_edit_code: 0.0, automation_execute_command: 0.0}) "
        "CREATE (:Decision {decision_id: $plan_id, plan_id: $plan_id, sequence_number: 0, decision_type: 'prompt_definition'})-[:IN_PLAN]->(p) "
        "WITH p UNWIND range(1, size($named)) AS i "
        "CREATE (:Decision {decision_id: $named[i - 1], plan_id: $plan_id, sequence_number: i, decision_type: 'tool_invocation'})-[:IN_PLAN]->(p)",
        plan_id=plan_id,
        named=named,
        database_=graph.database,
    )


def _row_keyed_seeks(plan: dict[str, Any]) -> list[str]:
    """The index seeks of a statement's plan keyed by a value of one of its rows (or items), but a
    review's: a decision resolves a review of its own (one each), which it links to by a seek."""
    return [
        details for op, details in operators(plan) if "IndexSeek" in op and re.search(r"\b(row|item)\.(?!review_id)", details)
    ]


@pytest.mark.parametrize("statement", ["decision/create_decisions", "correction/supersede_downstream"])
def test_the_write_seeks_no_plan_or_decision_again_for_each_decision(graph: Graph, statement: str) -> None:
    """In a statement that writes, a unique index seek locks the entry it reads: the write of a batch
    of 1,000 spent a seventh of its time seeking its decisions' plans and parents once per decision.
    It matches each plan and each decision the batch names once, before (or after) the rows."""
    summary = graph.driver.execute_query("EXPLAIN " + query(statement), database_=graph.database).summary  # type: ignore[operator]
    assert summary.plan is not None
    assert _row_keyed_seeks(summary.plan) == []


def test_each_decision_of_a_batch_links_to_the_decisions_it_names(store: Trail, graph: Graph) -> None:
    """A row names its plan and the decisions it links to by their places in lists the write
    matches once (graphdb.decisions.creation_params): each of fifty decisions gets its own links."""
    plan_id, (parent, *dependencies) = new_ulid(), [new_ulid() for _ in range(3)]
    _named_decisions(graph, plan_id, [parent, *dependencies])
    recordings = [
        Recording.of(
            propose(
                tool_input("error_recovery", question=f"recover {i}?", parent_decision_id=parent),
                plan_id=plan_id,
                snapshot=actor_snapshot(),
                depends_on=dependencies[: i % 3],
            )
        )
        for i in range(50)
    ]
    with _rolled_back(graph) as tx:
        placed = place_all(recordings, decisions.read_placements(tx, recordings), at=utc_now())
        decisions.create_all(tx, placed.decisions, placed.sequences)
        links = tx.run(
            "MATCH (d:Decision {plan_id: $plan_id})-[:IN_PLAN]->(:Plan {plan_id: $plan_id}) WHERE d.sequence_number >= 4 "
            "RETURN d.question AS question, COLLECT { MATCH (d)-[:PARENT]->(p) RETURN p.decision_id } AS parents, "
            "  COLLECT { MATCH (d)-[o:DEPENDS_ON]->(x) RETURN x.decision_id ORDER BY o.ordinal } AS dependencies "
            "ORDER BY d.sequence_number",
            plan_id=plan_id,
        ).data()
    assert links == [{"question": f"recover {i}?", "parents": [parent], "dependencies": dependencies[: i % 3]} for i in range(50)]


def _correction_read(graph: Graph, plan_id: str) -> tuple[str | None, int]:
    """begin_correction of the plan's second decision, under PROFILE: the plan's root it found (the
    placement fact a correction decision is judged by) and the statement's hits (rolled back)."""
    with _rolled_back(graph) as tx:
        result = tx.run(
            "PROFILE " + query("correction/begin_correction"),  # type: ignore[operator]
            holder=lock_holder(tx),
            decision_id=f"{plan_id}-1",
            correction_id=new_ulid(),
            also_lock=[],
        )
        root_id = result.single(strict=True)["current_root_id"]
        profile = result.consume().profile
    assert profile is not None
    return root_id, db_hits(profile)


def test_a_correction_reads_what_places_it_at_the_same_cost_in_a_plan_of_any_size(store: Trail, graph: Graph) -> None:
    """A correction's reads take what placing its decision is judged by (the plan's root, the
    corrected decision's parent) by seeks: nothing they read grows with the plan. (Append mode
    read the plan's latest decision too, once by reading and sorting every decision of the plan;
    it hangs the correction under the corrected decision's parent now, as revert does.)"""
    _plan(graph, "SMALL", 10)
    _plan(graph, "LARGE", 3_000)
    (small_root, small), (large_root, large) = _correction_read(graph, "SMALL"), _correction_read(graph, "LARGE")
    assert (small_root, large_root) == ("SMALL-0", "LARGE-0")
    assert large <= small + 50, (small, large)
    # Every lookup a seek, hinted where stale statistics could make the planner scan an index (the
    # old statement read 15,160 hits for the plan of 10 in one run of this module).
    assert small < 1_000, small
