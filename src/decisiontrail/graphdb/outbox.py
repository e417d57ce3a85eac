"""The event outbox: rows written in the transaction of the change they announce, numbered after its commit.

What an event means is the services' (``services.relay``); here it is a row of ``kind``, ``plan_id``,
``decision_id``, ``review_id``, and, read back, its ``seq`` and ``at``.

A write stores its events pending (``:PendingEvent``), stamped with what orders them, and takes no
lock but its plans'; ``number`` numbers what is pending, many writes' events at a time, under the
counter's lock: gapless, and a read (``read_after``) holds every number up to the counter it read. Numbered
under the lock inside every write, as they were, they queued every write behind the commit of
every other, whatever plans they wrote to (16 threads recording into plans of their own: about a
third of the throughput). In one plan, events are numbered in the order its writes committed
(``:EventCursor`` keeps how far each plan is numbered); across plans, in the order of the time
Neo4j read once each write held its plans' locks, but for runs held back a round (``numbering_order``).

Stored packed: consecutive events of one write with the same kind and plan (a batch's recordings,
a correction's supersessions) are one ``:Event`` node numbered ``seq`` to ``last_seq``, holding
their ids in order. A node per event made announcing a batch of 1,000 recordings cost a fifth of
writing the decisions, and a correction of 10,000 as much as its walk. Read back, every event is
a row of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from neo4j.exceptions import Neo4jError

from decisiontrail.cypher import query
from decisiontrail.graphdb.database import Transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutboxPage:
    """Rows after a cursor, and the sequence's state: ``last`` number given, numbers up to
    ``pruned_through`` deleted, and whether events are ``pending`` (committed, not numbered yet)."""

    rows: list[dict[str, Any]]
    last: int
    pruned_through: int
    pending: bool = False


@dataclass(frozen=True)
class Run:
    """Consecutive events of one kind in one plan: their decision ids, their review ids, or both
    (the same number of each), in order. Stored as one ``:Event`` node."""

    kind: str
    plan_id: str
    decision_ids: Sequence[str] | None = None
    review_ids: Sequence[str] | None = None

    @property
    def size(self) -> int:
        """How many events it holds: one per id; one for a run with no ids (an event about the plan
        itself, such as its run changing: consecutive ones of a write are one event).

        >>> Run("recorded", "P", decision_ids=["a", "b"]).size, Run("run_updated", "P").size
        (2, 1)
        """
        if self.decision_ids is not None:
            return len(self.decision_ids)
        if self.review_ids is not None:
            return len(self.review_ids)
        return 1


@dataclass(frozen=True)
class Announcement:
    """The events a write announces, as the ``$announce`` parameter of the statement that carries
    them: ``event/append_events`` on its own (``append``), or its subquery at the end of a write's
    last statement (``decisions.create_all``, ``corrections.supersede_downstream``), which saves
    the round trip of a statement of their own. ``at`` is the time each of them records."""

    runs: tuple[Run, ...]
    at: datetime

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]], at: datetime) -> Announcement | None:
        """``rows`` (``kind``, ``plan_id``, ``decision_id``, ``review_id``) announced at ``at``; None if there are none."""
        return cls.of_runs(packed(rows), at)

    @classmethod
    def of_runs(cls, runs: Sequence[Run], at: datetime) -> Announcement | None:
        """Events given as runs already (a correction's supersessions, plan by plan), without a row each."""
        kept = tuple(run for run in runs if run.size)
        return cls(kept, at) if kept else None

    @property
    def param(self) -> dict[str, Any]:
        """Each run with its ``offset`` (its first event's place among them) and ``size`` (a Neo4j
        list holds no nulls: a run without ids of a kind has None for them).

        >>> runs = [Run("superseded", "P", decision_ids=["a", "b"]), Run("review_cancelled", "P", review_ids=["r"])]
        >>> param = Announcement(tuple(runs), datetime(2026, 12, 1)).param
        >>> [(r["offset"], r["size"], r["decision_ids"], r["review_ids"]) for r in param["runs"]]
        [(0, 2, ['a', 'b'], None), (2, 1, None, ['r'])]
        """
        stored, offset = [], 0
        for run in self.runs:
            stored.append(
                {
                    "offset": offset,
                    "size": run.size,
                    "kind": run.kind,
                    "plan_id": run.plan_id,
                    "decision_ids": run.decision_ids,
                    "review_ids": run.review_ids,
                }
            )
            offset += run.size
        return {"runs": stored, "at": self.at}


def announce_param(announcement: Announcement | None) -> dict[str, Any] | None:
    """The ``$announce`` parameter of a statement that carries ``announcement`` (null: it announces nothing)."""
    return None if announcement is None else announcement.param


def append(tx: Transaction, announcement: Announcement | None) -> None:
    """Write ``announcement`` in a statement of its own, the transaction's last."""
    if announcement is not None:
        tx.run(query("event/append_events"), announce=announcement.param).consume()


def packed(rows: Sequence[Mapping[str, Any]]) -> list[Run]:
    """``rows`` as runs of consecutive events with the same kind, plan and ids given.

    >>> rows = [{"kind": "recorded", "plan_id": "P", "decision_id": d, "review_id": None} for d in "ab"]
    >>> rows.append({"kind": "review_pending", "plan_id": "P", "decision_id": None, "review_id": "r"})
    >>> [(r.kind, r.decision_ids, r.review_ids) for r in packed(rows)]
    [('recorded', ['a', 'b'], None), ('review_pending', None, ['r'])]
    """
    groups: list[tuple[str, str, list[str] | None, list[str] | None]] = []
    shape: tuple[Any, ...] | None = None
    for row in rows:
        decision_id, review_id = row["decision_id"], row["review_id"]
        row_shape = (row["kind"], row["plan_id"], decision_id is None, review_id is None)
        if row_shape != shape:
            shape = row_shape
            groups.append((row["kind"], row["plan_id"], None if decision_id is None else [], None if review_id is None else []))
        _, _, decision_ids, review_ids = groups[-1]
        if decision_ids is not None:
            decision_ids.append(decision_id)
        if review_ids is not None:
            review_ids.append(review_id)
    return [Run(kind, plan_id, decision_ids, review_ids) for kind, plan_id, decision_ids, review_ids in groups]


def read_after(tx: Transaction, after: int, limit: int, plan_id: str | None = None) -> OutboxPage:
    """Up to ``limit`` rows numbered after ``after`` (of one plan, or all), in order, and up to the
    page's ``last``: the counter, read first by a statement of its own (``event/read_counter``), so
    the rows are every event after the cursor up to it (the sequence has no gaps) and a reader
    that goes on from ``last`` skips none. ``at`` as ISO 8601 text."""
    with _deleted_while_read():
        counter = tx.run(query("event/read_counter")).single(strict=True)
        last, rows = counter["last"], []
        if limit > 0 and last > after:
            if plan_id is None:
                record = tx.run(query("event/read_events"), after=after, through=last, limit=limit).single(strict=True)
            else:
                record = tx.run(query("event/read_plan_events"), after=after, through=last, limit=limit, plan_id=plan_id).single(
                    strict=True
                )
            rows = [dict(row) for row in record["events"]]
    return OutboxPage(rows, last, counter["pruned_through"], counter["pending"])


@contextmanager
def _deleted_while_read() -> Iterator[None]:
    """A statement on events that met them deleted under it (Neo4j reads committed: a node
    matched can be deleted before its properties are read or set) is an ``OutboxReset``: Neo4j
    says the node cannot be loaded, or its properties read as NO_VALUE (never so for a node that
    exists)."""
    try:
        yield
    except Neo4jError as e:
        if e.code == ENTITY_NOT_FOUND or (e.code == TYPE_ERROR and "NO_VALUE" in (e.message or "")):
            raise OutboxReset(f"events were deleted while read ({e.code})") from e
        raise


ENTITY_NOT_FOUND = "Neo.ClientError.Statement.EntityNotFound"
TYPE_ERROR = "Neo.ClientError.Statement.TypeError"


@dataclass(frozen=True)
class Numbered:
    """What a round of ``number`` did: pending runs it ``read`` (up to its limit), and ``numbered``."""

    read: int
    numbered: int


HELD_AT_MOST = timedelta(seconds=60)
"""How long a run waits for its plan's earlier write to be seen before it is numbered anyway (a
committed write is seen by any statement begun after its commit: one never seen is gone)."""


def number(tx: Transaction, limit: int) -> Numbered:
    """Number up to ``limit`` pending runs, in order (``numbering_order``), under the counter's lock."""
    with _deleted_while_read():
        record = tx.run(query("event/pending_events"), limit=limit).single(strict=True)
    if record["seq"] is None or any(run[3] is None for run in record["pending"]):  # read as it was deleted
        raise OutboxReset("the counter or a pending run was deleted while read")
    order, cursors = numbering_order(record["pending"], record["numbered"], record["now"].to_native() - HELD_AT_MOST)
    seq, numbered = record["seq"], []
    for element_id, size in order:
        numbered.append([element_id, seq + 1])
        seq += size
    if numbered:
        with _deleted_while_read():
            done = tx.run(query("event/number_events"), numbered=numbered, cursors=cursors, last=seq).single(strict=True)
        if done["numbered"] != len(numbered):
            # Nobody else numbers under the lock held here: the runs read were deleted since (a wipe
            # or a restore committed in between). Rolled back; the next round reads what is there.
            raise OutboxReset(f"{len(numbered) - done['numbered']} of {len(numbered)} pending runs were deleted while numbering")
    return Numbered(len(record["pending"]), len(numbered))


class OutboxReset(Exception):
    """The outbox changed under a round of ``number`` or a read in a way no numbering or pruning
    does: what it read was deleted (the database wiped or restored). Nothing was numbered; a
    later round starts from what is there then (the counter re-created, under its lock, if it is
    gone)."""


def numbering_order(
    pending: Sequence[Sequence[Any]], numbered: Sequence[Sequence[Any]], held_since: datetime
) -> tuple[list[tuple[str, int]], list[list[Any]]]:
    """Pending runs ([id, plan id, plan_write, size, stamp], in stamp order) as they are numbered,
    (id, size), and each plan's writes numbered through, [plan id, plan_write].

    A plan's runs follow its writes' numbers (``plan_write``, counted under the plan's lock, so in
    commit order) from where its numbering stands (``numbered``: [plan id, plan_write], 0 for a
    plan never numbered): a run whose write comes after one not seen yet (committed, but not seen
    by this read) is held back to a later round; one stamped before ``held_since`` is numbered
    anyway (its predecessor will never be seen) and logged. Otherwise the stamps' order is kept.

    >>> old, new = datetime(2026, 12, 1), datetime(2026, 12, 2)
    >>> pending = [["a", "P", 7, 1, new], ["b", "Q", 1, 2, new], ["c", "P", 6, 1, new], ["d", "P", 6, 1, new],
    ...            ["e", "R", 9, 1, new], ["f", "S", 4, 1, old]]
    >>> numbering_order(pending, [["P", 5], ["Q", 0], ["R", 7], ["S", 2]], held_since=new)  # R's 8 not seen yet
    ([('b', 2), ('c', 1), ('d', 1), ('f', 1), ('a', 1)], [['Q', 1], ['P', 7], ['S', 4]])
    """
    last: dict[str, int] = {plan_id: write for plan_id, write in numbered}
    moved: dict[str, int] = {}
    order: list[tuple[str, int]] = []
    left = list(pending)
    while left:
        held = []
        for run in left:
            element_id, plan_id, write, size, stamp = run
            before = last.get(plan_id, 0)
            if write is None or write <= before + 1 or stamp < held_since:
                if write is not None and write > before + 1:
                    log.warning(
                        "numbering events of plan %s's write %d, after %d: the writes between were never seen",
                        plan_id,
                        write,
                        before,
                    )
                order.append((element_id, size))
                if write is not None and write > before:
                    last[plan_id] = moved[plan_id] = write
            else:
                held.append(run)
        if len(held) == len(left):
            break
        left = held
    return order, [[plan_id, write] for plan_id, write in moved.items()]


def prune(tx: Transaction, before: datetime, limit: int) -> int | None:
    """Delete up to ``limit`` of the oldest rows from before ``before``; the last number deleted, if any."""
    record = tx.run(query("event/prune_events"), before=before, limit=limit).single()
    return None if record is None else int(record["through"])
