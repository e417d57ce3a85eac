"""The plan runtime's rows (issue 45): a 3-level hierarchy run end to end by the served runtime with the
scripted model, per decision, against recording the same decisions alone over the same API; and a
correction's replay, from its commit to REPLAYED, with no client acting."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import httpx

from bench.harness import Row, Stats, graphql, side_by_side_each
from bench.scenarios import Sizes
from decisiontrail.graphdb import Graph

RUN = "mutation($input: RunPlanInput!) { runPlan(input: $input) { id } }"
STATUS = "query($id: ID!) { plan(id: $id) { run { status error } } }"
HIERARCHY = """query($id: ID!) { plan(id: $id) { id descendants { id } } }"""
DECISIONS = """query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes { id decisionType question chosenOption
  alternativesConsidered confidenceScore rationale parentDecisionId } } } }"""
INSTANTIATE = """mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"""
RECORD = """mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"""
PHASE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { phase } }"
CORRECT = """mutation($id: ID!) { correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "Use Redis counters"}) {
  attempt { attemptId } } }"""
STRATEGY = (
    """query($id: ID!) { plan(id: $id) { decisions(filter: {status: CURRENT, types: [STRATEGY_CHOICE]}) { nodes { id } } } }"""
)
REPLAY_TIMES = """
MATCH (attempt:CorrectionAttempt {attempt_id: $attempt_id})
RETURN attempt.at AS at, attempt.replayed_at AS replayed_at, attempt.replay_outcome AS outcome"""

DEPTH = 3
EXECUTE_TYPES = {"IMPLEMENTATION_CHOICE", "TOOL_INVOCATION", "ERROR_RECOVERY", "VALIDATION_RESPONSE"}


def runtime(graph: Graph, api: str, sizes: Sizes, progress: Callable[[str], None]) -> list[Row]:
    runs = max(5, sizes.queries // 3)
    progress(f"runtime: a {DEPTH}-level hierarchy run end to end, {runs} runs, interleaved with recording it alone")
    with httpx.Client(base_url=api, timeout=120) as client:
        first = _run_hierarchy(client)  # what the baseline records, decision for decision
        made: list[list[dict[str, Any]]] = []
        recorded: list[str] = []
        ours, alone = side_by_side_each(
            [lambda: made.append(_run_hierarchy(client)) for _ in range(runs + 1)],
            [lambda: recorded.append(_record_alone(client, first)) for _ in range(runs + 1)],
            warmup=1,
        )
        for hierarchy in [*made, *(_hierarchy(client, plan_id) for plan_id in recorded)]:
            if _types(hierarchy) != _types(first):
                raise RuntimeError(f"a run recorded {_types(hierarchy)}, not {_types(first)}")
        decisions = sum(len(p["decisions"]) for p in first)
        per_decision_ours = Stats(tuple(ms / decisions for ms in ours.samples_ms))
        per_decision_alone = Stats(tuple(ms / decisions for ms in alone.samples_ms))
        replays = max(20, sizes.correction_repeat)
        progress(f"runtime: {replays} corrections of a run plan's strategy, replayed by the service")
        latency = _replay_latencies(graph, client, replays)
    return [
        Row(
            "runtime",
            f"a {DEPTH}-level hierarchy ({decisions} decisions in {len(first)} plans) run by the scripted actors, per decision",
            per_decision_ours,
            per_decision_alone,
            "recording the same decisions alone over the API (instantiatePlan, recordDecision, advancePhase)",
            note="ours: runPlan until the run SUCCEEDED (reconciliation, strategy, Execute, child plans, execution, "
            "Apply; LangGraph checkpoints in Neo4j), polled every 20 ms; each run's hierarchy, ours and the "
            "baseline's, is read back and compared with the first run's, plan by plan and type by type",
        ),
        Row(
            "runtime",
            "a correction's replay, from its commit to REPLAYED (strategy re-decided, child plan re-spawned, Apply)",
            latency,
            None,
            "",
            note="the attempt's own times in Neo4j (the correction's transaction to the replay's outcome written); "
            "no client acts after correctDecision",
        ),
    ]


def _types(hierarchy: list[dict[str, Any]]) -> list[list[str]]:
    return [sorted(d["decisionType"] for d in plan["decisions"]) for plan in hierarchy]


def _run_hierarchy(client: httpx.Client) -> list[dict[str, Any]]:
    plan_id = graphql(client, RUN, input={"description": "Add rate limiting to the billing API", "arguments": {"depth": DEPTH}})[
        "runPlan"
    ]["id"]
    _until_succeeded(client, plan_id)
    return _hierarchy(client, plan_id)


def _until_succeeded(client: httpx.Client, plan_id: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        run = graphql(client, STATUS, id=plan_id)["plan"]["run"]
        if run["status"] == "SUCCEEDED":
            return
        if run["status"] in ("FAILED", "CANCELLED") or time.monotonic() > deadline:
            raise RuntimeError(f"the run of plan {plan_id} is {run['status']}: {run['error']}")
        time.sleep(0.02)


def _hierarchy(client: httpx.Client, plan_id: str) -> list[dict[str, Any]]:
    """Each plan of the hierarchy, top first, with its decisions in sequence order."""
    found = graphql(client, HIERARCHY, id=plan_id)["plan"]
    plans = []
    for pid in [found["id"], *(d["id"] for d in found["descendants"])]:
        nodes = graphql(client, DECISIONS, id=pid)["plan"]["decisions"]["nodes"]
        plans.append({"id": pid, "decisions": nodes})
    if len(plans) != DEPTH:
        raise RuntimeError(f"a {DEPTH}-level run made {len(plans)} plan(s)")
    return plans


def _record_alone(client: httpx.Client, hierarchy: list[dict[str, Any]], level: int = 0, spawn: str | None = None) -> str:
    """The same plans and decisions, recorded by a client in the order the runtime makes them: a
    plan's Strategize decisions, Execute, its child plan (from the spawn it recorded) whole, its
    Execute decisions, Apply; each plan instantiated, each decision recorded on its own. Its plan's id."""
    plan = hierarchy[level]
    made = graphql(
        client, INSTANTIATE, input={"description": "recorded alone", **({"parentDecisionId": spawn} if spawn else {})}
    )["instantiatePlan"]
    ids = {plan["decisions"][0]["id"]: made["rootDecision"]["id"]}
    later = [d for d in plan["decisions"][1:] if d["decisionType"] in EXECUTE_TYPES]
    for d in [d for d in plan["decisions"][1:] if d["decisionType"] not in EXECUTE_TYPES]:
        ids[d["id"]] = _record(client, made["id"], d, ids)
    graphql(client, PHASE, id=made["id"], phase="EXECUTE")
    spawned = next((ids[d["id"]] for d in plan["decisions"] if d["decisionType"] == "SUBPLAN_SPAWN"), None)
    if level + 1 < len(hierarchy):
        _record_alone(client, hierarchy, level + 1, spawned)
    for d in later:
        ids[d["id"]] = _record(client, made["id"], d, ids)
    graphql(client, PHASE, id=made["id"], phase="APPLY")
    top: str = made["id"]
    return top


def _record(client: httpx.Client, plan_id: str, d: dict[str, Any], ids: dict[str, str]) -> str:
    digest = hashlib.sha256(f"{plan_id}/{d['id']}".encode()).hexdigest()
    recorded: str = graphql(
        client,
        RECORD,
        input={
            "planId": plan_id,
            "decisionType": d["decisionType"],
            "question": d["question"],
            "chosenOption": d["chosenOption"],
            "alternativesConsidered": d["alternativesConsidered"],
            "confidenceScore": d["confidenceScore"],
            "rationale": d["rationale"],
            "parentDecisionId": ids.get(d["parentDecisionId"] or ""),
            "contextSnapshot": {
                "hotContextHash": digest,
                "hotContextRef": f"bench://context/{digest}",
                "actorStateRef": {"threadId": f"bench-{plan_id}", "checkpointId": d["id"]},
            },
        },
    )["recordDecision"]["decision"]["id"]
    return recorded


def _replay_latencies(graph: Graph, client: httpx.Client, count: int) -> Stats:
    samples = []
    for _ in range(count + 1):  # the first is a warm-up
        plan_id = graphql(client, RUN, input={"description": "Rate limits", "arguments": {"depth": 2}})["runPlan"]["id"]
        _until_succeeded(client, plan_id)
        strategy = graphql(client, STRATEGY, id=plan_id)["plan"]["decisions"]["nodes"][0]["id"]
        attempt_id = graphql(client, CORRECT, id=strategy)["correctDecision"]["attempt"]["attemptId"]
        deadline = time.monotonic() + 300
        while True:
            records, _, _ = graph.driver.execute_query(REPLAY_TIMES, attempt_id=attempt_id, database_=graph.database)
            row = records[0]
            if row["outcome"] != "pending":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"correction attempt {attempt_id} was not replayed in 300 s")
            time.sleep(0.05)
        if row["outcome"] != "replayed":
            raise RuntimeError(f"correction attempt {attempt_id}: replay {row['outcome']}")
        samples.append((row["replayed_at"].to_native() - row["at"].to_native()).total_seconds() * 1000)
    return Stats(tuple(samples[1:]))
