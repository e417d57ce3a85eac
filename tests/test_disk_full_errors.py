"""Neo4j unable to write its files (its disk full) reaches a client as UNAVAILABLE saying so, never as an error without a code.

The errors are Neo4j 5.26's own, as its driver raised them in a run of ``reliability.disk``: the
commit that met the full disk, then every transaction while the database waits to be restarted.
Filling a real disk needs a filesystem of its own; that scenario does it.
"""

from __future__ import annotations

import pytest
from neo4j.exceptions import DatabaseError, Neo4jError, ResultFailedError

from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb.database import translated_errors

COMMIT_NOT_LOGGED = {
    "code": "Neo.DatabaseError.Transaction.TransactionLogError",
    "message": "Could not append transaction: Transaction #29 {started 2026-12-05 11:21:54.617+0000, with 4 commands "
    "in this transaction, lease -1, latest committed transaction id when started was 28, consensusIndex: -1} to log.",
}
COMMIT_NOT_APPLIED = {  # as a run of reliability.disk met it: the full disk a step after the log's append
    "code": "Neo.DatabaseError.Transaction.TransactionCommitFailed",
    "message": "Could not apply the transaction: Transaction #596 {started 2026-12-05 20:03:00.626+0000, committed "
    "2026-12-05 20:03:00.967+0000, with 74 commands in this transaction, lease -1, latest committed transaction id "
    "when started was 582, consensusIndex: -1} to the store after written to log.",
}
PANICKED = {
    "code": "Neo.DatabaseError.Transaction.TransactionStartFailed",
    "message": "The database has encountered a critical error, and needs to be restarted. "
    "Please see database logs for more details.",
}


def _raised(error: Exception) -> Unavailable:
    with pytest.raises(Unavailable) as raised, translated_errors():
        raise error
    return raised.value


def test_a_commit_neo4j_could_not_log_is_unavailable_and_says_why() -> None:
    error = Neo4jError._hydrate_neo4j(**COMMIT_NOT_LOGGED)
    assert isinstance(error, DatabaseError)

    refused = _raised(error)

    assert refused.code == "UNAVAILABLE"
    assert "could not write the commit to its transaction log" in refused.message
    assert "disk may be full" in refused.message
    assert "same idempotency key" in refused.message


def test_a_commit_logged_but_not_applied_is_unavailable_and_says_a_retry_finds_it() -> None:
    refused = _raised(Neo4jError._hydrate_neo4j(**COMMIT_NOT_APPLIED))

    assert refused.code == "UNAVAILABLE"
    assert "could not apply it" in refused.message and "disk may be full" in refused.message
    assert "same idempotency key" in refused.message and "wrote nothing" not in refused.message


def test_another_commit_failure_still_propagates() -> None:
    other = Neo4jError._hydrate_neo4j(code=COMMIT_NOT_APPLIED["code"], message="Could not commit for another reason.")

    with pytest.raises(DatabaseError), translated_errors():
        raise other


def test_a_database_that_panicked_is_unavailable_until_restarted() -> None:
    refused = _raised(Neo4jError._hydrate_neo4j(**PANICKED))

    assert refused.code == "UNAVAILABLE"
    assert "must be restarted" in refused.message
    assert "disk may be full" in refused.message
    assert "wrote nothing" in refused.message


def test_the_same_failure_wrapped_by_the_driver_is_unavailable() -> None:
    wrapped = ResultFailedError(None, "the result failed earlier")  # type: ignore[arg-type]
    wrapped.__cause__ = Neo4jError._hydrate_neo4j(**PANICKED)

    assert _raised(wrapped).code == "UNAVAILABLE"


def test_another_database_error_still_propagates() -> None:
    other = Neo4jError._hydrate_neo4j(code="Neo.DatabaseError.General.UnknownError", message="something else broke")

    with pytest.raises(DatabaseError), translated_errors():
        raise other
