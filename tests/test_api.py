"""The GraphQL API over real HTTP (uvicorn on loopback) against the session's Neo4j."""

from __future__ import annotations

import asyncio
import json
import hashlib
import threading
import time
from typing import Any

import httpx
import pytest
import uvicorn
from strawberry.dataloader import DataLoader

from decisiontrail.access import LOCAL
from decisiontrail.app import create_app
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph, delete_all_data
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.schema.context import Context
from decisiontrail.api import schema
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from factories import decision
from serving import served, subscribed


def gql(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    response = client.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def ok(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    body = gql(client, query, **variables)
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


def error_code(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    body = gql(client, query, **variables)
    assert body.get("errors"), body
    extensions: dict[str, Any] = body["errors"][0].get("extensions") or {}
    return {"message": body["errors"][0]["message"], **extensions}


INSTANTIATE = """
mutation($input: InstantiatePlanInput!) {
  instantiatePlan(input: $input) { id phase automationProfile { editCode executeCommand } rootDecision { id decisionType } }
}"""

RECORD = """
mutation($input: RecordDecisionInput!) {
  recordDecision(input: $input) {
    decision { id decisionType chosenOption parent { id } status sequenceNumber }
    review { id status reason }
  }
}"""


def snapshot(text: str = "ctx") -> dict[str, Any]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {
        "hotContextHash": digest,
        "hotContextRef": f"decisiontrail:context/{digest}",
        "hotContext": text,  # the service's own reference comes with the context it names
        "actorStateRef": {"threadId": "agent-1", "checkpointId": f"cp-{text}"},
        "relevantResources": [{"resourceId": "repo:app", "path": "src/app.py"}],
    }


def record(client: httpx.Client, plan_id: str, decision_type: str = "STRATEGY_CHOICE", **fields: Any) -> dict[str, Any]:
    payload = {
        "planId": plan_id,
        "decisionType": decision_type,
        "question": fields.pop("question", "Which way?"),
        "chosenOption": fields.pop("chosenOption", "this way"),
        "rationale": "because",
        "contextSnapshot": snapshot(fields.pop("context", "ctx")),
        **fields,
    }
    return ok(client, RECORD, input=payload)["recordDecision"]


def test_health_and_readiness(api: httpx.Client) -> None:
    assert api.get("/healthz").json() == {"status": "ok"}
    assert api.get("/readyz").json() == {"status": "ready"}


def test_graphiql_is_served(api: httpx.Client) -> None:
    page = api.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "graphiql" in page.text.lower()


def test_record_correct_and_read_back_over_http(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "Ship it", "arguments": {"ticket": 7}})["instantiatePlan"]
    assert plan["phase"] == "STRATEGIZE" and plan["rootDecision"]["decisionType"] == "PROMPT_DEFINITION"
    strategy = record(api, plan["id"], question="Where?", chosenOption="gateway", confidenceScore=0.9)["decision"]
    resources = record(api, plan["id"], "RESOURCE_SELECTION", context="r", dependsOn=[strategy["id"]])["decision"]
    assert strategy["parent"]["id"] == plan["rootDecision"]["id"]
    assert resources["parent"]["id"] == strategy["id"]

    preview = ok(
        api,
        "query($id: ID!) { impact(decisionId: $id) { decisions { id } countsByType { decisionType count } } }",
        id=strategy["id"],
    )
    corrected = ok(
        api,
        """mutation($input: CorrectDecisionInput!) {
          correctDecision(input: $input) {
            correction { id decisionType isCorrection corrects { id } }
            invalidated { id status }
            attempt { attemptNumber mode guidance }
            replayFrontier { threadId checkpoint { checkpointId } }
          }
        }""",
        input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "use middleware", "reason": "shared gateway"},
    )["correctDecision"]

    assert {d["id"] for d in preview["impact"]["decisions"]} == {d["id"] for d in corrected["invalidated"]}
    assert all(d["status"] == "SUPERSEDED" for d in corrected["invalidated"])
    assert corrected["correction"]["corrects"]["id"] == strategy["id"]
    assert corrected["attempt"] == {"attemptNumber": 1, "mode": "REVERT", "guidance": "use middleware"}
    assert corrected["replayFrontier"][0] == {"threadId": "agent-1", "checkpoint": {"checkpointId": "cp-ctx"}}

    tree = ok(
        api,
        """query($id: ID!) { plan(id: $id) {
             decisions(filter: {status: CURRENT}) { nodes { decisionType children { id } dependsOn { id } plan { id } } }
           } }""",
        id=plan["id"],
    )["plan"]["decisions"]["nodes"]
    assert [d["decisionType"] for d in tree] == ["PROMPT_DEFINITION", "USER_INTERVENTION"]


def test_gated_decisions_become_reviews_resolved_over_http(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p", "automationProfile": {"editCode": 0.8}})["instantiatePlan"]

    held = record(api, plan["id"], confidenceScore=0.5, alternativesConsidered=["other way"])
    pending = ok(api, "query($id: ID!) { pendingReviews(planId: $id) { id question } }", id=plan["id"])["pendingReviews"]
    resolved = ok(
        api,
        """mutation($input: ResolveReviewInput!) { resolveReview(input: $input) {
             review { status } decision { chosenOption alternativesConsidered } } }""",
        input={"reviewId": held["review"]["id"], "action": "SELECT_ALTERNATIVE", "option": "other way"},
    )["resolveReview"]

    assert held["decision"] is None and held["review"]["status"] == "PENDING"
    assert [r["id"] for r in pending] == [held["review"]["id"]]
    assert resolved == {
        "review": {"status": "ALTERNATIVE_SELECTED"},
        "decision": {"chosenOption": "other way", "alternativesConsidered": ["this way"]},
    }


@pytest.mark.parametrize(
    ("operation", "variables", "code", "detail"),
    [
        (
            "query($id: ID!) { impact(decisionId: $id) { countsByType { count } } }",
            {"id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
            "NOT_FOUND",
            "does not exist",
        ),
        (INSTANTIATE, {"input": {"description": "  "}}, "VALIDATION_FAILED", "description"),
        (
            "mutation($id: ID!) { advancePhase(planId: $id, phase: APPLY) { id } }",
            {"id": "PLAN"},
            "PHASE_VIOLATION",
            "strategize -> apply",
        ),
        (RECORD, {"input": "RECORD_IN_APPLY"}, "VALIDATION_FAILED", "confidence_score"),
    ],
)
def test_expected_failures_carry_a_code_and_write_nothing(
    api: httpx.Client, graph: Graph, operation: str, variables: dict[str, Any], code: str, detail: str
) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    variables = {k: plan["id"] if v == "PLAN" else v for k, v in variables.items()}
    if variables.get("input") == "RECORD_IN_APPLY":
        variables["input"] = {
            "planId": plan["id"],
            "decisionType": "STRATEGY_CHOICE",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": snapshot(),
            "confidenceScore": 3.5,
        }
    before = count_graph(graph)

    error = error_code(api, operation, **variables)

    assert error["code"] == code
    assert detail in error["message"]
    assert count_graph(graph) == before


def test_conflicts_name_the_superseding_decision(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = record(api, plan["id"])["decision"]
    correct = "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }"
    first = ok(api, correct, input={"decisionId": strategy["id"], "mode": "APPEND", "guidance": "g"})

    error = error_code(api, correct, input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "again"})

    assert error["code"] == "CONFLICT"
    assert first["correctDecision"]["correction"]["id"] in error["message"]


def test_an_internal_failure_is_masked_over_http(api: httpx.Client, graph: Graph) -> None:
    # A real failure: a stored record the code cannot read (its resources are not JSON).
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    broken = record(api, plan["id"])["decision"]["id"]
    graph.driver.execute_query(
        "MATCH (d:Decision {decision_id: $id}) SET d.relevant_resources = 'MATCH (n) password=secret {'",
        id=broken,
        database_=graph.database,
    )

    body = gql(api, "query($id: ID!) { decision(id: $id) { contextSnapshot { relevantResources { resourceId } } } }", id=broken)

    assert body["data"] == {"decision": None}
    [error] = body["errors"]
    assert error["message"] == "Unexpected error."  # nothing of the cause reaches the client
    assert "extensions" not in error or "code" not in error["extensions"]
    assert not any(word in json.dumps(body) for word in ("password", "MATCH", "JSONDecodeError", "Traceback"))


def test_limits_are_enforced(api: httpx.Client) -> None:
    deep = 'query { plan(id: "x") { ' + "parentPlan { " * 14 + "id" + " }" * 14 + " } }"
    too_deep = error_code(api, deep)
    assert "exceeds maximum operation depth" in too_deep["message"]

    aliases = "query { " + " ".join(f'a{i}: plan(id: "x") {{ id }}' for i in range(40)) + " }"
    assert "aliases found" in error_code(api, aliases)["message"]

    many_tokens = "query { " + " ".join(["__typename"] * 6000) + " }"
    assert "tokens" in error_code(api, many_tokens)["message"]

    huge = api.post("/graphql", content=b"{" + b" " * (2 * 1024 * 1024) + b"}", headers={"Content-Type": "application/json"})
    assert huge.status_code == 413
    assert huge.json()["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"


NESTED = """
query($id: ID!) { plan(id: $id) {
  decisions(first: 100) { nodes { id children { id dependsOn { id plan { id } } } dependsOn { id plan { id description } } plan { id } } }
} }"""


def _plan_with(store: Trail, decisions: int) -> str:
    plan, root = instantiate_plan(store, f"{decisions} decisions", principal=LOCAL)
    previous = root
    for i in range(decisions):
        parent = root if i % 3 == 0 else previous
        previous = recording_service.record(
            store,
            decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, parent.decision_id, depends_on=(previous.decision_id,)),
            principal=LOCAL,
        )
    return plan.plan_id


def test_a_request_makes_only_the_loaders_it_uses(graph: Graph) -> None:
    """A context makes each DataLoader when its request first uses it: a request that reads
    nothing makes none, a request for a decision makes that one loader, kept for the request."""

    def loaders(context: Context) -> list[str]:
        return [name for name, value in vars(context).items() if isinstance(value, DataLoader)]

    nothing = Context(trail=Trail.on(graph), principal=LOCAL)
    assert asyncio.run(schema.execute("{ __typename }", context_value=nothing)).errors is None
    assert loaders(nothing) == []

    one = Context(trail=Trail.on(graph), principal=LOCAL)
    result = asyncio.run(schema.execute('{ decision(id: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { id } }', context_value=one))
    assert (result.errors, result.data) == (None, {"decision": None})
    assert loaders(one) == ["decisions"]
    assert one.decisions is one.decisions
    assert one.for_event().decisions is not one.decisions


def test_nested_queries_cost_round_trips_by_depth_not_by_size(graph: Graph) -> None:
    delete_all_data(graph)
    setup = Trail.on(graph)
    trips = []
    for size in (3, 40):
        plan_id = _plan_with(setup, size)
        store = Trail.on(graph)
        result = asyncio.run(
            schema.execute(NESTED, variable_values={"id": plan_id}, context_value=Context(trail=store, principal=LOCAL))
        )
        assert result.errors is None, result.errors
        assert result.data is not None and len(result.data["plan"]["decisions"]["nodes"]) == size + 1
        trips.append(store.database.round_trips)

    # The plan, the page of its decisions, those decisions (one batch), and one batch for every
    # decision's children; dependsOn and plan come from what those loaded (the loaders'
    # caches). Not one query per decision.
    assert trips[0] == trips[1] == 4


CORRECTIONS = """
query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes {
  id corrections { attemptNumber correctedDecisionId } context checkpointGroup { checkpointId }
} } } }"""


def test_every_decisions_corrections_context_and_checkpoint_group_come_from_one_statement_each(graph: Graph) -> None:
    delete_all_data(graph)
    setup = Trail.on(graph)
    trips, answers = [], []
    for size in (3, 40):
        plan_id = _plan_with(setup, size)
        listed = reading.list_decisions(setup, plan_id, principal=LOCAL)
        root, corrected = listed[0], listed[2]
        correction = correct(setup, corrected.decision_id, "append", "narrower", "r", principal=LOCAL).correction
        store = Trail.on(graph)
        result = asyncio.run(
            schema.execute(CORRECTIONS, variable_values={"id": plan_id}, context_value=Context(trail=store, principal=LOCAL))
        )
        assert result.errors is None, result.errors
        assert result.data is not None
        nodes = result.data["plan"]["decisions"]["nodes"]
        answers.append({n["id"]: n["corrections"] for n in nodes})
        trips.append(store.database.round_trips)
        one = [{"attemptNumber": 1, "correctedDecisionId": corrected.decision_id}]
        chain = {corrected.decision_id, correction.decision_id}  # the correction is on the chain too
        assert {d: answers[-1][d] for d in chain} == dict.fromkeys(chain, one)
        assert all(attempts == [] for d, attempts in answers[-1].items() if d not in chain)
        # The root's prompt and the correction's guidance are the contexts stored; Strategize
        # decisions have no checkpoint group.
        contexts = {n["id"]: n["context"] for n in nodes if n["context"] is not None}
        assert set(contexts) == {root.decision_id, correction.decision_id}
        assert "narrower" in contexts[correction.decision_id] and "decisions" in contexts[root.decision_id]
        assert all(n["checkpointGroup"] is None for n in nodes)

    # The plan, the page, its decisions (one batch), and one batch each for every decision's
    # corrections, contexts and checkpoint groups.
    assert trips[0] == trips[1] == 6
    # One slot per key, in key order (an unknown decision has none).
    assert reading.correction_attempts_of(setup, ["01ARZ3NDEKTSV4RRFFQ69G5FAV", corrected.decision_id])[0] == []


TWO_WRITES = """
mutation($x: ID!, $y: ID!, $p: ID!) {
  a: addDependency(decisionId: $y, dependsOnId: $x) { dependsOn { id status } }
  b: correctDecision(input: {decisionId: $x, mode: REVERT, guidance: "narrower"}) { invalidated { id status } }
  c: advancePhase(planId: $p, phase: EXECUTE) { phaseHistory { toPhase } }
  d: advancePhase(planId: $p, phase: STRATEGIZE, reason: "back") { phaseHistory { toPhase } }
}"""


def test_each_write_of_a_request_is_answered_after_it_not_from_what_an_earlier_one_read(api: httpx.Client) -> None:
    # Mutations run one after the other; what the first one's answer read must not answer a later
    # one's (a read made for the request is kept for the request, but not across its writes).
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    x = record(api, plan["id"])["decision"]["id"]
    y = record(api, plan["id"], question="Other?", context="o")["decision"]["id"]
    other = ok(api, INSTANTIATE, input={"description": "another plan"})["instantiatePlan"]
    record(api, other["id"], context="s")

    answer = ok(api, TWO_WRITES, x=x, y=y, p=other["id"])

    assert answer["a"]["dependsOn"] == [{"id": x, "status": "CURRENT"}]
    assert {d["id"]: d["status"] for d in answer["b"]["invalidated"]} == {x: "SUPERSEDED", y: "SUPERSEDED"}
    assert answer["c"]["phaseHistory"] == [{"toPhase": "EXECUTE"}]
    assert answer["d"]["phaseHistory"] == [{"toPhase": "EXECUTE"}, {"toPhase": "STRATEGIZE"}]


PHASES = "query { plans(first: 50) { nodes { id phaseHistory { toPhase reason } } } }"


def test_every_plans_phase_history_comes_from_one_statement(graph: Graph) -> None:
    delete_all_data(graph)
    setup = Trail.on(graph)
    trips = []
    for size in (2, 6):
        for i in range(size):
            plan, root = instantiate_plan(setup, f"plan {size}/{i}", principal=LOCAL)
            if i % 2:
                recording_service.record(
                    setup, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
                )
                advance_phase(setup, plan.plan_id, Phase.EXECUTE, reason=f"go {i}", principal=LOCAL)
        store = Trail.on(graph)
        result = asyncio.run(schema.execute(PHASES, context_value=Context(trail=store, principal=LOCAL)))
        assert result.errors is None, result.errors
        assert result.data is not None
        histories = {n["id"]: n["phaseHistory"] for n in result.data["plans"]["nodes"]}
        assert histories == {
            p: [
                {"toPhase": c["to_phase"].upper(), "reason": c["reason"]}
                for c in reading.phase_changes(setup, p, principal=LOCAL)
            ]
            for p in histories
        }
        assert sum(1 for h in histories.values() if h) == len(histories) // 2
        trips.append(store.database.round_trips)
    # The page of plans (its count and ids, then the plans) and one statement for every plan's history.
    assert trips[0] == trips[1]
    assert reading.phase_changes_of(setup, ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == [[]]


def test_every_mutation_forgets_the_requests_reads_before_it_runs() -> None:
    from decisiontrail.api import Mutation
    from decisiontrail.resolvers.writes import ReadsAfterWrite

    fields = Mutation.__strawberry_definition__.fields  # type: ignore[attr-defined]
    assert fields and all(any(isinstance(e, ReadsAfterWrite) for e in f.extensions) for f in fields)


LINEAGE = "query($id: ID!) { lineage(decisionId: $id) { decisions { id decisionType } plans { id } } }"
EXECUTE = "mutation($id: ID!) { advancePhase(planId: $id, phase: EXECUTE) { id phase } }"


def test_lineage_walks_up_through_parent_plans_and_dependencies(api: httpx.Client, store: Trail) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "parent"})["instantiatePlan"]
    strategy = record(api, plan["id"])["decision"]
    other = record(api, plan["id"], question="Other?", context="o")["decision"]
    spawn = record(api, plan["id"], "SUBPLAN_SPAWN", context="s", parentDecisionId=strategy["id"])["decision"]
    ok(api, EXECUTE, id=plan["id"])  # a child plan runs once its parent executes
    child = ok(api, INSTANTIATE, input={"description": "child", "parentDecisionId": spawn["id"]})["instantiatePlan"]
    child_strategy = record(api, child["id"], context="c", dependsOn=[other["id"]])["decision"]

    lineage = ok(api, LINEAGE, id=child_strategy["id"])["lineage"]

    assert {d["id"] for d in lineage["decisions"]} == {
        child["rootDecision"]["id"],
        spawn["id"],
        strategy["id"],
        plan["rootDecision"]["id"],
        other["id"],
    }
    assert {p["id"] for p in lineage["plans"]} == {plan["id"], child["id"]}
    # Ids alone are answered from the walk; asking for more reads the records: the same ones.
    whole = ok(
        api,
        "query($id: ID!) { lineage(decisionId: $id) { decisions { id question planId } plans { id description } } }",
        id=child_strategy["id"],
    )["lineage"]
    assert [d["id"] for d in whole["decisions"]] == [d["id"] for d in lineage["decisions"]]
    assert [p["id"] for p in whole["plans"]] == [p["id"] for p in lineage["plans"]]
    assert all(d["question"] and d["planId"] in {plan["id"], child["id"]} for d in whole["decisions"])


def test_add_dependency_records_influence_and_refuses_cycles(api: httpx.Client, graph: Graph) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    first = record(api, plan["id"])["decision"]
    second = record(api, plan["id"], question="Second?", context="2")["decision"]
    under_first = record(api, plan["id"], "RESOURCE_SELECTION", context="3", parentDecisionId=first["id"])["decision"]
    add = "mutation($d: ID!, $on: ID!) { addDependency(decisionId: $d, dependsOnId: $on) { id dependsOn { id } } }"

    added = ok(api, add, d=second["id"], on=first["id"])["addDependency"]
    before = count_graph(graph)
    cycle = error_code(api, add, d=first["id"], on=under_first["id"])  # under_first is downstream of first
    twice = error_code(api, add, d=second["id"], on=first["id"])

    assert added["dependsOn"] == [{"id": first["id"]}]
    assert (cycle["code"], cycle["rule"]) == ("VALIDATION_FAILED", "no_dependency_cycle")
    assert twice["rule"] == "dependency_is_new"
    assert count_graph(graph) == before


def test_record_decisions_is_one_transaction(api: httpx.Client, graph: Graph) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    batch = (
        """mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { id sequenceNumber } } }"""
    )

    def item(i: int, **fields: Any) -> dict[str, Any]:
        return {
            "planId": plan["id"],
            "decisionType": "STRATEGY_CHOICE",
            "question": f"q{i}",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": snapshot(f"b{i}"),
            **fields,
        }

    recorded = ok(api, batch, inputs=[item(i) for i in range(5)])["recordDecisions"]
    before = count_graph(graph)
    refused = error_code(api, batch, inputs=[item(10), item(11), item(12, decisionType="TOOL_INVOCATION")])

    assert [r["decision"]["sequenceNumber"] for r in recorded] == [1, 2, 3, 4, 5]
    assert refused["code"] == "PHASE_VIOLATION"
    assert count_graph(graph) == before  # the two valid ones were not written either


def test_a_malformed_batch_item_is_refused_naming_its_place_and_field(api: httpx.Client, graph: Graph) -> None:
    # The batch's variable is coerced by a plan of its type (schema/variables.py); what it cannot
    # take is judged by graphql-core, whose errors say where in the list and which field.
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    batch = """mutation($inputs: [RecordDecisionInput!]!) { recordDecisions(inputs: $inputs) { decision { id } } }"""
    good = {
        "planId": plan["id"],
        "decisionType": "STRATEGY_CHOICE",
        "question": "q",
        "chosenOption": "o",
        "rationale": "r",
        "contextSnapshot": snapshot("b"),
    }
    before = count_graph(graph)

    unknown = error_code(api, batch, inputs=[good, {**good, "colour": "blue"}])
    missing = error_code(api, batch, inputs=[good, good, {k: v for k, v in good.items() if k != "rationale"}])
    wrong = error_code(api, batch, inputs=[{**good, "confidenceScore": "high"}])

    assert unknown["message"].startswith("Variable '$inputs' has invalid value at [1]: ") and "'colour'" in unknown["message"]
    assert missing["message"].startswith("Variable '$inputs' has invalid value at [2]: ")
    assert "required field 'rationale'" in missing["message"]
    assert wrong["message"].startswith("Variable '$inputs' has invalid value at [0].confidenceScore: Float cannot")
    assert count_graph(graph) == before


PAGE = """query($id: ID!, $first: Int, $after: String, $filter: DecisionFilter) { plan(id: $id) {
  decisions(first: $first, after: $after, filter: $filter) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { sequenceNumber decisionType } }
  } } }"""


def test_decisions_page_by_cursor_with_filters(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    for i in range(7):
        record(
            api,
            plan["id"],
            question=f"Question {i}?",
            chosenOption="Gateway" if i % 2 else "mesh",
            context=f"p{i}",
            confidenceScore=i / 10,
        )

    pages, after = [], None
    for _ in range(10):  # 8 decisions, 3 a page: a pager that never ends fails here
        page = ok(api, PAGE, id=plan["id"], first=3, after=after)["plan"]["decisions"]
        pages.append([e["node"]["sequenceNumber"] for e in page["edges"]])
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    filtered = ok(api, PAGE, id=plan["id"], filter={"types": ["STRATEGY_CHOICE"], "minConfidence": 0.2, "text": "gateway"})[
        "plan"
    ]["decisions"]

    assert pages == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert page["totalCount"] == 8
    assert [e["node"]["sequenceNumber"] for e in filtered["edges"]] == [4, 6]  # i = 3, 5 (odd, >= 0.2)
    assert filtered["totalCount"] == 2
    assert error_code(api, PAGE, id=plan["id"], first=101)["field"] == "first"
    assert error_code(api, PAGE, id=plan["id"], after="bm90LWEtY3Vyc29y")["field"] == "after"


def test_total_count_is_answered_wherever_the_selection_asks_for_it(api: httpx.Client) -> None:
    """A page is counted only when its selection asks for totalCount (a count reads every match):
    the look-ahead finds it in fragments and tells aliases apart."""
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    for i in range(4):
        record(api, plan["id"], question=f"Question {i}?", context=f"p{i}")
    fragments = """query($id: ID!) { plan(id: $id) {
      plain: decisions(first: 2) { edges { node { sequenceNumber } } pageInfo { hasNextPage } }
      inline: decisions(first: 2) { ... on DecisionConnection { totalCount } }
      named: decisions(first: 2, filter: {types: [STRATEGY_CHOICE]}) { ...counted nodes { sequenceNumber } }
    } }
    fragment counted on DecisionConnection { totalCount }"""
    plans = "query { all: plans(first: 1) { totalCount nodes { id } } page: plans(first: 1) { nodes { id } } }"

    read = ok(api, fragments, id=plan["id"])["plan"]
    listed = ok(api, plans)

    assert read["plain"] == {
        "edges": [{"node": {"sequenceNumber": 0}}, {"node": {"sequenceNumber": 1}}],
        "pageInfo": {"hasNextPage": True},
    }
    assert read["inline"] == {"totalCount": 5}
    assert read["named"] == {"totalCount": 4, "nodes": [{"sequenceNumber": 1}, {"sequenceNumber": 2}]}
    assert listed["all"] == {"totalCount": 1, "nodes": [{"id": plan["id"]}]}
    assert listed["page"] == {"nodes": [{"id": plan["id"]}]}


def test_a_child_plan_is_refused_until_its_parent_executes_and_nothing_is_written(api: httpx.Client, graph: Graph) -> None:
    top = ok(api, INSTANTIATE, input={"description": "top"})["instantiatePlan"]
    strategy = record(api, top["id"])["decision"]
    spawn = record(api, top["id"], "SUBPLAN_SPAWN", parentDecisionId=strategy["id"])["decision"]
    before = count_graph(graph)

    refused = error_code(api, INSTANTIATE, input={"description": "early", "parentDecisionId": spawn["id"]})

    assert refused["code"] == "PHASE_VIOLATION" and refused["rule"] == "spawn_in_execute"
    assert "is in strategize" in refused["message"]
    assert count_graph(graph) == before
    ok(api, EXECUTE, id=top["id"])
    child = ok(api, INSTANTIATE, input={"description": "on time", "parentDecisionId": spawn["id"]})["instantiatePlan"]
    assert child["phase"] == "STRATEGIZE"


def test_plan_hierarchy_fields(api: httpx.Client) -> None:
    top = ok(api, INSTANTIATE, input={"description": "top"})["instantiatePlan"]
    strategy = record(api, top["id"])["decision"]
    spawn = record(api, top["id"], "SUBPLAN_SPAWN", parentDecisionId=strategy["id"])["decision"]
    assert ok(api, EXECUTE, id=top["id"])["advancePhase"]["phase"] == "EXECUTE"
    child = ok(api, INSTANTIATE, input={"description": "child", "parentDecisionId": spawn["id"]})["instantiatePlan"]
    child_strategy = record(api, child["id"], context="c")["decision"]
    child_spawn = record(api, child["id"], "SUBPLAN_SPAWN", context="c", parentDecisionId=child_strategy["id"])["decision"]
    ok(api, EXECUTE, id=child["id"])
    grandchild = ok(api, INSTANTIATE, input={"description": "grandchild", "parentDecisionId": child_spawn["id"]})[
        "instantiatePlan"
    ]

    read = ok(
        api,
        """query($top: ID!, $leaf: ID!) {
          top: plan(id: $top) { childPlans { id } descendants { id } tree { depth decision { decisionType } } }
          leaf: plan(id: $leaf) { ancestors { id } parentPlan { id } spawnedBy { id } }
          plans(topLevel: true) { totalCount nodes { id } }
        }""",
        top=top["id"],
        leaf=grandchild["id"],
    )

    assert read["top"]["childPlans"] == [{"id": child["id"]}]
    assert read["top"]["descendants"] == [{"id": child["id"]}, {"id": grandchild["id"]}]
    assert read["top"]["tree"] == [
        {"depth": 0, "decision": {"decisionType": "PROMPT_DEFINITION"}},
        {"depth": 1, "decision": {"decisionType": "STRATEGY_CHOICE"}},
        {"depth": 2, "decision": {"decisionType": "SUBPLAN_SPAWN"}},
    ]
    assert read["leaf"]["ancestors"] == [{"id": child["id"]}, {"id": top["id"]}]
    assert read["leaf"]["spawnedBy"] == {"id": child_spawn["id"]}
    assert read["plans"] == {"totalCount": 1, "nodes": [{"id": top["id"]}]}


def test_plans_are_found_by_description_id_or_project_in_any_case(api: httpx.Client) -> None:
    billing = ok(api, INSTANTIATE, input={"description": "Rate limits for the Billing API", "project": "payments"})
    search = ok(api, INSTANTIATE, input={"description": "Faster search results", "project": "Catalogue"})
    ok(api, INSTANTIATE, input={"description": "Something else", "project": "payments"})
    found = lambda text: ok(  # noqa: E731
        api, "query($s: String) { plans(search: $s) { totalCount nodes { id } } }", s=text
    )["plans"]

    assert found("billing api") == {"totalCount": 1, "nodes": [{"id": billing["instantiatePlan"]["id"]}]}
    assert found("CATALOGUE")["nodes"] == [{"id": search["instantiatePlan"]["id"]}]
    assert found(search["instantiatePlan"]["id"][-8:].lower())["nodes"] == [{"id": search["instantiatePlan"]["id"]}]
    assert found("PAYMENTS")["totalCount"] == 2
    assert found("nothing like it") == {"totalCount": 0, "nodes": []}
    assert found("   ")["totalCount"] == 3  # blank: every plan

    refused = error_code(api, "query($s: String) { plans(search: $s) { totalCount } }", s="x" * 201)
    assert refused["code"] == "VALIDATION_FAILED" and refused["field"] == "search"


def test_a_decision_lists_its_corrections(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = record(api, plan["id"])["decision"]
    ok(
        api,
        "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }",
        input={"decisionId": strategy["id"], "mode": "REVERT", "guidance": "better", "reason": "worse"},
    )

    read = ok(
        api,
        "query($id: ID!) { decision(id: $id) { status supersededBy { isCorrection } corrections { attemptNumber guidance } } }",
        id=strategy["id"],
    )

    assert read["decision"] == {
        "status": "SUPERSEDED",
        "supersededBy": {"isCorrection": True},
        "corrections": [{"attemptNumber": 1, "guidance": "better"}],
    }


def _until_subscribed(api: httpx.Client, ws: Any, plan_id: str, *, seconds: float = 15.0) -> None:
    """Record probe decisions until this subscriber receives one: the protocol acknowledges the
    connection, not the subscription, so its first event is the proof that it is live."""
    import json as _json

    deadline = time.monotonic() + seconds
    probe = 0
    while time.monotonic() < deadline:
        probing = record(api, plan_id, question=f"Probe {probe}?", context=f"probe {probe}", confidenceScore=1.0)
        expected = probing["decision"]["id"]
        try:
            while True:  # an earlier probe's event may arrive first: read on to this one's
                event = _json.loads(ws.recv(timeout=0.5))["payload"]["data"]["decisionEvents"]
                if event["decisionId"] == expected:
                    return
        except TimeoutError:
            probe += 1
    raise AssertionError(f"no event reached the subscriber within {seconds} s")


def test_decision_events_stream_over_a_real_websocket(api: httpx.Client, base_url: str) -> None:
    import json as _json

    plan = ok(api, INSTANTIATE, input={"description": "p", "automationProfile": {"editCode": 0.8}})["instantiatePlan"]
    query = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId reviewId decision { chosenOption } } }"
    with subscribed(base_url, query, {"id": plan["id"]}) as ws:
        _until_subscribed(api, ws, plan["id"])
        strategy = record(api, plan["id"], confidenceScore=0.9)["decision"]
        held = record(api, plan["id"], question="Held?", context="h", confidenceScore=0.1)["review"]
        ok(
            api,
            'mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: APPEND, guidance: "g"}) { correction { id } } }',
            d=strategy["id"],
        )

        events = []
        while len(events) < 4:
            message = _json.loads(ws.recv(timeout=10))
            assert message["type"] == "next", message
            events.append(message["payload"]["data"]["decisionEvents"])
        ws.send(_json.dumps({"id": "1", "type": "complete"}))

    assert events[0] == {
        "kind": "RECORDED",
        "decisionId": strategy["id"],
        "reviewId": None,
        "decision": {"chosenOption": "this way"},
    }
    assert (events[1]["kind"], events[1]["reviewId"]) == ("REVIEW_PENDING", held["id"])
    assert events[2]["kind"] == "RECORDED"  # the correction
    assert (events[3]["kind"], events[3]["decisionId"]) == ("SUPERSEDED", strategy["id"])


def test_each_event_reads_its_decision_as_it_stands_then_not_as_an_earlier_event_read_it(
    api: httpx.Client, base_url: str
) -> None:
    """A subscription's context lasts as long as its connection: what one event's ``decision``
    read must not answer a later event's (the RECORDED event read the decision current; its
    SUPERSEDED event must read it superseded)."""
    import json as _json

    plan = ok(api, INSTANTIATE, input={"description": "p", "automationProfile": {"editCode": 0.8}})["instantiatePlan"]
    query = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId decision { status supersededBy { id } } } }"
    with subscribed(base_url, query, {"id": plan["id"]}) as ws:
        _until_subscribed(api, ws, plan["id"])

        def next_about(decision_id: str) -> dict[str, Any]:
            while True:
                message = _json.loads(ws.recv(timeout=10))
                assert message["type"] == "next", message
                event: dict[str, Any] = message["payload"]["data"]["decisionEvents"]
                if event["decisionId"] == decision_id:
                    return event

        strategy = record(api, plan["id"], confidenceScore=0.9)["decision"]
        about_strategy = [next_about(strategy["id"])]  # delivered (and read) before the correction
        correction = ok(
            api,
            'mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: REVERT, guidance: "g"}) { correction { id } } }',
            d=strategy["id"],
        )["correctDecision"]["correction"]
        about_strategy.append(next_about(strategy["id"]))
        ws.send(_json.dumps({"id": "1", "type": "complete"}))

    assert about_strategy == [
        {"kind": "RECORDED", "decisionId": strategy["id"], "decision": {"status": "CURRENT", "supersededBy": None}},
        {
            "kind": "SUPERSEDED",
            "decisionId": strategy["id"],
            "decision": {"status": "SUPERSEDED", "supersededBy": {"id": correction["id"]}},
        },
    ]


def test_a_langgraph_actor_records_through_the_client(api: httpx.Client, base_url: str, store: Trail) -> None:
    from langchain_core.messages import HumanMessage
    from langgraph.types import Command

    from decisiontrail.actors.graph import build_actor, sqlite_checkpointer
    from decisiontrail.actors.scripted import ScriptedChatModel, decide
    from decisiontrail.actors.tool import record_decision_tool
    from decisiontrail.client import DecisionTrailClient

    with DecisionTrailClient(base_url) as client, sqlite_checkpointer(":memory:") as saver:
        plan = client.instantiate_plan("remote actor", {"n": 1}, edit_code=0.8)
        actor = build_actor(
            ScriptedChatModel(
                script=[
                    decide(
                        decision_type="strategy_choice",
                        question="How?",
                        chosen_option="carefully",
                        confidence_score=0.9,
                        rationale="r",
                    ),
                    decide(
                        decision_type="resource_selection",
                        question="What?",
                        chosen_option="a.py",
                        confidence_score=0.4,
                        alternatives_considered=["b.py"],
                        rationale="r",
                    ),
                ]
            ),
            [record_decision_tool(client)],
            saver,
        )
        config = {"configurable": {"thread_id": "remote-1"}}
        paused = actor.invoke({"messages": [HumanMessage("go")], "plan_id": plan["id"], "resources": ["repo:x"]}, config)
        request = paused["__interrupt__"][0].value
        client.resolve_review(request["review_id"], "select_alternative", "b.py")
        final = actor.invoke(Command(resume=True), config)

    ids = [json.loads(str(m.content))["decision_id"] for m in final["messages"] if m.type == "tool"]
    stored = [reading.get_decision(store, i, principal=LOCAL) for i in ids]
    assert [d.chosen_option for d in stored] == ["carefully", "b.py"]
    assert stored[1].parent_decision_id == stored[0].decision_id
    # The same snapshot capture as in-process: the context is stored and hashes back.
    snapshot = stored[0].context_snapshot
    assert snapshot.actor_state_ref is not None and snapshot.actor_state_ref.thread_id == "remote-1"
    assert (
        hashlib.sha256(reading.read_context(store, snapshot.hot_context_hash, principal=LOCAL).encode()).hexdigest()
        == snapshot.hot_context_hash
    )
    assert [r.resource_id for r in snapshot.relevant_resources] == ["repo:x"]
    assert len(reading.list_decisions(store, plan["id"], principal=LOCAL)) == 3  # root + two, the reviewed one once


def test_the_client_raises_the_services_exceptions(base_url: str, store: Trail) -> None:
    from decisiontrail.client import DecisionTrailClient
    from decisiontrail.exceptions import Conflict, NotFound, RuleViolation, ValidationFailed

    with DecisionTrailClient(base_url) as client:
        plan = client.instantiate_plan("p")
        root = plan["rootDecision"]["id"]
        with pytest.raises(NotFound, match="does not exist"):
            client.impact("01ARZ3NDEKTSV4RRFFQ69G5FAV")
        with pytest.raises(ValidationFailed) as invalid:
            client.correct(root, "revert", "   ")
        client.correct(root, "revert", "a better prompt")
        with pytest.raises(Conflict, match="already superseded"):
            client.correct(root, "revert", "again")
        with pytest.raises(RuleViolation):
            client.execute("mutation($p: ID!) { advancePhase(planId: $p, phase: APPLY) { id } }", p=plan["id"])

    assert invalid.value.field == "guidance"


def test_neo4j_down_is_unavailable_at_once_and_retryable() -> None:
    from decisiontrail.graphdb.connection import create_driver

    dead = Graph(driver=create_driver("bolt://127.0.0.1:9", None, None), database="neo4j", uri="bolt://127.0.0.1:9")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(graph=dead), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not server.started:
            assert time.monotonic() < deadline, "the server did not start within 15 s"
            time.sleep(0.05)
        # A refused connection is not retried (connection.MAX_TRANSACTION_RETRY_TIME is 0): the answer
        # comes at once, so a client that waits 5 s, half the old retry time, gets it.
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            error = error_code(client, "query { plans { totalCount } }")
            ready = client.get("/readyz")
    finally:
        server.should_exit = True
        thread.join(10)
        dead.driver.close()

    assert (error["code"], error["retryable"]) == ("UNAVAILABLE", True)
    assert error["message"] == "Neo4j is unavailable; the request wrote nothing and can be retried"
    assert ready.status_code == 503 and ready.json()["status"] == "unavailable"


def test_readiness_asks_the_database_for_a_transaction_not_the_server_for_a_connection(graph: Graph) -> None:
    """A Neo4j that answers while its database takes no transaction (after a full disk, Neo4j's
    database waits for a restart; here: a database that does not exist) is not ready: a balancer
    must not send it requests (was: 200, /readyz only verified the connection)."""
    elsewhere = Graph(driver=graph.driver, database="nosuchdatabase", uri=graph.uri)

    with served(create_app(graph=elsewhere)) as url:
        not_ready = httpx.get(f"{url}/readyz", timeout=30)
    with served(create_app(graph=graph)) as url:
        ready = httpx.get(f"{url}/readyz", timeout=30)

    assert not_ready.status_code == 503 and not_ready.json()["status"] == "unavailable", not_ready.text
    assert ready.status_code == 200 and ready.json() == {"status": "ready"}


def test_a_reviewer_sees_what_the_review_asks_them_to_judge(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p", "automationProfile": {"editCode": 0.8}})["instantiatePlan"]
    held = record(api, plan["id"], confidenceScore=0.5, alternativesConsidered=["other way"], context="judged")["review"]
    query = """query($id: ID!) { pendingReviews(planId: $id) {
        id question chosenOption alternativesConsidered confidenceScore rationale phase threshold
        parent { id } contextSnapshot { hotContextHash actorStateRef { threadId } } createdAt resolvedAt resolvedBy } }"""

    [review] = ok(api, query, id=plan["id"])["pendingReviews"]

    assert review["id"] == held["id"]
    assert (review["question"], review["chosenOption"], review["alternativesConsidered"]) == (
        "Which way?",
        "this way",
        ["other way"],
    )
    assert (review["confidenceScore"], review["threshold"], review["phase"]) == (0.5, 0.8, "STRATEGIZE")
    assert review["rationale"] == "because"
    assert review["parent"] == {"id": plan["rootDecision"]["id"]}
    assert review["contextSnapshot"] == {
        "hotContextHash": snapshot("judged")["hotContextHash"],
        "actorStateRef": {"threadId": "agent-1"},
    }
    assert review["createdAt"] is not None and review["resolvedAt"] is None and review["resolvedBy"] is None


def test_a_recording_keeps_the_actors_reasoning_and_artifacts(api: httpx.Client, graph: Graph) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    read = "query($id: ID!) { decision(id: $id) { actorReasoning artifactsProduced { artifactPath artifactType } } }"
    artifacts = [{"artifactPath": "src/limits.py", "artifactType": "source"}]

    recorded = record(api, plan, actorReasoning="the gateway is shared, so...", artifactsProduced=artifacts)["decision"]
    before = count_graph(graph)
    refused = gql(
        api,
        RECORD,
        input={
            "planId": plan,
            "decisionType": "STRATEGY_CHOICE",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": snapshot("bad artifact"),
            "artifactsProduced": [{"artifactPath": " ", "artifactType": "source"}],
        },
    )

    assert ok(api, read, id=recorded["id"])["decision"] == {
        "actorReasoning": "the gateway is shared, so...",
        "artifactsProduced": artifacts,
    }
    assert refused["errors"][0]["extensions"]["code"] == "VALIDATION_FAILED"
    assert "artifact_path" in refused["errors"][0]["message"]
    assert count_graph(graph) == before


def test_the_client_sends_the_actors_reasoning_and_artifacts(base_url: str, store: Trail) -> None:
    from decisiontrail.client import DecisionTrailClient
    from decisiontrail.domain import ArtifactRef
    from factories import actor_snapshot

    with DecisionTrailClient(base_url) as client:
        plan = client.instantiate_plan("p")
        recorded = client.record(
            {
                "decision_type": "strategy_choice",
                "question": "Which limiter?",
                "chosen_option": "a token bucket",
                "rationale": "r",
            },
            plan_id=plan["id"],
            snapshot=actor_snapshot("client"),
            actor_reasoning="bursts matter",
            artifacts_produced=[ArtifactRef(artifact_path="docs/limits.md", artifact_type="doc")],
        )

    stored = reading.get_decision(store, recorded.decision_id, principal=LOCAL)
    assert stored.actor_reasoning == "bursts matter"
    assert stored.artifacts_produced == (ArtifactRef(artifact_path="docs/limits.md", artifact_type="doc"),)


def test_a_decision_shows_its_stored_context_and_checkpoint_group(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = record(api, plan["id"], context="strategize context")["decision"]
    elsewhere = {k: v for k, v in snapshot("kept elsewhere").items() if k != "hotContext"} | {"hotContextRef": "s3://contexts/1"}
    external = ok(
        api,
        RECORD,
        input={
            "planId": plan["id"],
            "decisionType": "STRATEGY_CHOICE",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": elsewhere,
        },
    )["recordDecision"]["decision"]
    ok(api, "mutation($id: ID!) { advancePhase(planId: $id, phase: EXECUTE) { id } }", id=plan["id"])
    tool = record(api, plan["id"], "TOOL_INVOCATION", context="execute context", parentDecisionId=strategy["id"])["decision"]
    read = "query($id: ID!) { decision(id: $id) { context checkpointGroup { threadId checkpointId resources } } }"

    assert ok(api, read, id=strategy["id"])["decision"] == {"context": "strategize context", "checkpointGroup": None}
    assert ok(api, read, id=external["id"])["decision"] == {"context": None, "checkpointGroup": None}
    executed = ok(api, read, id=tool["id"])["decision"]
    assert executed["context"] == "execute context"
    group = executed["checkpointGroup"]
    assert (group["threadId"], group["checkpointId"]) == ("agent-1", "cp-execute context")
    assert len(group["resources"]) == 1 and "repo:app" in group["resources"][0]


def test_recording_offers_actors_exactly_their_nine_types(api: httpx.Client) -> None:
    from decisiontrail.domain.recording import SYSTEM_DECISION_TYPES
    from decisiontrail.schema.common import ActorDecisionType

    assert {t.value for t in ActorDecisionType} == {t.value for t in DecisionType} - {t.value for t in SYSTEM_DECISION_TYPES}
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    refused = gql(
        api,
        RECORD,
        input={
            "planId": plan["id"],
            "decisionType": "USER_INTERVENTION",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "contextSnapshot": snapshot("system type"),
        },
    )
    assert "ActorDecisionType" in refused["errors"][0]["message"]


def test_neo4j_failing_under_a_nested_field_is_unavailable_not_masked(api: httpx.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by make reliability's neo4j_restart: Plan.rootDecision read the plan's decisions without
    # turning a failure into its code, so "Neo4j is unavailable" reached the client as "Unexpected error.".
    from decisiontrail.exceptions import Unavailable
    from decisiontrail.services import reading

    plan = ok(api, INSTANTIATE, input={"description": "nested"})["instantiatePlan"]

    def down(*args: object, **kwargs: object) -> None:
        raise Unavailable("Neo4j is unavailable; the request wrote nothing and can be retried")

    monkeypatch.setattr(reading, "list_decisions", down)
    error = error_code(api, "query($p: ID!) { plan(id: $p) { id rootDecision { id } } }", p=plan["id"])

    assert error["code"] == "UNAVAILABLE" and error["retryable"] is True


def test_resolvers_run_services_only_through_call_or_a_loader() -> None:
    # ``in_thread`` runs a service without turning its failures into codes: only ``call`` and the
    # DataLoaders (which translate themselves) may use it.
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "src" / "decisiontrail"
    users = sorted(
        str(path.relative_to(package))
        for folder in ("schema", "resolvers")
        for path in (package / folder).glob("*.py")
        if any(isinstance(n, ast.Name) and n.id == "in_thread" for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
    )

    assert users == ["schema/context.py", "schema/errors.py"]


def test_a_started_service_leaves_its_start_up_heap_out_of_full_collections(
    graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Full collections walking the start-up heap were 110-130 ms pauses in the served tail (app.settle_heap).
    import gc

    from decisiontrail import app as app_module

    gc.unfreeze()  # whatever an earlier test's service froze: this one must freeze its own
    monkeypatch.setattr(app_module, "_heap_settled", False)
    with served(create_app(graph=graph)) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        frozen = gc.get_freeze_count()
        with served(create_app(graph=graph)):  # once per process: a second start freezes nothing more
            again = gc.get_freeze_count()

    assert frozen > 10_000  # the modules, the schema and the driver, at least
    assert again <= frozen  # (frozen objects freed by their reference counts leave it)
