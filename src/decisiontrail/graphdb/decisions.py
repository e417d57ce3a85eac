"""Decisions in Neo4j: functions of a transaction, each running one named statement and returning domain records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import neo4j

from decisiontrail.cypher import query
from decisiontrail.domain import ArtifactRef, Decision, DecisionType
from decisiontrail.domain.pages import DecisionPage, DecisionSearch, SearchHit
from decisiontrail.domain.placement import Recording
from decisiontrail.domain.recording import PARENT_TYPES, CapturedContext, CheckpointGroup, checkpoint_group_for
from decisiontrail.graphdb.database import Rows, Transaction, lock_holder
from decisiontrail.graphdb.outbox import Announcement, announce_param
from decisiontrail.graphdb.records import (
    artifact_json,
    decision_from_record,
    decision_outline_from_record,
    decision_properties,
    json_text,
    native_datetime,
)


class Named(dict[str, int]):
    """The decisions a batch names, each with its place in the order first named: a statement
    matches each once (``$named_ids``) and a row names it by its place.

    >>> named = Named()
    >>> named.place("B"), named.place("A"), named.place("B"), named.place(None), list(named)
    (0, 1, 0, None, ['B', 'A'])
    """

    def place(self, decision_id: str | None) -> int | None:
        return None if decision_id is None else self.setdefault(decision_id, len(self))


def get_many(tx: Transaction, decision_ids: list[str]) -> list[Decision | None]:
    """One result per id, in the order given; None where no such decision exists."""
    records = list(tx.run(query("decision/get_decisions"), decision_ids=decision_ids))
    found = {d.decision_id: d for d in map(decision_from_record, records)}
    return [found.get(decision_id) for decision_id in decision_ids]


def children_of(tx: Transaction, decision_ids: list[str]) -> list[list[str]]:
    """For each decision, in the order given, its children's ids in sequence order."""
    found = {r["parent_id"]: list(r["child_ids"]) for r in tx.run(query("decision/children_of"), decision_ids=decision_ids)}
    return [found.get(decision_id, []) for decision_id in decision_ids]


def in_plan(tx: Transaction, plan_id: str) -> list[Decision]:
    """The plan's decisions in sequence order (none for an unknown plan)."""
    return [decision_from_record(r) for r in (tx.run(query("decision/list_plan_decisions"), plan_id=plan_id))]


def outlines_in_plan(tx: Transaction, plan_id: str, as_of: datetime | None) -> list[Decision]:
    """The plan's decisions as outlines (``decision_outline_from_record``), in sequence order."""
    record = tx.run(query("decision/plan_outline"), plan_id=plan_id, as_of=as_of).single(strict=True)
    if as_of is None:
        return [decision_outline_from_record(outline, plan_id) for outline in record["outlines"]]
    return [
        decision_outline_from_record(outline, plan_id, created_at, superseded_at)
        for outline, (created_at, superseded_at) in zip(record["outlines"], record["times"], strict=True)
    ]


def page(tx: Transaction, plan_id: str, page: DecisionPage) -> tuple[int | None, list[str]]:
    """(how many of the plan's decisions match, None unless ``page.count``; the ids of one page of
    them after ``page.after``)."""
    record = tx.run(query("decision/page_plan_decisions"), plan_id=plan_id, **page.params()).single(strict=True)
    return record["total"], list(record["decision_ids"])


def search(tx: Transaction, search: DecisionSearch) -> tuple[int | None, list[SearchHit]]:
    """(how many decisions are found, None unless ``search.count``; one page of the hits, best
    first, after ``search.after``)."""
    record = tx.run(query("decision/search_decisions"), **search.params()).single(strict=True)
    hits = [SearchHit(h["decision_id"], bool(h["exact"]), float(h["score"])) for h in record["hits"]]
    return record["total"], hits


def lineage(tx: Transaction, decision_id: str, *, as_of: datetime | None = None) -> Lineage | None:
    """Where a decision comes from: its ancestors (through parent plans too) and what it depends
    on, transitively, leaving out dependencies added after ``as_of`` (None: now); None when the
    decision does not exist."""
    record = tx.run(query("decision/lineage"), decision_id=decision_id, as_of=as_of).single(strict=True)
    return _lineage(record)


def lineage_seen(
    tx: Transaction, decision_id: str, *, owner: str | None, project: str | None, as_of: datetime | None = None
) -> Lineage | None:
    """``lineage`` as a caller who sees only the plans of ``owner`` (None: anyone's) in ``project``
    (None: any) sees it: walked only through plans it sees; None when the decision does not exist
    or lies in a plan it may not see."""
    record = tx.run(query("decision/lineage_seen"), decision_id=decision_id, owner=owner, project=project, as_of=as_of).single(
        strict=True
    )
    return _lineage(record)


def _lineage(record: neo4j.Record) -> Lineage | None:
    if not record["found"]:
        return None
    return Lineage(native_datetime(record["created_at"]), list(record["decision_ids"]), list(record["plan_ids"]))


@dataclass(frozen=True)
class Lineage:
    """A lineage walk's answer: when its decision was recorded, and the ids it reached."""

    created_at: datetime
    decision_ids: list[str]
    plan_ids: list[str]


def checkpoint_groups(tx: Transaction, decision_ids: list[str]) -> list[CheckpointGroup | None]:
    """For each decision, in the order given, the checkpoint group it was recorded with (Execute), if any."""
    return [
        None
        if (group := r["checkpoint_group"]) is None
        else CheckpointGroup(
            group["group_id"], group["thread_id"], group["checkpoint_ns"], group["checkpoint_id"], tuple(group["resources"])
        )
        for r in tx.run(query("decision/get_checkpoint_groups"), decision_ids=decision_ids)
    ]


def supersede(tx: Transaction, decision_id: str, superseded_by: str, at: datetime) -> bool:
    """Mark ``decision_id`` as replaced by ``superseded_by``; False when either is missing or it already was."""
    row = tx.run(query("decision/supersede_decision"), decision_id=decision_id, superseded_by=superseded_by, at=at)
    return int(row.single(strict=True)["superseded"]) == 1


def add_dependency(tx: Transaction, decision_id: str, depends_on_id: str) -> None:
    tx.run(query("decision/add_dependency"), decision_id=decision_id, depends_on_id=depends_on_id).consume()


def set_artifacts(tx: Transaction, decision_id: str, artifacts: Sequence[ArtifactRef]) -> None:
    tx.run(
        query("decision/attach_artifacts"),
        decision_id=decision_id,
        artifacts_produced=json_text([artifact_json(a) for a in artifacts]),
    ).consume()


def lock_plans_of(tx: Transaction, decision_ids: list[str]) -> set[str]:
    """Lock the plans of ``decision_ids`` (in plan-id order); the ids of those that exist."""
    return set(
        tx.run(query("decision/lock_plans_of"), decision_ids=decision_ids, holder=lock_holder(tx)).single(strict=True)["found"]
    )


def read_placements(tx: Transaction, recordings: Sequence[Recording]) -> list[dict[str, Any]]:
    """Lock the plans of a batch of recordings and of the decisions they depend on, and read, per
    recording in order, the facts ``domain.placement.place_all`` judges it by."""
    plan_ids = sorted({r.draft.plan_id for r in recordings})
    plan_index = {plan_id: i for i, plan_id in enumerate(plan_ids)}
    named = Named()
    inference_index: dict[tuple[str, DecisionType, str | None], int] = {}
    for r in recordings:
        if r.infer_parent:
            inference_index.setdefault((r.draft.plan_id, r.draft.decision_type, r.thread), len(inference_index))
    items = Rows(
        {
            "index": i,
            "plan_id": r.draft.plan_id,
            "plan_index": plan_index[r.draft.plan_id],
            "decision_id": r.id_to_look_up,
            "parent": named.place(r.draft.parent_decision_id),
            "inference_index": inference_index[(r.draft.plan_id, r.draft.decision_type, r.thread)] if r.infer_parent else None,
            "depends_on": [named.place(d) for d in r.draft.depends_on],
            "corrects": named.place(r.draft.corrects_decision_id),
            "idempotency_key": r.key_to_look_up,
        }
        for i, r in enumerate(recordings)
    )
    result = tx.run(
        query("decision/read_placements"),
        holder=lock_holder(tx),
        plan_ids=plan_ids,
        dependency_ids=sorted({d for r in recordings for d in r.draft.depends_on}),
        named_ids=list(named),
        inferences=[
            {"plan_id": plan_id, "parent_types": [t.value for t in PARENT_TYPES[decision_type]], "actor_thread": thread}
            for plan_id, decision_type, thread in inference_index
        ],
        items=items,
    )
    facts: list[dict[str, Any]] = result.single(strict=True)["facts"]
    return facts


def create_all(
    tx: Transaction,
    decisions: Sequence[tuple[Decision, Recording]],
    next_sequences: dict[str, int],
    announce: Announcement | None = None,
) -> None:
    """Write placed decisions with their edges, contexts and checkpoint groups, move the plans'
    counters, and add ``announce`` to the outbox (the statement carries it: see ``outbox.Announcement``)."""
    if not decisions and announce is None:
        return
    tx.run(
        query("decision/create_decisions"), **creation_params(decisions, next_sequences), announce=announce_param(announce)
    ).consume()


def creation_params(decisions: Sequence[tuple[Decision, Recording]], next_sequences: dict[str, int]) -> dict[str, Any]:
    """``$rows``, ``$plans`` and ``$named_ids`` of decision/create_decisions' writes, for it and for
    a statement that writes placed decisions as part of more (correction/supersede_downstream).
    A row names its plan (one of ``next_sequences``, which holds every placed decision's plan) and
    the decisions it links to by their places in ``$plans`` and ``$named_ids``."""
    plans = {plan_id: i for i, plan_id in enumerate(next_sequences)}
    named = Named()
    rows = Rows()
    for decision, recording in decisions:
        group = checkpoint_group_for(decision)
        props = decision_properties(decision, recording.idempotency_key, recording.request_digest)
        rows.append(
            {
                "plan": plans[decision.plan_id],
                "props": props,
                # As ISO 8601 text, made a DateTime by Neo4j: the driver's own conversion of a
                # datetime, in Python, was a sixth of a large batch's time.
                "created_at": props.pop("created_at").isoformat(),
                "context": context_param(recording.context),
                "checkpoint_group": {**asdict(group), "resources": list(group.resources)} if group else None,
                "parent": named.place(decision.parent_decision_id),
                "depends_on": [named.place(d) for d in decision.depends_on],
                "corrects": named.place(decision.corrects_decision_id),
                "review_id": recording.resolves_review_id,
            }
        )
    return {
        "rows": rows,
        "plans": [{"plan_id": plan_id, "next_sequence": n} for plan_id, n in next_sequences.items()],
        "named_ids": list(named),
    }


def context_param(context: CapturedContext | None) -> dict[str, str] | None:
    return None if context is None else {"context_hash": context.context_hash, "content": context.content}
