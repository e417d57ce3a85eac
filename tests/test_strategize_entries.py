"""Every Strategize entry reconciles, and Execute never runs with a declared invariant unenforced;
one child plan per subplan_spawn. Over HTTP, against the served reconciler (ADR-033, ADR-007)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from decisiontrail.domain import DecisionType, Invariant
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail, analysis, lifecycle, reading
from decisiontrail.access import LOCAL
from test_api import error_code, gql, ok, record

SET = """
mutation($invariants: [InvariantInput!]!) {
  setInvariants(scope: GLOBAL, invariants: $invariants) { scope }
}"""
INSTANTIATE = """
mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"""
CORRECT = """
mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id decisionType } } }"""
PHASE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id phase } }"
PLAN = """
query($id: ID!) { plan(id: $id) {
  phase
  decisions(filter: {status: CURRENT}) { nodes { id decisionType chosenOption rationale parent { id } } }
} }"""
PENDING = "query($id: ID!) { pendingReviews(planId: $id) { id decisionType chosenOption } }"
RESOLVE = """
mutation($id: ID!) { resolveReview(input: {reviewId: $id, action: APPROVE}) { decision { id decisionType } } }"""

TWO = [{"name": "coverage", "statement": "at least 80%"}, {"name": "compat", "statement": "no breaking changes"}]


def _current(api: httpx.Client, plan_id: str) -> tuple[str, list[dict[str, Any]]]:
    plan = ok(api, PLAN, id=plan_id)["plan"]
    return plan["phase"], plan["decisions"]["nodes"]


def _enforced(decisions: list[dict[str, Any]]) -> list[str]:
    return sorted(d["chosenOption"] for d in decisions if d["decisionType"] == "INVARIANT_ENFORCED")


def test_a_prompt_correction_returns_the_plan_to_strategize_with_its_invariants_enforced_again(
    api: httpx.Client, store: Trail
) -> None:
    # Was: back in Strategize with no current invariant_enforced at all, and on to Execute unchallenged.
    ok(api, SET, invariants=TWO)
    plan = ok(api, INSTANTIATE, input={"description": "rate limits"})["instantiatePlan"]
    record(api, plan["id"], parentDecisionId=plan["rootDecision"]["id"])
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")

    corrected = ok(
        api, CORRECT, input={"decisionId": plan["rootDecision"]["id"], "mode": "REVERT", "guidance": "Rate limits per tenant"}
    )["correctDecision"]["correction"]
    phase, current = _current(api, plan["id"])

    assert corrected["decisionType"] == "PROMPT_DEFINITION"
    assert phase == "STRATEGIZE"
    assert _enforced(current) == ["at least 80%", "no breaking changes"]
    assert all(d["parent"] == {"id": corrected["id"]} for d in current if d["decisionType"] == "INVARIANT_ENFORCED")
    record(api, plan["id"], parentDecisionId=corrected["id"], context="after the correction")
    assert ok(api, PHASE, id=plan["id"], phase="EXECUTE")["advancePhase"]["phase"] == "EXECUTE"
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok


def test_a_revert_of_an_invariant_enforced_has_it_reconciled_again(api: httpx.Client, store: Trail) -> None:
    ok(api, SET, invariants=TWO[:1])
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    [enforcing] = [d for d in _current(api, plan["id"])[1] if d["decisionType"] == "INVARIANT_ENFORCED"]

    ok(api, CORRECT, input={"decisionId": enforcing["id"], "mode": "REVERT", "guidance": "state it again"})
    _, current = _current(api, plan["id"])

    assert _enforced(current) == ["at least 80%"]
    assert [d["id"] for d in current if d["decisionType"] == "INVARIANT_ENFORCED"] != [enforcing["id"]]
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok


def test_execute_is_refused_while_a_declared_invariant_is_unenforced_and_nothing_is_written(
    api: httpx.Client, store: Trail, graph: Graph
) -> None:
    # A plan written by a process without a reconciler (an author's own): nothing enforces its invariant.
    plan, root = lifecycle.instantiate_plan(store, "p", invariants=[Invariant(name="docs", statement="kept")], principal=LOCAL)
    record(api, plan.plan_id, parentDecisionId=root.decision_id)
    before = count_graph(graph)

    refused = error_code(api, PHASE, id=plan.plan_id, phase="EXECUTE")

    assert (refused["code"], refused["rule"]) == ("PHASE_VIOLATION", "invariants_enforced_before_execute")
    assert "'docs'" in refused["message"]
    assert count_graph(graph) == before
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase.value == "strategize"


def test_under_a_manual_profile_every_invariant_is_proposed_and_resolving_them_enforces_all(
    api: httpx.Client, store: Trail
) -> None:
    # Was: the reconciler paused on the first review and never proposed the second; once the first
    # was approved the plan reached Execute with the second unenforced.
    ok(api, SET, invariants=TWO)
    plan = ok(api, INSTANTIATE, input={"description": "p", "automationProfile": {"editCode": 1.0}})["instantiatePlan"]
    proposed = ok(api, PENDING, id=plan["id"])["pendingReviews"]
    assert sorted((r["decisionType"], r["chosenOption"]) for r in proposed) == [
        ("INVARIANT_ENFORCED", "at least 80%"),
        ("INVARIANT_ENFORCED", "no breaking changes"),
    ]

    ok(api, RESOLVE, id=proposed[0]["id"])
    # The reconciler ran again on the resolution: it proposes nothing already waiting.
    assert [r["id"] for r in ok(api, PENDING, id=plan["id"])["pendingReviews"]] == [proposed[1]["id"]]
    ok(api, RESOLVE, id=proposed[1]["id"])
    strategy = record(api, plan["id"], parentDecisionId=plan["rootDecision"]["id"])
    ok(api, RESOLVE, id=strategy["review"]["id"])

    assert _enforced(_current(api, plan["id"])[1]) == ["at least 80%", "no breaking changes"]
    assert ok(api, PENDING, id=plan["id"])["pendingReviews"] == []
    assert ok(api, PHASE, id=plan["id"], phase="EXECUTE")["advancePhase"]["phase"] == "EXECUTE"
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok


def _spawning(api: httpx.Client, spawn_type: str) -> str:
    """A parent plan in Execute with a spawn decision of ``spawn_type``; the spawn's id."""
    parent = ok(api, INSTANTIATE, input={"description": "parent"})["instantiatePlan"]
    strategy = record(api, parent["id"], parentDecisionId=parent["rootDecision"]["id"])
    spawn = record(api, parent["id"], spawn_type, parentDecisionId=strategy["decision"]["id"], context="spawn")
    ok(api, PHASE, id=parent["id"], phase="EXECUTE")
    return str(spawn["decision"]["id"])


def test_a_subplan_spawn_spawns_one_child_and_a_second_is_refused_naming_it(
    api: httpx.Client, store: Trail, graph: Graph
) -> None:
    spawn = _spawning(api, "SUBPLAN_SPAWN")
    child = ok(api, INSTANTIATE, input={"description": "child", "parentDecisionId": spawn})["instantiatePlan"]
    before = count_graph(graph)

    refused = error_code(api, INSTANTIATE, input={"description": "another child", "parentDecisionId": spawn})

    assert refused["code"] == "CONFLICT"
    assert child["id"] in refused["message"] and spawn in refused["message"]
    assert count_graph(graph) == before


def test_two_children_asked_of_one_subplan_spawn_at_once_make_one(api: httpx.Client, store: Trail, base_url: str) -> None:
    spawn = _spawning(api, "SUBPLAN_SPAWN")

    def ask(i: int) -> dict[str, Any]:
        with httpx.Client(base_url=base_url, timeout=30) as client:
            return gql(client, INSTANTIATE, input={"description": f"child {i}", "parentDecisionId": spawn})

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ask, range(4)))

    made = [a["data"]["instantiatePlan"]["id"] for a in answers if a.get("data") and a["data"]["instantiatePlan"]]
    assert len(made) == 1, answers
    assert sorted(a["errors"][0]["extensions"]["code"] for a in answers if "errors" in a) == ["CONFLICT"] * 3
    assert reading.child_plans_of(store, [reading.get_decision(store, spawn, principal=LOCAL).plan_id]) == [made]


def test_a_subplan_parallel_spawn_spawns_a_group(api: httpx.Client, store: Trail) -> None:
    spawn = _spawning(api, "SUBPLAN_PARALLEL_SPAWN")

    group = [ok(api, INSTANTIATE, input={"description": f"c{i}", "parentDecisionId": spawn})["instantiatePlan"] for i in range(3)]

    assert len({c["id"] for c in group}) == 3
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok
    assert reading.get_decision(store, spawn, principal=LOCAL).decision_type is DecisionType.SUBPLAN_PARALLEL_SPAWN


INVARIANTS = "query($id: ID!) { plan(id: $id) { invariants { name scope } } }"
REVERT = 'mutation($id: ID!) { advancePhase(planId: $id, phase: STRATEGIZE, reason: "rethink") { id phase } }'
REMOVE = (
    'mutation($id: ID!) { removeInvariant(planId: $id, name: "coverage", reason: "not for this plan") { attempt { attemptId } } }'
)


def _declared(api: httpx.Client, plan_id: str) -> list[str]:
    return sorted(i["name"] for i in ok(api, INVARIANTS, id=plan_id)["plan"]["invariants"])


def test_re_entering_strategize_gathers_the_scopes_as_they_are_now_less_what_was_removed(api: httpx.Client, store: Trail) -> None:
    # Was: a plan re-entering Strategize kept only what it declared when it was instantiated.
    ok(api, SET, invariants=TWO[:1])
    plan = ok(api, INSTANTIATE, input={"description": "rate limits", "invariants": [{"name": "fast", "statement": "p95 < 1 s"}]})[
        "instantiatePlan"
    ]
    record(api, plan["id"], parentDecisionId=plan["rootDecision"]["id"])
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    assert _declared(api, plan["id"]) == ["coverage", "fast"]

    ok(api, SET, invariants=TWO)  # the global set gains "compat" while the plan executes
    ok(api, REVERT, id=plan["id"])

    assert _declared(api, plan["id"]) == ["compat", "coverage", "fast"]
    assert _enforced(_current(api, plan["id"])[1]) == ["at least 80%", "no breaking changes", "p95 < 1 s"]

    ok(api, REMOVE, id=plan["id"])  # removed from this plan; still in the global set
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    ok(api, REVERT, id=plan["id"])

    assert _declared(api, plan["id"]) == ["compat", "fast"]
    assert _enforced(_current(api, plan["id"])[1]) == ["no breaking changes", "p95 < 1 s"]
    assert analysis.check_all(store, principal=LOCAL).ok
