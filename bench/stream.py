"""The offline rows' baseline as a process of its own: the driver streaming every decision's row,
as a user's script would, from the interpreter's start to its exit.

``python -m bench.stream PLAN_IDS_QUERY ROWS_QUERY`` connects to ``NEO4J_URI`` (its
``NEO4J_DATABASE``, with ``NEO4J_USER`` and ``NEO4J_PASSWORD`` if set, as the command line
reads them), reads every plan's id, streams the plans' decisions' rows 200 plans a statement
(``graph/decision_rows``: one row per plan, holding its decisions) and prints how many
decisions it read. The queries' text comes in its arguments, so this process imports the driver
alone, not decisiontrail: it pays what a script of its own would (the interpreter's start, the
driver's import, a connection), no more.
"""

from __future__ import annotations

import os
import sys

import neo4j

PLANS_PER_STATEMENT = 200
FETCH_SIZE = 2000


def stream(driver: neo4j.Driver, database: str, plan_ids_query: str, rows_query: str) -> int:
    """Every decision's row, read and dropped: how many decisions were read."""
    count = 0
    with driver.session(database=database, fetch_size=FETCH_SIZE) as session:
        plan_ids = [r["plan_id"] for r in session.run(plan_ids_query)]
        for start in range(0, len(plan_ids), PLANS_PER_STATEMENT):
            rows = session.run(rows_query, plan_ids=plan_ids[start : start + PLANS_PER_STATEMENT])
            for row in rows:
                count += len(row["decisions"])  # one row per plan, holding its decisions
    return count


def main(plan_ids_query: str, rows_query: str) -> None:
    password = os.environ.get("NEO4J_PASSWORD") or None
    user = os.environ.get("NEO4J_USER") or os.environ.get("NEO4J_USERNAME") or "neo4j"
    auth = neo4j.basic_auth(user, password) if password is not None else None
    with neo4j.GraphDatabase.driver(os.environ["NEO4J_URI"], auth=auth) as driver:
        print(stream(driver, os.environ.get("NEO4J_DATABASE") or "neo4j", plan_ids_query, rows_query))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
