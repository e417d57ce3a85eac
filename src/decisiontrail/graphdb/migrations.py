"""Schema migrations: constraints and indexes, applied idempotently at start-up and recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from decisiontrail.cypher import migration_names, query

if TYPE_CHECKING:
    from decisiontrail.graphdb.connection import Graph


def apply_migrations(graph: Graph) -> list[str]:
    """Apply every migration not yet recorded in the ledger; return the names applied.

    Each migration is one statement: a schema statement written with ``IF NOT EXISTS``, or a
    data fix written to find nothing left to do on a second run; so running one twice (say, two
    processes starting together) is harmless. Schema statements cannot share a transaction with
    writes, so each runs in its own, auto-committed: a data fix over many nodes commits as it goes
    (``CALL { ... } IN TRANSACTIONS``, which only an auto-commit transaction may run), where one
    transaction would outgrow the server's transaction memory.
    """
    records, _, _ = graph.driver.execute_query(query("migration/list_applied"), database_=graph.database, routing_="r")
    done = {record["name"] for record in records}
    applied = []
    with graph.driver.session(database=graph.database) as session:
        for name in migration_names():
            short = name.removeprefix("migrations/")
            if short in done:
                continue
            session.run(query(name)).consume()
            session.run(query("migration/record_applied"), name=short).consume()
            applied.append(short)
    return applied
