"""Schema migrations: constraints and indexes, applied idempotently at start-up and recorded."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, LiteralString

import neo4j
from neo4j.exceptions import ClientError, TransientError

from decisiontrail.cypher import migration_names, query

if TYPE_CHECKING:
    from decisiontrail.graphdb.connection import Graph


def apply_migrations(graph: Graph) -> list[str]:
    """Apply every migration not yet recorded in the ledger; return the names applied.

    Each migration is one statement: a schema statement written with ``IF NOT EXISTS``, or a
    data fix written to find nothing left to do on a second run; so running one twice (say, two
    processes starting together) is harmless (``_run``: Neo4j refuses the second of two identical
    creations made at once, which is taken as done). Schema statements cannot share a transaction with
    writes, so each runs in its own, auto-committed: a data fix over many nodes commits as it goes
    (``CALL { ... } IN TRANSACTIONS``, which only an auto-commit transaction may run), where one
    transaction would outgrow the server's transaction memory. Once any was applied, start-up waits
    until every index is online.
    """
    records, _, _ = graph.driver.execute_query(query("migration/list_applied"), database_=graph.database, routing_="r")
    done = {record["name"] for record in records}
    applied = []
    with graph.driver.session(database=graph.database) as session:
        for name in migration_names():
            short = name.removeprefix("migrations/")
            if short in done:
                continue
            _run(session, query(name))
            _run(session, query("migration/record_applied"), name=short)
            applied.append(short)
        if applied:
            _run(session, query("migration/await_indexes"), timeout_s=INDEX_POPULATION_TIMEOUT_S)
    return applied


INDEX_POPULATION_TIMEOUT_S = 3600
"""How long start-up waits for the indexes a migration made to be populated: a statement that names
an index in a hint fails until it is online, and on a database of millions of decisions a new
index takes minutes."""


CREATED_MEANWHILE = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
"""What Neo4j answers the second of two processes creating the same index or constraint at the
same moment, ``IF NOT EXISTS`` or not: what it asked for exists, made by the first."""
ATTEMPTS = 5
"""How often a migration's statement is tried while it meets another process's (a deadlock between
two data fixes, say) before the start-up fails."""


def _run(session: neo4j.Session, statement: LiteralString, **parameters: object) -> None:
    """``statement`` auto-committed, as it would run alone, though another process may be applying
    the same migration at the same moment: an index or constraint it made meanwhile is the one
    this statement would have made, and a transient conflict is tried again after a short wait."""
    delay = 0.05
    for attempt in range(1, ATTEMPTS + 1):
        try:
            session.run(statement, parameters).consume()
            return
        except ClientError as e:
            if e.code == CREATED_MEANWHILE:
                return
            raise
        except TransientError:
            if attempt == ATTEMPTS:
                raise
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay *= 2
