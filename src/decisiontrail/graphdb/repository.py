"""The decision store: plans and decisions written and read as whole records, one transaction each."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import neo4j
from neo4j.exceptions import ConstraintError, ServiceUnavailable, SessionExpired, TransientError

from decisiontrail.cypher import query
from decisiontrail.domain import Decision, DecisionTree, Plan
from decisiontrail.domain.decision import DecisionType, utc_now
from decisiontrail.domain.rules import DecisionPlacement, SpawnLink, check_decision_placement, check_spawn_link
from decisiontrail.exceptions import Conflict, NotFound, Unavailable
from decisiontrail.graphdb.connection import Graph
from decisiontrail.graphdb.records import decision_from_record, decision_properties, plan_from_record, plan_properties


class DecisionStore:
    """Plans and their decisions in Neo4j.

    Every write is one managed transaction (retried by the driver on transient errors), so a
    refused or failed write leaves the database as it was. Rules are judged by
    ``decisiontrail.domain.rules`` against facts read inside that same transaction.
    """

    def __init__(self, graph: Graph) -> None:
        self._driver = graph.driver
        self._database = graph.database

    # -- plans -----------------------------------------------------------------------------

    def create_plan(self, plan: Plan) -> Plan:
        """Store a plan; a child plan is linked to its parent plan and its spawning decision."""

        def work(tx: neo4j.ManagedTransaction) -> None:
            row = tx.run(
                query("plan/read_spawn_link"),
                plan_id=plan.plan_id,
                parent_plan_id=plan.parent_plan_id,
                spawned_by_decision_id=plan.spawned_by_decision_id,
            ).single(strict=True)
            check_spawn_link(
                plan,
                SpawnLink(
                    plan_exists=row["plan_exists"],
                    parent_plan_exists=row["parent_plan_exists"],
                    spawning_exists=row["spawning_exists"],
                    spawning_plan_id=row["spawning_plan_id"],
                    spawning_type=DecisionType(row["spawning_type"]) if row["spawning_type"] else None,
                ),
            )
            tx.run(
                query("plan/create_plan"),
                props=plan_properties(plan),
                parent_plan_id=plan.parent_plan_id,
                spawned_by_decision_id=plan.spawned_by_decision_id,
            ).consume()

        self._write(work, conflict=f"plan {plan.plan_id} already exists")
        return plan

    def get_plan(self, plan_id: str) -> Plan:
        records = self._read(query("plan/get_plan"), plan_id=plan_id)
        if not records:
            raise NotFound("plan", plan_id)
        return plan_from_record(records[0])

    # -- decisions -------------------------------------------------------------------------

    def record_decision(self, decision: Decision) -> Decision:
        """Store a decision under the next sequence number of its plan; return it as stored.

        The sequence number is allocated under the plan's write lock, so concurrent writers
        into one plan get distinct, gap-free numbers in commit order.
        """

        def work(tx: neo4j.ManagedTransaction) -> int:
            row = tx.run(
                query("decision/read_placement"),
                plan_id=decision.plan_id,
                decision_id=decision.decision_id,
                decision_type=decision.decision_type.value,
                parent_decision_id=decision.parent_decision_id,
                depends_on=list(decision.depends_on),
                corrects_decision_id=decision.corrects_decision_id,
            ).single(strict=True)
            check_decision_placement(
                decision,
                DecisionPlacement(
                    plan_exists=row["plan_exists"],
                    decision_exists=row["decision_exists"],
                    current_root_id=row["current_root_id"],
                    parent_plan_id=row["parent_plan_id"],
                    parent_exists=row["parent_exists"],
                    parent_superseded=row["parent_superseded"],
                    missing_dependencies=tuple(row["missing_dependencies"]),
                    superseded_dependencies=tuple(row["superseded_dependencies"]),
                    corrected_exists=row["corrected_exists"],
                ),
            )
            sequence_number: int = row["sequence_number"]
            stored = decision.model_copy(update={"sequence_number": sequence_number})
            tx.run(
                query("decision/create_decision"),
                props=decision_properties(stored),
                plan_id=decision.plan_id,
                parent_decision_id=decision.parent_decision_id,
                depends_on=list(decision.depends_on),
                corrects_decision_id=decision.corrects_decision_id,
            ).consume()
            return sequence_number

        sequence_number = self._write(work, conflict=f"decision {decision.decision_id} is already recorded")
        return decision.model_copy(update={"sequence_number": sequence_number})

    def supersede(self, decision_id: str, superseded_by: str, at: datetime | None = None) -> None:
        """Mark ``decision_id`` as replaced by ``superseded_by``; refused if it already was."""

        def work(tx: neo4j.ManagedTransaction) -> int:
            row = tx.run(
                query("decision/supersede_decision"),
                decision_id=decision_id,
                superseded_by=superseded_by,
                at=at or utc_now(),
            ).single(strict=True)
            return int(row["superseded"])

        if self._write(work) == 1:
            return
        original = self.get_decision(decision_id)  # NotFound if it does not exist
        if original.superseded_by is not None:
            raise Conflict(f"decision {decision_id} is already superseded by {original.superseded_by}")
        raise NotFound("decision", superseded_by)

    def get_decision(self, decision_id: str) -> Decision:
        records = self._read(query("decision/get_decisions"), decision_ids=[decision_id])
        if not records:
            raise NotFound("decision", decision_id)
        return decision_from_record(records[0])

    def get_decisions(self, decision_ids: list[str]) -> list[Decision | None]:
        """One result per id, in the order given; None where no such decision exists."""
        records = self._read(query("decision/get_decisions"), decision_ids=decision_ids)
        found = {d.decision_id: d for d in map(decision_from_record, records)}
        return [found.get(decision_id) for decision_id in decision_ids]

    def list_decisions(self, plan_id: str, *, current_only: bool = False) -> list[Decision]:
        """A plan's decisions in sequence order; NotFound if the plan does not exist."""
        records = self._read(query("decision/list_plan_decisions"), plan_id=plan_id)
        if not records:
            self.get_plan(plan_id)  # raises NotFound for an unknown plan
        decisions = [decision_from_record(r) for r in records]
        return [d for d in decisions if d.is_current] if current_only else decisions

    def get_tree(self, plan_id: str) -> DecisionTree:
        """The plan's decision tree, everything ever recorded in it (superseded ones marked)."""
        decisions = self.list_decisions(plan_id)
        if not decisions:
            raise NotFound("root decision of plan", plan_id)
        return DecisionTree.build(plan_id, decisions)

    # -- plumbing --------------------------------------------------------------------------

    def _read(self, text: Any, **params: Any) -> list[neo4j.Record]:
        with _translated():
            records, _, _ = self._driver.execute_query(
                text, params, database_=self._database, routing_=neo4j.RoutingControl.READ
            )
        return records

    def _write(self, work: Any, *, conflict: str = "the write conflicts with another") -> Any:
        with _translated(conflict), self._driver.session(database=self._database) as session:
            return session.execute_write(work)


@contextmanager
def _translated(conflict: str = "the write conflicts with another") -> Iterator[None]:
    """Turn the driver's expected failures into the project's own; anything else is a bug and propagates."""
    try:
        yield
    except ConstraintError as e:
        raise Conflict(f"{conflict} ({e.message})") from e
    except TransientError as e:
        raise Conflict(f"the write kept conflicting with concurrent writes and was given up: {e.message}") from e
    except (ServiceUnavailable, SessionExpired) as e:
        raise Unavailable(f"Neo4j is unavailable: {e}") from e
