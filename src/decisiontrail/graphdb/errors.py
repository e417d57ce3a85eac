"""Neo4j's and the driver's failures translated into the service's errors (``decisiontrail.exceptions``):
an outage is ``UNAVAILABLE``, a time limit ``TIMEOUT``, a transaction too large ``TOO_LARGE``, a
store that cannot write its files ``UNAVAILABLE`` with what an operator must do, a uniqueness
constraint ``CONFLICT``. What ``database`` runs every read and write inside."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    ConstraintError,
    DatabaseUnavailable,
    ForbiddenOnReadOnlyDatabase,
    Neo4jError,
    NotALeader,
    ResultFailedError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from decisiontrail.exceptions import Conflict, TimedOut, TooLarge, Unavailable

log = logging.getLogger("decisiontrail.graphdb.database")

TIMED_OUT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    }
)
TERMINATED_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.Terminated",
        "Neo.TransientError.Transaction.Terminated",
        # A transaction stopped while it waited for a lock: by its time limit, a terminate or a shutdown.
        "Neo.ClientError.Transaction.LockClientStopped",
        "Neo.TransientError.Transaction.LockClientStopped",
    }
)
# A transaction past db.memory.transaction.max, or past a total the server's transactions share. Neo4j
# 5.26 reports both as transient; retrying one that is too large by itself fails the same way each time.
OUT_OF_MEMORY_CODES = frozenset(
    {
        "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
        "Neo.ClientError.General.TransactionOutOfMemoryError",
    }
)
# Neo4j could not write its files (seen: a disk full under its transaction log). The commit that
# met it is refused with TransactionLogError, and the database then "panics": every later
# transaction, read or write, is refused with the panic's message until Neo4j is restarted. The
# driver's error carries only Neo4j's message, not the IOException (that is in Neo4j's debug.log).
WRITE_FAILED_CODES = frozenset({"Neo.DatabaseError.Transaction.TransactionLogError"})
PANIC_MESSAGE = "has encountered a critical error, and needs to be restarted"
"""What Neo4j 5.26 says of a database that stopped taking transactions after a critical error."""
# A commit the full disk met a step later: appended to the transaction log, then not applied to the
# store (the panic follows). Recovery applies what the log holds when Neo4j restarts, so the
# request may yet be recorded: the client retries it with its idempotency key.
NOT_APPLIED_CODE = "Neo.DatabaseError.Transaction.TransactionCommitFailed"
NOT_APPLIED_MESSAGE = "to the store after written to log"
_MEMORY_LIMIT = re.compile(r"the limit ([\d.]+ ?\w+)\..*?([\w.]+) threshold reached", re.DOTALL)

# No connection free within the driver's acquisition timeout (every one busy, or each found dead on
# its health check) is an outage to the client as well: nothing was sent, a retry may find one.
_OUTAGES = (
    ServiceUnavailable,
    SessionExpired,
    DatabaseUnavailable,
    NotALeader,
    ForbiddenOnReadOnlyDatabase,
    ConnectionAcquisitionTimeoutError,
)

SILENT_CONNECTION = "silent_connection"
"""Set (``extra``) on the log record of a connection given up because Neo4j sent nothing on it for
the driver's read timeout (the server's ``connection.recv_timeout_seconds`` hint): an answer lost on
the way. The reliability harness counts them (or, from a service's log, its message) to tell that
UNAVAILABLE from any other."""
SILENT_CONNECTION_MESSAGE = "Neo4j sent nothing on a connection for the read timeout; given up"
"""How such a record's message begins."""


_CONFLICT = "the write conflicts with another"


@contextmanager
def translated_errors(conflict: str = _CONFLICT, *, timeout: float | None = None) -> Iterator[None]:
    """Turn the driver's expected failures into the project's own; anything else is a bug and propagates.

    A transaction Neo4j ended (terminated, or stopped waiting for a lock) is ``TIMEOUT`` when it
    ran for its whole time limit; otherwise Neo4j ended it for its own reasons (it is stopping,
    or an operator terminated it) and that is an outage: ``UNAVAILABLE``, which a client retries.
    """
    started = time.monotonic()
    try:
        yield
    except ConstraintError as e:
        raise Conflict(f"{conflict} ({e.message})") from e
    # Before TransientError: these are transient to the server (stopping, starting, a leader switch) but outages to a client.
    except _OUTAGES as e:
        raise _unavailable(e) from e
    except Neo4jError as e:
        if _cannot_write(e):
            raise _write_failed(e) from e
        ran_out = timeout is not None and time.monotonic() - started >= timeout
        if e.code in TIMED_OUT_CODES or (e.code in TERMINATED_CODES and ran_out):
            raise timed_out(timeout) from e
        if e.code in TERMINATED_CODES:
            raise _unavailable(e) from e
        if e.code in OUT_OF_MEMORY_CODES and _out_of_memory(e):
            raise _too_large(e) from e
        if isinstance(e, TransientError):
            raise Conflict(f"the write kept conflicting with concurrent writes and was given up: {e.message}") from e
        raise
    except ResultFailedError as e:
        # The driver reports a failure it met earlier in the same transaction this way; the
        # cause is what happened (a connection lost while Neo4j stops, say).
        if isinstance(e.__cause__, _OUTAGES):
            raise _unavailable(e.__cause__) from e
        if isinstance(e.__cause__, Neo4jError) and _cannot_write(e.__cause__):
            raise _write_failed(e.__cause__) from e
        if _out_of_memory(e) and isinstance(e.__cause__, Neo4jError):
            raise _too_large(e.__cause__) from e
        raise


def timed_out(timeout: float | None) -> TimedOut:
    limit = f" of {timeout:g}s" if timeout else ""
    return TimedOut(f"the request ran past its time limit{limit} and was stopped; it wrote nothing")


def _out_of_memory(error: Exception) -> bool:
    """Whether ``error`` (or the failure the driver wrapped in it) is one transaction over its own
    memory limit. Over the pool all transactions share (``db.memory.transaction.total.max``) is
    contention, not size: other transactions will finish, and a retry can succeed."""
    return any(
        isinstance(e, Neo4jError) and e.code in OUT_OF_MEMORY_CODES and "total" not in _limit_setting(e)
        for e in (error, error.__cause__)
    )


def _limit_setting(error: Neo4jError) -> str:
    found = _MEMORY_LIMIT.search(error.message or "")
    return found[2] if found else ""


def _too_large(error: Neo4jError) -> TooLarge:
    found = _MEMORY_LIMIT.search(error.message or "")
    limit = f"{found[1]}, {found[2]}" if found else "db.memory.transaction.max"
    return TooLarge(
        f"the request needs more memory in one transaction than Neo4j allows ({limit}) and was rolled back: "
        "it wrote nothing. Make it smaller, or raise the limit (DECISIONTRAIL_NEO4J_TX_MEMORY_MB for the "
        "embedded Neo4j, db.memory.transaction.max on a server of your own)",
        limit=limit,
    )


def _cannot_write(error: Exception) -> bool:
    """Whether ``error`` (or the failure the driver wrapped in it) is Neo4j unable to write its
    files: a commit it could not append to its transaction log, or a database that panicked."""
    return any(
        isinstance(e, Neo4jError) and (e.code in WRITE_FAILED_CODES or PANIC_MESSAGE in (e.message or "") or _not_applied(e))
        for e in (error, error.__cause__)
    )


def _not_applied(error: Neo4jError) -> bool:
    return error.code == NOT_APPLIED_CODE and NOT_APPLIED_MESSAGE in (error.message or "")


def _write_failed(error: Neo4jError) -> Unavailable:
    """A store that cannot be written, as an outage a client retries: what happened, and that
    nothing of the request stays half written (a commit Neo4j could not log is not applied)."""
    log.error("Neo4j cannot write (is its disk full? see Neo4j's debug.log): %s %s", error.code, error.message)
    if error.code in WRITE_FAILED_CODES:
        return Unavailable(
            "Neo4j could not write the commit to its transaction log (its disk may be full) and did not apply it; "
            "retry the request with the same idempotency key once Neo4j can write again"
        )
    if _not_applied(error):
        return Unavailable(
            "Neo4j wrote the commit to its transaction log but could not apply it (its disk may be full); it is "
            "applied when Neo4j restarts and recovers: retry the request with the same idempotency key once Neo4j "
            "can write again, and it is answered with what was recorded"
        )
    return Unavailable(
        "Neo4j has stopped taking transactions after it could not write (its disk may be full) and must be "
        "restarted; the request wrote nothing and can be retried"
    )


def _unavailable(error: Exception) -> Unavailable:
    # The driver's message names hosts and ports: it goes to the log, not to clients.
    if _timed_out_reading(error):
        log.warning("%s: %s", SILENT_CONNECTION_MESSAGE, error, extra={SILENT_CONNECTION: True})
    else:
        log.warning("Neo4j is unavailable: %s", error)
    return Unavailable("Neo4j is unavailable; the request wrote nothing and can be retried")


def _timed_out_reading(error: BaseException) -> bool:
    """Whether a socket read timed out somewhere in ``error``'s chain of causes."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, TimeoutError):
            return True
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return False
