"""A write's retries share its time limit: however often it meets concurrent writes, it is answered within it."""

from __future__ import annotations

import time

import pytest
from neo4j.exceptions import TransientError

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.database import CONTENTION_RETRY_TIME, Database


def test_each_retry_gets_only_what_is_left_of_the_limit(graph: Graph) -> None:
    database = Database(graph)
    given: list[float | None] = []

    def contended(session: object, left: float | None) -> None:
        given.append(left)
        time.sleep(0.2)  # as if it waited on a lock, then lost a deadlock
        raise TransientError("Neo.TransientError.Transaction.DeadlockDetected", "deadlock")

    started = time.monotonic()
    with pytest.raises(TransientError):
        database._with_contention_retries(contended, 2.0)
    took = time.monotonic() - started

    assert len(given) > 2  # it was retried
    assert all(left is not None for left in given)
    lefts = [left for left in given if left is not None]
    assert lefts == sorted(lefts, reverse=True) and lefts[0] <= 2.0  # what is left shrinks
    assert took < 2.0 + 0.5 + 0.3  # the limit, one last minimal attempt, and scheduling
    assert CONTENTION_RETRY_TIME > 2.0  # the budget, not the retries' own default, bounded it
