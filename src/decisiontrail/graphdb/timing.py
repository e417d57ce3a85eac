"""Where a piece of work's time goes in Neo4j: its transactions, statements and commits, as timed
here and as the server reports them (the served process's ``Server-Timing`` header, the benchmarks).

Nothing is timed unless a ``timing()`` is open: the unit of work looks for one (a context
variable, which the request's tasks and worker threads inherit) and, finding none, runs as ever.

>>> with timing() as spent:
...     pass
>>> spent.transactions, spent.statements, spent.header(served_s=0.0125)
(0, 0, 'app;dur=12.5, db;dur=0.0;desc="0 transactions and 0 statements", neo4j;dur=0, commit;dur=0.0')

``timing(profile=True)`` runs every statement with ``PROFILE`` as well and sums the database
hits Neo4j reports for each (``db_hits``): what a statement costs the engine whatever the
machine's moment, as @neo4j/graphql's own performance reports show it. Profiling slows the
statements it measures: the benchmarks profile each row once, outside its timed runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Concatenate, LiteralString, ParamSpec, Protocol, TypeVar

import neo4j

T = TypeVar("T")
P = ParamSpec("P")


class _Runs(Protocol):
    def run(self, query: LiteralString, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result: ...


@dataclass
class Timing:
    """What the work done inside one ``timing()`` spent in Neo4j, summed over its transactions.

    ``database_s`` is the wall time inside the unit of work (sessions, statements, the records'
    decoding and mapping, commits, retries); ``neo4j_ms`` what Neo4j itself reports its statements
    took (to the first record, then to the last: whole milliseconds each, so a statement under
    one reports 0); ``commit_s`` the time from a write's last statement to its committed return.
    """

    transactions: int = 0
    statements: int = 0
    database_s: float = 0.0
    neo4j_ms: int = 0
    commit_s: float = 0.0
    profile: bool = False
    db_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def header(self, *, served_s: float) -> str:
        """The ``Server-Timing`` value (https://www.w3.org/TR/server-timing/) for a response
        started ``served_s`` after its request came in; durations in milliseconds. No description
        holds a comma or a semicolon, so a parser that splits on them reads it right."""
        with self._lock:
            return (
                f"app;dur={served_s * 1000:.1f}, "
                f'db;dur={self.database_s * 1000:.1f};desc="{_count(self.transactions, "transaction")} and '
                f'{_count(self.statements, "statement")}", '
                f"neo4j;dur={self.neo4j_ms}, commit;dur={self.commit_s * 1000:.1f}"
            )

    def as_json(self) -> dict[str, float | int]:
        """In milliseconds, for results files."""
        with self._lock:
            return {
                "transactions": self.transactions,
                "statements": self.statements,
                "database_ms": round(self.database_s * 1000, 3),
                "neo4j_ms": self.neo4j_ms,
                "commit_ms": round(self.commit_s * 1000, 3),
            }

    def _add(
        self,
        *,
        transactions: int = 0,
        statements: int = 0,
        database_s: float = 0.0,
        neo4j_ms: int = 0,
        commit_s: float = 0.0,
        db_hits: int = 0,
    ) -> None:
        # The loaders of one request may run their reads in worker threads side by side.
        with self._lock:
            self.db_hits += db_hits
            self.transactions += transactions
            self.statements += statements
            self.database_s += database_s
            self.neo4j_ms += neo4j_ms
            self.commit_s += commit_s


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


_current: ContextVar[Timing | None] = ContextVar("decisiontrail_timing", default=None)


@contextmanager
def timing(*, profile: bool = False) -> Iterator[Timing]:
    """Time the Neo4j work done within it (also by tasks and worker threads started within it);
    with ``profile``, count its statements' database hits too (each statement run with PROFILE)."""
    spent = Timing(profile=profile)
    token = _current.set(spent)
    try:
        yield spent
    finally:
        _current.reset(token)


def current() -> Timing | None:
    """The open ``timing()``, if any."""
    return _current.get()


class _Watched:
    """A transaction whose statements' results are kept, to read what Neo4j reports they took."""

    # Weakly referable: the plan locks a write takes are marked with a token of its transaction's
    # own (``database.lock_holder``), and timed, the transaction a write's statements see is this.
    __slots__ = ("_tx", "_profile", "results", "__weakref__")

    def __init__(self, tx: _Runs, *, profile: bool = False) -> None:
        self._tx = tx
        self._profile = profile
        self.results: list[neo4j.Result] = []

    def run(self, query: LiteralString, parameters: dict[str, Any] | None = None, **kwparameters: Any) -> neo4j.Result:
        result = self._tx.run("PROFILE " + query if self._profile else query, parameters, **kwparameters)
        self.results.append(result)
        return result

    def reported(self) -> tuple[int, int]:
        """What Neo4j reports the statements took (ms), and their database hits when profiled;
        called before the transaction closes (a result consumed already gives its summary at once;
        one left unread is read to its end)."""
        spent = hits = 0
        for result in self.results:
            summary = result.consume()
            spent += (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            hits += db_hits(summary.profile)
        return spent, hits


def db_hits(profile: dict[str, Any] | None) -> int:
    """The database hits of a profiled plan, summed over its operators (0 for a plan not profiled).

    >>> db_hits({"dbHits": 3, "children": [{"dbHits": 4, "children": []}, {"dbHits": 0}]})
    7
    >>> db_hits(None)
    0
    """
    if not profile:
        return 0
    return int(profile.get("dbHits", 0)) + sum(db_hits(child) for child in profile.get("children", ()))


def read(spent: Timing, work: Callable[Concatenate[Any, P], T], tx: _Runs, /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``work(tx, ...)``, a read's statements, timed into ``spent``."""
    started = time.perf_counter()
    watched = _Watched(tx, profile=spent.profile)
    try:
        value = work(watched, *args, **kwargs)
        reported_ms, hits = watched.reported()
        spent._add(statements=len(watched.results), neo4j_ms=reported_ms, db_hits=hits)
        return value
    finally:
        spent._add(transactions=1, database_s=time.perf_counter() - started)


def write(spent: Timing, write_with: Callable[[Callable[..., T]], T], work: Callable[..., T]) -> T:
    """``write_with(work)``, a write transaction running ``work`` (``write_with`` commits it, and may
    run it again after contention), timed into ``spent``: every attempt's statements, and the
    commit after the last."""
    started = time.perf_counter()
    finished = started

    def watched_work(tx: _Runs, *args: Any, **kwargs: Any) -> T:
        nonlocal finished
        watched = _Watched(tx, profile=spent.profile)
        value = work(watched, *args, **kwargs)
        reported_ms, hits = watched.reported()
        spent._add(statements=len(watched.results), neo4j_ms=reported_ms, db_hits=hits)
        finished = time.perf_counter()
        return value

    try:
        value = write_with(watched_work)
        spent._add(commit_s=time.perf_counter() - finished)
        return value
    finally:
        spent._add(transactions=1, database_s=time.perf_counter() - started)
