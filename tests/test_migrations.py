"""Schema migrations: applied at start-up, recorded, idempotent, and really enforcing."""

from __future__ import annotations

import neo4j
import pytest

from decisiontrail.cypher import migration_names
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import schema_names
from decisiontrail.graphdb.migrations import apply_migrations


def test_start_up_created_every_constraint_and_index(graph: Graph) -> None:
    constraints, indexes = schema_names(graph)

    assert {
        "decision_id_unique",
        "plan_id_unique",
        "decision_sequence_unique",
        "schema_migration_name_unique",
        "plan_lock_unique",
    } <= constraints
    assert {"decision_plan_id", "decision_type", "plan_project"} <= indexes


def test_applying_again_changes_nothing(graph: Graph) -> None:
    before = schema_names(graph)

    assert apply_migrations(graph) == []
    assert schema_names(graph) == before


def test_a_forgotten_ledger_is_rebuilt_without_errors(graph: Graph) -> None:
    graph.driver.execute_query("MATCH (m:SchemaMigration) DELETE m", database_=graph.database)

    applied = apply_migrations(graph)

    assert applied == [name.removeprefix("migrations/") for name in migration_names()]


def test_the_sequence_constraint_rejects_a_duplicate_written_around_the_store(graph: Graph) -> None:
    graph.driver.execute_query("MATCH (d:Decision {plan_id: 'TEST-DUP'}) DELETE d", database_=graph.database)
    graph.driver.execute_query(
        "CREATE (:Decision {decision_id: 'TEST-DUP-1', plan_id: 'TEST-DUP', sequence_number: 0})", database_=graph.database
    )
    try:
        with pytest.raises(neo4j.exceptions.ConstraintError):
            graph.driver.execute_query(
                "CREATE (:Decision {decision_id: 'TEST-DUP-2', plan_id: 'TEST-DUP', sequence_number: 0})",
                database_=graph.database,
            )
    finally:
        graph.driver.execute_query("MATCH (d:Decision {plan_id: 'TEST-DUP'}) DELETE d", database_=graph.database)
