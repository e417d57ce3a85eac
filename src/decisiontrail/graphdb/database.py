"""The unit of work: the one way work reaches Neo4j, as bounded reads and write transactions, errors translated (``errors``).

Every write transaction, and every read (its statements together), carries a timeout
(``Graph.query_timeout``), so a query that runs too long is stopped by Neo4j and answered
``TIMEOUT``; and the request it serves, named in its metadata, so a request whose client went
away can stop its query (``Database.terminate_request``). Writes retry
contention between writers; an unreachable server is reported at once. The data mappers beside
this module are functions of a transaction; the services hand them to ``read`` and ``write``.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
import weakref
from collections.abc import Callable
from typing import Any, Concatenate, LiteralString, ParamSpec, Protocol, TypeVar

import neo4j
from neo4j.exceptions import (
    DatabaseUnavailable,
    ForbiddenOnReadOnlyDatabase,
    IncompleteCommit,
    Neo4jError,
    NotALeader,
    ResultFailedError,
    ServiceUnavailable,
    TransientError,
)

from decisiontrail.cypher import query
from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb import timing
from decisiontrail.graphdb.connection import REQUEST_METADATA_KEY, Graph, request_tag
from decisiontrail.graphdb.errors import (
    _CONFLICT,
    SILENT_CONNECTION,
    SILENT_CONNECTION_MESSAGE,
    TERMINATED_CODES,
    TIMED_OUT_CODES,
    _cannot_write,
    _out_of_memory,
    _timed_out_reading,
    timed_out,
    translated_errors,
)

__all__ = ["SILENT_CONNECTION", "SILENT_CONNECTION_MESSAGE", "Database", "Rows", "Statements", "Transaction", "translated_errors"]

T = TypeVar("T")
P = ParamSpec("P")
log = logging.getLogger(__name__)


class Rows(list[Any]):
    """A batch's rows as a statement parameter, which the driver's debug log shows by their count.

    The driver formats every statement's parameters for that log (``repr``) whether the log is on
    or not: for the write of a batch of 1,000 decisions, 1.3 MB of text and 7.7 ms in the lab, to
    be thrown away. The rows themselves are sent as any list is.

    >>> repr({"rows": Rows([{"a": 1}, {"a": 2}])})
    "{'rows': <2 rows>}"
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


class Transaction(Protocol):
    """What a data mapper runs its statements in: a write transaction (``neo4j.Transaction``, whose
    ``commit`` and ``rollback`` are the unit of work's), or a read's ``Statements``."""

    def run(self, query: LiteralString, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result: ...


_holders: weakref.WeakKeyDictionary[Transaction, str] = weakref.WeakKeyDictionary()


def lock_holder(tx: Transaction) -> str:
    """A token of ``tx``'s own, which marks the plan locks (``:PlanLock``) it takes.

    A statement that takes a plan's lock writes its node only if ``tx`` does not hold it already:
    Neo4j 5 makes every transaction queued on a node's lock a deadlock victim when the holder sets
    a property of it from its own value again (``SET n.x = n.x + 1``, even ``+ 0``: Cypher locks the
    node explicitly before such a read; a constant ``SET`` does not), so a use-case that locked a
    plan in one statement and reaches it in another (a correction's second round, a phase read
    after locking a decision) would send every writer waiting on the plan back to retry.
    """
    return _holders.setdefault(tx, uuid.uuid4().hex)


class Statements:
    """A read's statements, each sent as a transaction of its own (auto-commit: the statement and
    its records in one round trip, where an explicit transaction adds a round trip to begin and one
    to commit), one after another in one session, which chains them causally (each sees at least
    what the one before it saw, on any member of a cluster).

    Nothing is lost by it: Neo4j's transactions are read committed (non-repeatable reads may occur:
    https://neo4j.com/docs/operations-manual/current/database-internals/), so the statements of one
    read transaction see what commits between them all the same, and a read takes no locks. Each
    statement runs with what is left of the read's time limit and carries the request's tag.
    """

    def __init__(self, session: neo4j.Session, timeout: float | None) -> None:
        self._session = session
        self._timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def run(self, query: LiteralString, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result:
        left = None
        if self._deadline is not None:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise timed_out(self._timeout)
        return self._session.run(neo4j.Query(query, metadata=transaction_metadata(), timeout=left), parameters, **kwparameters)


CONTENTION_RETRY_TIME = 30.0
"""How long a write keeps retrying while it conflicts with concurrent writes."""
MIN_ATTEMPT_SECONDS = 0.5
"""The least time a retried attempt is given, however little of the request's limit is left."""
CONTENTION_FIRST_DELAY = 0.02
CONTENTION_MAX_DELAY = 1.0


class Database:
    """Read and write transactions on one Neo4j database, each a function of a transaction.

    A work function may run more than once (a write retried after contention), so it consumes its
    results inside and returns plain values.
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.round_trips = 0
        """Transactions sent so far: what an N+1 would make grow."""

    def read(self, work: Callable[Concatenate[Transaction, P], T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``work(tx, *args, **kwargs)``, its statements sent one after another in one read session
        (``Statements``), all within the request's time limit."""
        self.round_trips += 1
        timeout = self.graph.query_timeout
        spent = timing.current()
        with translated_errors(timeout=timeout), self._session(neo4j.READ_ACCESS) as session:
            if spent is not None:
                return timing.read(spent, work, Statements(session, timeout), *args, **kwargs)
            return work(Statements(session, timeout), *args, **kwargs)

    def write(
        self,
        work: Callable[Concatenate[Transaction, P], T],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``work(tx, *args, **kwargs)`` in one write transaction: all of it is written, or none.

        Deadlocks and lock timeouts between concurrent writers (``TransientError``) are retried
        with short, jittered, doubling delays, attempts and waits all within the request's time
        limit (``query_timeout``; ``CONTENTION_RETRY_TIME`` when there is none). A server that is
        stopped, unreachable, shutting down or not the leader is ``UNAVAILABLE`` at once: waiting
        for it would hold the request for as long as the outage lasts; so is one that cannot write its
        files (its disk full), which is not retried either. A transaction that needs more
        memory than Neo4j allows is ``TOO_LARGE`` at once: it would need as much the next time.
        """
        return self.write_or(_CONFLICT, work, *args, **kwargs)

    def write_or(self, conflict: str, work: Callable[Concatenate[Transaction, P], T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """``write``, saying ``conflict`` when a uniqueness constraint refuses the write."""
        self.round_trips += 1
        spent = timing.current()
        if spent is not None:
            return timing.write(spent, lambda watched: self._write(conflict, watched, *args, **kwargs), work)
        return self._write(conflict, work, *args, **kwargs)

    def _write(self, conflict: str, work: Callable[Concatenate[Transaction, P], T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        timeout = self.graph.query_timeout
        with translated_errors(conflict, timeout=timeout):
            try:
                return self._with_contention_retries(
                    lambda session, left: _in_transaction(session, left, work, *args, **kwargs), timeout
                )
            except IncompleteCommit as e:
                # The commit was sent and the connection lost: it may have been written. Unlike the
                # other unavailability, this one cannot promise "wrote nothing".
                silent = _timed_out_reading(e)
                during = f"{SILENT_CONNECTION_MESSAGE} during a commit" if silent else "Neo4j became unavailable during a commit"
                log.warning("%s: %s", during, e, extra={SILENT_CONNECTION: silent})
                raise Unavailable(
                    "Neo4j became unavailable while committing; the request may have been recorded: "
                    "retry it with the same idempotency key"
                ) from e

    def terminate_request(self, tag: str) -> list[str]:
        """Stop every transaction still running for the request ``tag`` (its client went away); their ids."""
        # Auto-commit, as a read's statements are: ``execute_query`` runs a transaction function, which
        # on a failure uses a connection it already gave back (see ``_in_transaction``).
        with translated_errors(), self._session(neo4j.WRITE_ACCESS) as session:
            records = list(session.run(query("admin/terminate_request"), key=REQUEST_METADATA_KEY, tag=tag))
        return [str(r["transaction_id"]) for r in records]

    def _session(self, access_mode: str) -> neo4j.Session:
        return self.graph.driver.session(database=self.graph.database, default_access_mode=access_mode)

    def _with_contention_retries(self, attempt: Callable[[neo4j.Session, float | None], T], budget: float | None) -> T:
        """``attempt(session, time left)`` until it does not meet concurrent writes. With a
        ``budget`` (the request's time limit) the attempts and the waits between them share it:
        each attempt's transaction may run only for what is left, so a write never takes longer
        than its limit, however often it is retried (before, an attempt begun just before the
        retries' end could run its whole limit again, and a request outlast two limits)."""
        started = time.monotonic()
        deadline = started + (budget if budget is not None else CONTENTION_RETRY_TIME)
        delay = CONTENTION_FIRST_DELAY
        while True:
            left = None if budget is None else max(MIN_ATTEMPT_SECONDS, deadline - time.monotonic())
            try:
                with self._session(neo4j.WRITE_ACCESS) as session:
                    return attempt(session, left)
            except (DatabaseUnavailable, NotALeader, ForbiddenOnReadOnlyDatabase) as e:
                # Transient to the server, but an outage to the client: answered like a refused connection.
                raise ServiceUnavailable(f"Neo4j cannot take the write now: {e.message}") from e
            except (TransientError, ResultFailedError) as e:
                # The driver (6.4) sometimes reports a transient failure while rolling back as a
                # ResultFailedError around it; that one is as retryable as the failure it wraps.
                if not isinstance(e, TransientError) and not isinstance(e.__cause__, TransientError):
                    raise
                if isinstance(e, Neo4jError) and e.code in TERMINATED_CODES | TIMED_OUT_CODES:
                    raise  # stopped on purpose (a time limit, a client gone): running it again would not help
                if _out_of_memory(e):
                    raise  # too large for Neo4j's transaction memory: it would be as large the next time
                if _cannot_write(e):
                    raise  # Neo4j cannot write until an operator acts: retrying now would only fail again
                if time.monotonic() >= deadline:
                    raise
                wait = min(delay * random.uniform(0.5, 1.5), max(0.0, deadline - time.monotonic()))
                code = e.code if isinstance(e, Neo4jError) else type(e).__name__
                log.info("a write met concurrent writes (%s); trying again in %.2fs", code, wait)
                time.sleep(wait)  # never past the limit
                delay = min(delay * 2, CONTENTION_MAX_DELAY)


def transaction_metadata() -> dict[str, Any] | None:
    """What a transaction says about itself in SHOW TRANSACTIONS: the request it serves."""
    tag = request_tag.get()
    return {REQUEST_METADATA_KEY: tag} if tag is not None else None


def _in_transaction(session: neo4j.Session, timeout: float | None, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``work(tx, *args, **kwargs)`` in one write transaction of ``session``, committed when it returns.

    An explicit transaction, not ``session.execute_write``: when a statement fails, the driver
    (6.4) hands the transaction's connection back to the pool at once (the session's error
    handler), and ``execute_write`` then rolls the transaction back, which first asks that
    connection whether it is still alive (``Bolt.defunct``: a read of one byte on its socket with
    the socket's timeout set to 0, then set back). By then another thread may have taken the
    connection, and the two threads' reads and timeouts interleave on one socket: under load the
    other thread's own check of the connection blocked for the whole read timeout (its request
    answered UNAVAILABLE: no connection within the acquisition timeout), and a byte of its answer
    read by the failed transaction would leave it waiting for one that never comes. A transaction
    that failed is therefore left to the session here: closing the session rolls the transaction
    back while its connection is still the session's, and does not touch a connection the driver
    has already given back (docs/embedded-neo4j.md; ``tests/test_connection_reuse.py`` fails on a
    connection used after it went back to the pool).
    """
    tx = session.begin_transaction(metadata=transaction_metadata(), timeout=timeout)
    value = work(tx, *args, **kwargs)
    tx.commit()
    return value
