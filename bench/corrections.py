"""The correction scenario: correctDecision over HTTP at each downstream size, against one
hand-written statement that finds the same downstream and writes what ours writes (``RAW_CORRECT``;
both sides' writes compared by ``_footprint``) behind a minimal HTTP endpoint (at most 1.2x) and
through the driver (no target: the engine's own limit); the in-memory closure (networkx, on a graph
already loaded) against the same closure read in Cypher (a read against a read); and a correction
across ``Sizes.deep_levels`` levels of plans against impact of the same decision over HTTP (the
walk without the writes; at most 2x). Every correction, ours and the baselines', is checked to
supersede exactly its closure.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from functools import partial
from datetime import UTC, datetime
from typing import Any

import httpx

from bench.harness import (
    BENCH,
    Breakdown,
    Row,
    Stats,
    db_hits,
    graphql,
    interleaved_each,
    judged,
    raw_db_hits,
    side_by_side,
)
from bench.scenarios import IMPACT, Sizes, anchored_rows
from decisiontrail.checks.closure import downstream
from decisiontrail.cypher import query
from decisiontrail.domain.ids import new_ulid
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.loading import load_plans
from decisiontrail.services import reading
from decisiontrail.services import Trail

# The engine's limit for a correction: one hand-written statement that finds the same downstream
# and writes what ours writes (checked: ``_footprint``): the correction decision as ours places it
# (beside the original under its parent, the plan's next number, its captured context), every
# superseded decision linked to it and retiring its idempotency key, the attempt with the
# superseded ids in plan and sequence order, the counts by type and the replay frontier (JSON text,
# as ours keeps them), the spawned plans invalidated, the events (the correction recorded, the
# original and each plan's downstream superseded) and the audit entry. Not the plan locks: one
# statement needs none, and that is the engine's advantage the anchor keeps.
RAW_CORRECT = """
MATCH (origin:Decision {decision_id: $decision_id})-[:IN_PLAN]->(plan:Plan)
CALL (origin) {
  OPTIONAL MATCH path = (origin)<-[:PARENT|DEPENDS_ON|SPAWNED_BY|IN_PLAN*]-(reached)
  WHERE all(n IN nodes(path) WHERE n = origin OR (n.superseded_at IS NULL AND n.invalidated_at IS NULL))
  WITH collect(DISTINCT reached) AS reached
  RETURN [x IN reached WHERE x:Decision] AS downstream, [x IN reached WHERE x:Plan] AS spawned
}
WITH origin, plan, downstream, spawned, datetime($at) AS at
CREATE (c:Decision)-[:IN_PLAN]->(plan)
SET c = $correction, c.plan_id = plan.plan_id, c.phase = origin.phase, c.sequence_number = plan.next_sequence,
  c.question = 'Correction of a ' + origin.decision_type + ': ' + origin.question,
  c.alternatives_considered = [origin.chosen_option], c.created_at = at,
  plan.next_sequence = plan.next_sequence + 1
CREATE (c)-[:CORRECTS]->(origin)
MERGE (context:Context {context_hash: $context_hash})
  ON CREATE SET context.content = $context_content, context.size = size($context_content), context.created_at = datetime()
CREATE (c)-[:CAPTURED]->(context)
WITH origin, plan, downstream, spawned, at, c
CALL (origin, c) {
  MATCH (origin)-[:PARENT]->(parent:Decision)
  CREATE (c)-[:PARENT]->(parent)
}
CALL (c, origin, downstream, at) {
  UNWIND [origin] + downstream AS x
  CREATE (x)-[:SUPERSEDED_BY {at: at}]->(c)
  SET x.superseded_at = at
  FOREACH (key IN CASE WHEN x.idempotency_key IS NULL THEN [] ELSE [x.idempotency_key] END |
    SET x.retired_idempotency_key = key
    REMOVE x.idempotency_key)
}
WITH origin, plan, downstream, spawned, at, c, COLLECT {
    UNWIND [origin] + downstream AS x
    WITH x ORDER BY x.plan_id, x.sequence_number
    RETURN x
  } AS ordered
// What ours summarises in Python, here in Cypher: the counts by type and the replay frontier
// (each actor run's first superseded decision with a checkpoint) as JSON text, the events' runs.
CALL (ordered) {
  UNWIND ordered AS x
  WITH x.decision_type AS type, count(*) AS n ORDER BY type
  RETURN '{' + reduce(text = '', pair IN collect('"' + type + '":' + toString(n)) |
    text + CASE text WHEN '' THEN '' ELSE ',' END + pair) + '}' AS counts_by_type
}
CALL (ordered) {
  UNWIND ordered AS x
  WITH x WHERE x.actor_state_checkpoint_id IS NOT NULL
  WITH x.plan_id AS plan_id, x.actor_state_thread_id AS thread, collect(x)[0] AS first
  WITH '{"checkpoint":{"checkpoint_id":"' + first.actor_state_checkpoint_id + '","checkpoint_ns":"'
    + first.actor_state_checkpoint_ns + '","thread_id":"' + thread + '"},"decision_type":"' + first.decision_type
    + '","first_invalidated_decision_id":"' + first.decision_id + '","plan_id":"' + plan_id + '","thread_id":"' + thread + '"}' AS point
  RETURN '[' + reduce(text = '', p IN collect(point) | text + CASE text WHEN '' THEN '' ELSE ',' END + p) + ']' AS replay_frontier
}
CALL (downstream) {
  UNWIND downstream AS x
  WITH x ORDER BY x.plan_id, x.sequence_number
  WITH x.plan_id AS plan_id, collect(x.decision_id) AS ids
  RETURN collect([plan_id, 'superseded', ids]) AS downstream_runs
}
CREATE (attempt:CorrectionAttempt)-[:ATTEMPT_ON]->(origin)
CREATE (attempt)-[:PRODUCED]->(c)
SET attempt = $attempt, attempt.at = at, attempt.correction_decision_id = c.decision_id,
  attempt.original_decision_id = origin.decision_id, attempt.corrected_decision_id = origin.decision_id,
  attempt.attempt_number = COUNT { (:CorrectionAttempt)-[:ATTEMPT_ON]->(origin) },
  attempt.invalidated_decision_ids = [x IN ordered | x.decision_id],
  attempt.invalidated_plan_ids = [p IN spawned | p.plan_id],
  attempt.counts_by_type = counts_by_type, attempt.replay_frontier = replay_frontier
WITH origin, plan, spawned, at, c, attempt,
  [[plan.plan_id, 'recorded', [c.decision_id]], [plan.plan_id, 'superseded', [origin.decision_id]]] + downstream_runs AS runs
CALL (attempt, spawned, at) {
  UNWIND spawned AS child
  SET child.invalidated_at = at
  CREATE (child)-[:INVALIDATED_BY]->(attempt)
}
// The events: the correction recorded, the original superseded, then each plan's downstream.
CALL (runs, at) {
  CALL (runs) {
    UNWIND runs AS run
    WITH DISTINCT run[0] AS plan_id ORDER BY plan_id
    MATCH (counted:Plan {plan_id: plan_id})
    SET counted.announced = coalesce(counted.announced, 0) + 1
    RETURN collect([plan_id, counted.announced]) AS writes
  }
  WITH runs, at, writes, datetime.realtime() AS stamp, randomUUID() AS write
  UNWIND range(0, size(runs) - 1) AS offset
  WITH at, writes, stamp, write, offset, runs[offset] AS run
  CREATE (:PendingEvent {stamp: stamp, write: write, offset: offset, size: size(run[2]),
    plan_write: [w IN writes WHERE w[0] = run[0]][0][1], kind: run[1], plan_id: run[0], decision_ids: run[2],
    review_ids: [], at: at})
}
CREATE (entry:AuditEntry)-[:AUDITS]->(plan)
SET entry = $audit, entry.at = at, entry.decision_ids = [origin.decision_id, c.decision_id],
  entry.other_ids = [attempt.attempt_id], entry.plan_ids = [plan.plan_id], entry.projects = []
RETURN size(runs) AS events
"""

CORRECT = """mutation($id: ID!) {
  correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "Use the other approach", reason: "bench"}) { invalidated { id } }
}"""


def _correction_repeat(sizes: Sizes, size: int) -> int:
    """Runs each way: enough at the small sizes for a p95, and at the large ones enough that the
    ratio's interval decides its target (5 runs at 10,000 gave 1.49x, 1.50x and 1.90x)."""
    return sizes.correction_repeat if size <= 100 else (9 if size < 100_000 else 3)


def correction(graph: Graph, api: str, sizes: Sizes, progress: Callable[[str], None]) -> list[Row]:
    from bench.anchor import Statement, running_anchor
    from bench.workload import subtree_fixture

    store = Trail.on(graph)
    rows = []
    with (
        running_anchor(graph.uri, graph.database, {"correct": Statement(RAW_CORRECT, "write")}) as anchor_url,
        httpx.Client(base_url=api, timeout=600) as client,
        httpx.Client(base_url=anchor_url, timeout=600) as anchor_client,
    ):
        for size in sizes.corrections:
            repeat = _correction_repeat(sizes, size)
            progress(
                f"correction: downstream of {size} decision(s), a warm-up and {repeat} runs of ours, the driver's "
                "and the HTTP endpoint's, interleaved"
            )
            # One more fixture each for the warm-up run, checked like the others, and one for the profile.
            ours_targets = subtree_fixture(graph, size, copies=repeat + 2, seed=size)
            raw_targets = subtree_fixture(graph, size, copies=repeat + 2, seed=size + 1)
            anchor_targets = subtree_fixture(graph, size, copies=repeat + 1, seed=size + 3)
            ours_profiled, raw_profiled = ours_targets.pop(), raw_targets.pop()
            expected = {t: _closure(graph, t) for t in [*ours_targets, *raw_targets, *anchor_targets]}
            answers: dict[str, set[str]] = {}
            spent = Breakdown()
            ours, raw, anchored = interleaved_each(
                [
                    [partial(_correct_served, client, answers, spent, t) for t in ours_targets],
                    [partial(_raw_correct, graph, spent, t) for t in raw_targets],
                    [partial(_anchor_correct, anchor_client, t) for t in anchor_targets],
                ],
                ops=size,
                warmup=1,
            )
            for t in ours_targets:
                if answers[t] != expected[t]:
                    raise RuntimeError(f"correction of {t}: ours invalidated {len(answers[t])}, not the {size} expected")
            for t in [*raw_targets, *anchor_targets]:
                superseded = _superseded_in_plan(graph, t)
                if superseded != expected[t]:
                    raise RuntimeError(f"correction of {t}: the baseline superseded {len(superseded)}, not the {size} expected")
            wrote = _footprint(graph, ours_targets[-1])
            for t in (raw_targets[-1], anchor_targets[-1]):
                if _footprint(graph, t) != wrote:
                    raise RuntimeError(
                        f"correction of {size}: the baseline wrote {_footprint(graph, t)}, ours {wrote}: not the same writes"
                    )
            hits = {
                "ours": db_hits(graph, CORRECT, id=ours_profiled),
                "baseline": raw_db_hits(graph.driver, graph.database, RAW_CORRECT, **_raw_correct_params(raw_profiled)),
            }
            rows += anchored_rows(
                "correction", f"downstream of {size:,}", ours, anchored, raw, hits=hits, breakdown=spent.as_json(ours, raw)
            )
            rows.append(_closure_row(graph, store, size, repeat))
        rows.append(_deep_correction_row(graph, client, sizes, progress))
    return rows


def _closure_row(graph: Graph, store: Trail, size: int, repeat: int) -> Row:
    """The in-memory closure (networkx, on a graph already loaded) against the same closure read in
    Cypher (correction/downstream), interleaved: a read against a read."""
    from bench.workload import subtree_fixture

    nx_target = subtree_fixture(graph, size, copies=1, seed=size + 2)[0]
    plan_id = reading.get_decision(store, nx_target, principal=BENCH).plan_id
    G = load_plans(graph, [plan_id], progress=False)
    in_cypher = _closure(graph, nx_target)
    if {nx_target, *downstream(G, nx_target).decision_ids} != in_cypher or len(in_cypher) != size:
        raise RuntimeError(f"downstream of {nx_target}: networkx and Cypher disagree, or it is not {size}")
    in_memory, closure_read = side_by_side(
        partial(downstream, G, nx_target), partial(_closure, graph, nx_target), samples=repeat, warmup=1, ops=size
    )
    return Row(
        "correction",
        f"downstream of {size:,}: networkx closure in memory",
        in_memory,
        closure_read,
        "the same closure read in Cypher (correction/downstream)",
        note="the closure only, on a graph already loaded; neither writes",
    )


def _deep_correction_row(graph: Graph, client: httpx.Client, sizes: Sizes, progress: Callable[[str], None]) -> Row:
    """A correction across ``sizes.deep_levels`` levels of plans (each a strategy, its spawn and an
    implementation choice: 5 decisions a plan), over HTTP, against impact of the same decision over
    HTTP just before it: the correction walks what impact walks, and writes it."""
    from bench.workload import WorkloadSpec, load

    repeat, levels = sizes.deep_repeat, sizes.deep_levels
    progress(f"correction across {levels:,} levels of plans: a warm-up and {repeat} runs, impact first on each")
    tops = [
        load(
            graph,
            WorkloadSpec(
                seed=100 + i, depth=levels, fan_out=1, decisions_per_plan=5, superseded_share=0.0, depends_on_density=0.0
            ),
        ).top_decision_id
        for i in range(repeat + 2)
    ]
    profiled = tops.pop()
    expected = {t: _closure(graph, t) for t in tops}
    answers: dict[str, set[str]] = {}
    spent = Breakdown()
    impacts: dict[str, int] = {}

    def impact_of(t: str) -> None:
        impacts[t] = len(graphql(client, IMPACT, id=t)["impact"]["decisions"])

    walked_ms, corrected_ms = [], []
    for i, t in enumerate(tops):  # impact first on each: once corrected, the decision has no impact to read
        start = time.perf_counter()
        impact_of(t)
        middle = time.perf_counter()
        _correct_served(client, answers, spent, t)
        if i:  # the first is the warm-up
            walked_ms.append((middle - start) * 1000)
            corrected_ms.append((time.perf_counter() - middle) * 1000)
    corrected, walked = Stats(tuple(corrected_ms)), Stats(tuple(walked_ms))
    for t in tops:
        if answers[t] != expected[t] or impacts[t] != len(expected[t]):
            raise RuntimeError(f"correction across {levels} levels: {len(answers[t])} invalidated, impact {impacts[t]}")
    # The spare copy profiled: impact first, then the correction's reads (rolled back), then the correction.
    hits = {"baseline": db_hits(graph, IMPACT, id=profiled)}
    memory, rows = memory_of_beginning(graph, profiled)
    hits["ours"] = db_hits(graph, CORRECT, id=profiled)
    met, interval = judged(corrected, walked, 2.0)
    return Row(
        "correction",
        f"across {levels:,} levels of plans ({len(expected[tops[0]]):,} decisions superseded)",
        corrected,
        walked,
        "impact of the same decision over HTTP (the walk without the writes)",
        target="<= 2x",
        met=met,
        interval=interval,
        note="each run's impact is read just before its correction, on the same decision (so the correction finds "
        "the walk's pages warm)",
        extra={
            "begin_correction_memory_bytes": memory,
            "downstream_rows": rows,
            "db_hits": hits,
            "breakdown": spent.as_json(corrected),
        },
    )


def memory_of_beginning(graph: Graph, decision_id: str) -> tuple[int, int]:
    """begin_correction's memory as Neo4j counts it (PROFILE), and its downstream's rows, rolled back."""
    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        try:
            result = tx.run(
                "PROFILE " + query("correction/begin_correction"),
                holder="bench-profile",
                decision_id=decision_id,
                correction_id=new_ulid(),
                also_lock=[],
            )
            rows = len(result.single(strict=True)["rows"])
            profile = result.consume().profile or {}
        finally:
            tx.rollback()
    return int(profile["args"]["GlobalMemory"]), rows


def _correct_served(client: httpx.Client, answers: dict[str, set[str]], spent: Breakdown, decision_id: str) -> None:
    """Ours: correctDecision over HTTP, keeping what it says it invalidated and where its time went."""
    answer = graphql(client, CORRECT, spent, id=decision_id)["correctDecision"]
    answers[decision_id] = {d["id"] for d in answer["invalidated"]}


def _raw_correct_params(decision_id: str) -> dict[str, Any]:
    """What the raw correction writes that is not read from the graph: ids, the moment, the text,
    the captured context (as ours captures it: domain.correction.correction_decision)."""
    guidance, reason = "Use the other approach", "bench"
    content = json.dumps({"guidance": guidance, "reason": reason, "corrects": decision_id}, sort_keys=True)
    context_hash = hashlib.sha256(content.encode()).hexdigest()
    correction_id = new_ulid()
    return {
        "decision_id": decision_id,
        "at": datetime.now(UTC).isoformat(),
        "context_hash": context_hash,
        "context_content": content,
        "correction": {
            "decision_id": correction_id,
            "decision_type": "user_intervention",
            "chosen_option": guidance,
            "rationale": reason,
            "is_correction": True,
            "correction_reason": reason,
            "hot_context_hash": context_hash,
            "hot_context_ref": f"decisiontrail:context/{context_hash}",
            "artifacts_produced": "[]",
            "relevant_resources": "[]",
        },
        "attempt": {
            "attempt_id": new_ulid(),
            "mode": "revert",
            "guidance": guidance,
            "reason": reason,
            "requested_by": "anonymous",
            "replay_outcome": "pending",
        },
        "audit": {
            "entry_id": new_ulid(),
            "principal": "anonymous",
            "role": "admin",
            "operation": "correction.correct",
            "request_id": new_ulid(),
            "review_ids": [],
        },
    }


def _raw_correct(graph: Graph, spent: Breakdown, decision_id: str) -> None:
    spent.raw(graph.driver.execute_query(RAW_CORRECT, _raw_correct_params(decision_id), database_=graph.database))


def _anchor_correct(client: httpx.Client, decision_id: str) -> None:
    from bench.anchor import call

    call(client, "correct", **_raw_correct_params(decision_id))


def _footprint(graph: Graph, decision_id: str) -> dict[str, Any]:
    """What correcting ``decision_id`` wrote, by shape: the correction decision's properties and
    links, the superseded count, the attempt's properties, links and summaries, the plans
    invalidated, the events (kind and size) and the audit entry's properties. Ours and the
    baseline's must be the same for fixtures of one size (their ids and times differ)."""
    record = graph.driver.execute_query(
        """
        MATCH (origin:Decision {decision_id: $id})<-[:CORRECTS]-(c:Decision)<-[:PRODUCED]-(attempt:CorrectionAttempt)
        RETURN keys(c) AS correction, [(c)-[r]->() | type(r)] AS links,
          COUNT { (:Decision)-[:SUPERSEDED_BY]->(c) } AS superseded,
          keys(attempt) AS attempt, [(attempt)-[r]->() | type(r)] AS attempt_links,
          size(attempt.invalidated_decision_ids) AS listed, attempt.counts_by_type AS counts,
          attempt.replay_frontier AS frontier, COUNT { (:Plan)-[:INVALIDATED_BY]->(attempt) } AS invalidated_plans,
          COLLECT { MATCH (e) WHERE (e:PendingEvent OR e:Event) AND e.plan_id = origin.plan_id AND e.at = attempt.at
                    RETURN [e.kind, e.size, e.offset] } AS events,
          COLLECT { MATCH (entry:AuditEntry)-[:AUDITS]->(:Plan {plan_id: origin.plan_id})
                    WHERE c.decision_id IN entry.decision_ids RETURN keys(entry) } AS audit,
          COUNT { (c)-[:CAPTURED]->(:Context) } AS contexts
        """,
        id=decision_id,
        database_=graph.database,
    ).records[0]
    frontier = json.loads(record["frontier"])
    return {
        "correction": sorted(record["correction"]),
        "links": sorted(record["links"]),
        "superseded": record["superseded"],
        "attempt": sorted(record["attempt"]),
        "attempt_links": sorted(record["attempt_links"]),
        "listed": record["listed"],
        "counted": sum(json.loads(record["counts"]).values()),
        "frontier": (len(frontier), sorted(frontier[0]) if frontier else []),
        "invalidated_plans": record["invalidated_plans"],
        "events": sorted(record["events"]),
        "audit": [sorted(keys) for keys in record["audit"]],
        "contexts": record["contexts"],
    }


def _closure(graph: Graph, decision_id: str) -> set[str]:
    """What correcting ``decision_id`` must supersede (itself included), read before either side runs."""
    found = graph.driver.execute_query(query("correction/downstream"), decision_id=decision_id, database_=graph.database)
    return {decision_id, *(d[0] for d in found.records[0]["decisions"])}  # each decision a list, its id first


def _superseded_in_plan(graph: Graph, decision_id: str) -> set[str]:
    """The decisions of ``decision_id``'s plan that a correction superseded (the fixture has one plan per target)."""
    found = graph.driver.execute_query(
        "MATCH (origin:Decision {decision_id: $id}) MATCH (d:Decision {plan_id: origin.plan_id}) "
        "WHERE d.superseded_at IS NOT NULL RETURN collect(d.decision_id) AS ids",
        id=decision_id,
        database_=graph.database,
    )
    return set(found.records[0]["ids"])
