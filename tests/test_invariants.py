"""Invariants are alive, over HTTP: global and project sets, gathered at instantiation, reconciled at
Strategize entry by the Invariant Reconciliation Actor, added and removed as ADR-007 describes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from decisiontrail.domain import DecisionType
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail, analysis, reading
from decisiontrail.access import LOCAL
from test_api import error_code, gql, ok, snapshot

SET = """
mutation($scope: InvariantScope!, $project: String, $invariants: [InvariantInput!]!) {
  setInvariants(scope: $scope, project: $project, invariants: $invariants) {
    scope project invariants { name statement scope } updatedBy
  }
}"""

GET = """
query($scope: InvariantScope!, $project: String) {
  invariantSet(scope: $scope, project: $project) { scope project invariants { name statement scope } }
}"""

INSTANTIATE = """
mutation($input: InstantiatePlanInput!) {
  instantiatePlan(input: $input) {
    id phase invariants { name statement scope } rootDecision { id }
    decisions { nodes { id decisionType chosenOption alternativesConsidered rationale parent { id } status } }
  }
}"""

ADD = """
mutation($input: AddInvariantInput!) {
  addInvariant(input: $input) { id decisionType chosenOption alternativesConsidered rationale parent { id } phase }
}"""

REMOVE = """
mutation($plan: ID!, $name: String!, $reason: String!) {
  removeInvariant(planId: $plan, name: $name, reason: $reason) {
    correction { id decisionType } invalidated { id decisionType }
  }
}"""

RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
PLAN = "query($id: ID!) { plan(id: $id) { phase invariants { name statement scope } } }"
PHASE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id phase } }"


def _enforced(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        d["chosenOption"]: d
        for d in plan["decisions"]["nodes"]
        if d["decisionType"] == "INVARIANT_ENFORCED" and d["status"] == "CURRENT"
    }


def _configured(api: httpx.Client) -> None:
    ok(api, SET, scope="GLOBAL", invariants=[{"name": "coverage", "statement": "at least 80%"}])
    ok(api, SET, scope="PROJECT", project="billing", invariants=[{"name": "compat", "statement": "no breaking changes"}])


def test_a_plan_gathers_the_global_project_and_its_own_invariants_and_enforces_them(api: httpx.Client, store: Trail) -> None:
    _configured(api)
    stored = ok(api, GET, scope="PROJECT", project="billing")["invariantSet"]
    assert stored == {
        "scope": "PROJECT",
        "project": "billing",
        "invariants": [{"name": "compat", "statement": "no breaking changes", "scope": "PROJECT"}],
    }

    plan = ok(
        api,
        INSTANTIATE,
        input={
            "description": "rate limits",
            "project": "billing",
            "invariants": [{"name": "coverage", "statement": "at least 95%", "scope": "ACTION"}],
        },
    )["instantiatePlan"]

    assert [(i["name"], i["scope"]) for i in plan["invariants"]] == [
        ("coverage", "GLOBAL"),
        ("compat", "PROJECT"),
        ("coverage", "ACTION"),
    ]
    enforced = _enforced(plan)
    # One invariant_enforced per enforced invariant, under the root, the overridden one as its alternative.
    assert set(enforced) == {"at least 95%", "no breaking changes"}
    assert enforced["at least 95%"]["alternativesConsidered"] == ["at least 80%"]
    assert all(d["parent"] == {"id": plan["rootDecision"]["id"]} for d in enforced.values())
    assert "precedence" in enforced["at least 95%"]["rationale"]
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok


def test_a_child_plan_inherits_its_parent_plans_invariants(api: httpx.Client, store: Trail) -> None:
    _configured(api)
    parent = ok(
        api, INSTANTIATE, input={"description": "p", "project": "billing", "invariants": [{"name": "docs", "statement": "kept"}]}
    )["instantiatePlan"]
    strategy = ok(api, RECORD, input=_record(parent["id"], "STRATEGY_CHOICE", parent["rootDecision"]["id"]))
    spawn = ok(api, RECORD, input=_record(parent["id"], "SUBPLAN_SPAWN", strategy["recordDecision"]["decision"]["id"]))

    spawn_id = spawn["recordDecision"]["decision"]["id"]
    ok(api, PHASE, id=parent["id"], phase="EXECUTE")
    child = ok(api, INSTANTIATE, input={"description": "c", "parentDecisionId": spawn_id})["instantiatePlan"]

    assert {i["name"] for i in child["invariants"]} == {"coverage", "compat", "docs"}
    assert set(_enforced(child)) == {"at least 80%", "no breaking changes", "kept"}


def test_reverting_to_strategize_reconciles_again_without_repeating(api: httpx.Client, store: Trail) -> None:
    _configured(api)
    plan = ok(api, INSTANTIATE, input={"description": "p", "project": "billing"})["instantiatePlan"]
    ok(api, RECORD, input=_record(plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"]))
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    ok(api, PHASE, id=plan["id"], phase="STRATEGIZE")

    enforced = [
        d
        for d in reading.list_decisions(store, plan["id"], principal=LOCAL)
        if d.decision_type is DecisionType.INVARIANT_ENFORCED
    ]
    assert sorted(d.chosen_option for d in enforced) == ["at least 80%", "no breaking changes"]


def test_a_missing_constraint_is_added_and_one_that_should_not_apply_is_removed(api: httpx.Client, store: Trail) -> None:
    _configured(api)
    plan = ok(api, INSTANTIATE, input={"description": "p", "project": "billing"})["instantiatePlan"]

    added = ok(api, ADD, input={"planId": plan["id"], "name": "latency", "statement": "p95 under 50 ms", "reason": "an SLO"})[
        "addInvariant"
    ]
    assert (added["decisionType"], added["chosenOption"], added["phase"]) == (
        "INVARIANT_ENFORCED",
        "p95 under 50 ms",
        "STRATEGIZE",
    )
    assert added["parent"] == {"id": plan["rootDecision"]["id"]} and added["rationale"].startswith("latency: added by local")
    assert ("latency", "p95 under 50 ms", "PLAN") in {
        (i["name"], i["statement"], i["scope"]) for i in ok(api, PLAN, id=plan["id"])["plan"]["invariants"]
    }
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok

    removed = ok(api, REMOVE, plan=plan["id"], name="compat", reason="an internal service")["removeInvariant"]
    assert removed["correction"]["decisionType"] == "USER_INTERVENTION"
    assert [d["decisionType"] for d in removed["invalidated"]] == ["INVARIANT_ENFORCED"]
    assert "compat" not in {i["name"] for i in ok(api, PLAN, id=plan["id"])["plan"]["invariants"]}
    ok(api, RECORD, input=_record(plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"]))
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    report = analysis.check(store, LoadScope.ALL, principal=LOCAL)
    assert report.ok, report.render()  # past Strategize, every declared invariant is enforced


@pytest.mark.parametrize(
    ("query", "variables", "code"),
    [
        (SET, {"scope": "GLOBAL", "project": "billing", "invariants": []}, "VALIDATION_FAILED"),
        (SET, {"scope": "PROJECT", "invariants": []}, "VALIDATION_FAILED"),
        (SET, {"scope": "ACTION", "invariants": []}, "VALIDATION_FAILED"),
        (SET, {"scope": "GLOBAL", "invariants": [{"name": "a", "statement": " "}]}, "VALIDATION_FAILED"),  # was masked
        (
            SET,
            {"scope": "GLOBAL", "invariants": [{"name": "a", "statement": "x"}, {"name": "a", "statement": "y"}]},
            "VALIDATION_FAILED",
        ),
        (
            INSTANTIATE,
            {"input": {"description": "p", "invariants": [{"name": "a", "statement": "x", "scope": "GLOBAL"}]}},
            "VALIDATION_FAILED",
        ),
    ],
)
def test_bad_invariants_are_refused_and_nothing_is_written(
    api: httpx.Client, graph: Graph, query: str, variables: dict[str, Any], code: str
) -> None:
    before = count_graph(graph)
    assert error_code(api, query, **variables)["code"] == code
    assert count_graph(graph) == before


def test_adding_and_removing_are_refused_where_they_cannot_apply(api: httpx.Client, graph: Graph) -> None:
    _configured(api)
    plan = ok(api, INSTANTIATE, input={"description": "p", "project": "billing"})["instantiatePlan"]
    before = count_graph(graph)

    assert error_code(api, ADD, input={"planId": plan["id"], "name": "compat", "statement": "s"})["code"] == "CONFLICT"
    assert error_code(api, REMOVE, plan=plan["id"], name="nothing-like-it", reason="r")["code"] == "NOT_FOUND"
    assert error_code(api, REMOVE, plan=plan["id"], name="compat", reason="  ")["code"] == "VALIDATION_FAILED"
    assert count_graph(graph) == before

    ok(api, RECORD, input=_record(plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"]))
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    before = count_graph(graph)
    refused = error_code(api, ADD, input={"planId": plan["id"], "name": "late", "statement": "s"})
    assert refused["code"] == "PHASE_VIOLATION", refused
    assert count_graph(graph) == before


def _record(plan_id: str, decision_type: str, parent_id: str) -> dict[str, Any]:
    return {
        "planId": plan_id,
        "decisionType": decision_type,
        "question": f"which {decision_type}?",
        "chosenOption": "this",
        "rationale": "r",
        "parentDecisionId": parent_id,
        "contextSnapshot": snapshot(decision_type),
    }


def test_the_global_set_is_read_back(api: httpx.Client, store: Trail) -> None:
    assert ok(api, GET, scope="GLOBAL")["invariantSet"] is None
    set_ = ok(api, SET, scope="GLOBAL", invariants=[{"name": "coverage", "statement": "at least 80%", "scope": "PLAN"}])
    assert set_["setInvariants"]["invariants"] == [{"name": "coverage", "statement": "at least 80%", "scope": "GLOBAL"}]
    assert set_["setInvariants"]["updatedBy"] == "local"
    assert gql(api, GET, scope="GLOBAL")["data"]["invariantSet"]["invariants"][0]["scope"] == "GLOBAL"
