"""impact(asOf) and lineage(asOf) over HTTP: what a correction would have invalidated then, and
where a decision came from, read as the hierarchy stood at a past moment (like Plan.tree(asOf))."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from decisiontrail.access import LOCAL, Principal, Role
from decisiontrail.services import Trail, reading
from test_api import error_code, ok, snapshot

INSTANTIATE = "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
CORRECT = "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }"
IMPACT = """
query($id: ID!, $at: DateTime) {
  impact(decisionId: $id, asOf: $at) { decisions { id } plans { id } countsByType { decisionType count } }
}"""
LINEAGE = "query($id: ID!, $at: DateTime) { lineage(decisionId: $id, asOf: $at) { decisions { id } plans { id } } }"


def _record(api: httpx.Client, plan_id: str, decision_type: str, parent: str, question: str = "") -> str:
    fields = {
        "planId": plan_id,
        "decisionType": decision_type,
        "question": question or f"which {decision_type}?",
        "chosenOption": "this",
        "rationale": "r",
        "parentDecisionId": parent,
        "contextSnapshot": snapshot(f"{plan_id} {decision_type}"),
    }
    return str(ok(api, RECORD, input=fields)["recordDecision"]["decision"]["id"])


def _hierarchy(api: httpx.Client) -> dict[str, str]:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = _record(api, plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"])
    spawn = _record(api, plan["id"], "SUBPLAN_SPAWN", strategy)
    ok(api, "mutation($id: ID!) { advancePhase(planId: $id, phase: EXECUTE) { id } }", id=plan["id"])
    child = ok(api, INSTANTIATE, input={"description": "c", "parentDecisionId": spawn})["instantiatePlan"]
    return {
        "plan": plan["id"],
        "root": plan["rootDecision"]["id"],
        "strategy": strategy,
        "spawn": spawn,
        "child": child["id"],
        "child_root": child["rootDecision"]["id"],
    }


def _strategy_corrected(api: httpx.Client, h: dict[str, str]) -> tuple[str, str]:
    """The moment just before the hierarchy's strategy is corrected, and the correction's id."""
    before = datetime.now(UTC).isoformat()
    corrected = ok(api, CORRECT, input={"decisionId": h["strategy"], "mode": "REVERT", "guidance": "another way"})
    return before, corrected["correctDecision"]["correction"]["id"]


def test_impact_as_of_a_past_moment_is_what_correcting_it_then_would_have_invalidated(api: httpx.Client) -> None:
    h = _hierarchy(api)
    before, correction = _strategy_corrected(api, h)

    then = ok(api, IMPACT, id=h["strategy"], at=before)["impact"]
    assert {d["id"] for d in then["decisions"]} == {h["strategy"], h["spawn"], h["child_root"]}
    assert [p["id"] for p in then["plans"]] == [h["child"]]
    assert error_code(api, IMPACT, id=h["strategy"], at=None)["code"] == "CONFLICT"  # superseded now

    root_then = {d["id"] for d in ok(api, IMPACT, id=h["root"], at=before)["impact"]["decisions"]}
    root_now = {d["id"] for d in ok(api, IMPACT, id=h["root"], at=None)["impact"]["decisions"]}
    assert {h["strategy"], h["spawn"], h["child_root"]} <= root_then and correction not in root_then
    assert correction in root_now and not {h["strategy"], h["spawn"], h["child_root"]} & root_now


def test_a_moment_when_the_decision_was_not_current_is_refused(api: httpx.Client) -> None:
    h = _hierarchy(api)
    long_ago = (datetime.now(UTC) - timedelta(days=1)).isoformat()

    early = error_code(api, IMPACT, id=h["strategy"], at=long_ago)
    assert (early["code"], early["field"]) == ("VALIDATION_FAILED", "asOf")
    assert error_code(api, LINEAGE, id=h["child_root"], at=long_ago)["field"] == "asOf"
    ok(api, CORRECT, input={"decisionId": h["strategy"], "mode": "REVERT", "guidance": "another way"})
    late = error_code(api, IMPACT, id=h["strategy"], at=datetime.now(UTC).isoformat())
    assert (late["code"], late["field"]) == ("VALIDATION_FAILED", "asOf")


def test_lineage_as_of_any_moment_after_the_decision_is_its_lineage(api: httpx.Client) -> None:
    h = _hierarchy(api)
    ok(api, CORRECT, input={"decisionId": h["strategy"], "mode": "REVERT", "guidance": "another way"})

    then = ok(api, LINEAGE, id=h["child_root"], at=datetime.now(UTC).isoformat())["lineage"]
    now = ok(api, LINEAGE, id=h["child_root"], at=None)["lineage"]

    assert then == now
    assert {d["id"] for d in then["decisions"]} == {h["spawn"], h["strategy"], h["root"]}
    assert {p["id"] for p in then["plans"]} == {h["plan"], h["child"]}


ADD_DEPENDENCY = "mutation($d: ID!, $on: ID!) { addDependency(decisionId: $d, dependsOnId: $on) { id } }"


def test_lineage_as_of_a_moment_before_a_dependency_was_added_does_not_follow_it(api: httpx.Client, store: Trail) -> None:
    # Was: lineage(asOf) walked every DEPENDS_ON whenever it was added, so a dependency a replay's
    # report or addDependency added later was in the past's lineage, with all it comes from.
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    root = plan["rootDecision"]["id"]
    first = _record(api, plan["id"], "STRATEGY_CHOICE", root, "which store?")
    influence = _record(api, plan["id"], "RESOURCE_SELECTION", first, "which table?")
    second = _record(api, plan["id"], "STRATEGY_CHOICE", root, "which queue?")
    before = datetime.now(UTC).isoformat()
    ok(api, ADD_DEPENDENCY, d=second, on=influence)

    then = ok(api, LINEAGE, id=second, at=before)["lineage"]
    now = ok(api, LINEAGE, id=second, at=None)["lineage"]
    assert {d["id"] for d in then["decisions"]} == {root}
    assert {d["id"] for d in now["decisions"]} == {root, first, influence}

    # The same walk for a caller some plans are hidden from (decision/lineage_seen): an actor
    # sees the plans it instantiated, and the service's own caller instantiated these.
    actor = Principal(LOCAL.name, Role.ACTOR)
    assert actor.limited
    moment = datetime.fromisoformat(before)
    assert reading.lineage(store, second, actor, as_of=moment) == ([root], [plan["id"]])
    assert set(reading.lineage(store, second, actor)[0]) == {root, first, influence}


PATHS = """
query($id: ID!) { impact(decisionId: $id) { paths { decisionId steps { relationship nodeId } } } }"""
CORRECT_PATHS = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { invalidated { id } paths { decisionId steps { relationship nodeId } } }
}"""


def _steps(paths: list[dict[str, object]]) -> dict[str, list[tuple[object, object]]]:
    return {
        str(p["decisionId"]): [(s["relationship"], s["nodeId"]) for s in p["steps"]]  # type: ignore[attr-defined, index]
        for p in paths
    }


def test_impact_and_correction_say_why_each_decision_is_invalidated(api: httpx.Client) -> None:
    h = _hierarchy(api)
    dependent = str(
        ok(
            api,
            RECORD,
            input={
                "planId": h["child"],
                "decisionType": "STRATEGY_CHOICE",
                "question": "Which quota store?",
                "chosenOption": "redis",
                "rationale": "r",
                "parentDecisionId": h["child_root"],
                "dependsOn": [h["strategy"]],
                "contextSnapshot": snapshot("dependent"),
            },
        )["recordDecision"]["decision"]["id"]
    )
    expected = {
        h["spawn"]: [("PARENT", h["spawn"])],
        h["child_root"]: [("PARENT", h["spawn"]), ("SPAWNED_BY", h["child"]), ("IN_PLAN", h["child_root"])],
        dependent: [("DEPENDS_ON", dependent)],  # the shortest way: it depends on the strategy itself
    }

    assert _steps(ok(api, PATHS, id=h["strategy"])["impact"]["paths"]) == expected
    corrected = ok(api, CORRECT_PATHS, input={"decisionId": h["strategy"], "mode": "REVERT", "guidance": "g"})["correctDecision"]
    assert _steps(corrected["paths"]) == expected


def _exported(api: httpx.Client, path: str, **params: str) -> dict[str, dict[str, object]]:
    answer = api.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return {str(n["id"]): n for n in answer.json()["nodes"]}


def test_exports_as_of_a_past_moment_draw_the_graph_as_it_stood_then(api: httpx.Client) -> None:
    h = _hierarchy(api)
    before, correction = _strategy_corrected(api, h)
    hierarchy = f"/export/plans/{h['plan']}.json"

    now = _exported(api, hierarchy, scope="hierarchy")
    then = _exported(api, hierarchy, scope="hierarchy", asOf=before)

    assert (now[h["strategy"]]["decision_status"], now[h["child"]]["plan_status"]) == ("superseded", "invalidated")
    assert (then[h["strategy"]]["decision_status"], then[h["child"]]["plan_status"]) == ("current", "active")
    assert "superseded_at" not in then[h["spawn"]] and "superseded_at" in now[h["spawn"]]
    assert correction in now and correction not in then
    assert set(then) < set(now)
    impact_then = _exported(api, f"/export/decisions/{h['strategy']}/impact.json", asOf=before)
    assert {h["strategy"], h["spawn"], h["child_root"], h["child"]} <= set(impact_then)
    assert all(
        n.get("decision_status", n.get("plan_status")) in ("current", "active")
        for n in impact_then.values()
        if n.get("kind") != "CorrectionAttempt"
    )


def test_an_export_as_of_an_unreadable_or_too_early_moment_is_refused(api: httpx.Client) -> None:
    h = _hierarchy(api)
    path = f"/export/plans/{h['plan']}.json"

    for moment, says in (("yesterday", "ISO 8601"), ("2026-12-01T09:30:00", "UTC offset"), ("2001-01-01T00:00:00Z", "after")):
        answer = api.get(path, params={"asOf": moment})
        assert answer.status_code == 400, answer.text
        error = answer.json()["errors"][0]
        assert (error["extensions"]["code"], error["extensions"]["field"]) == ("VALIDATION_FAILED", "asOf")
        assert says in error["message"]


def test_an_export_of_decisions_only_over_http_holds_the_decisions_alone(api: httpx.Client) -> None:
    h = _hierarchy(api)
    path = f"/export/plans/{h['plan']}.json"

    whole = _exported(api, path, scope="hierarchy")
    alone = _exported(api, path, scope="hierarchy", decisionsOnly="true")
    refused = api.get(path, params={"decisionsOnly": "yes"})

    assert {n["kind"] for n in whole.values()} >= {"Decision", "Plan"}
    assert {n["kind"] for n in alone.values()} == {"Decision"}
    assert set(alone) == {i for i, n in whole.items() if n["kind"] == "Decision"}
    assert refused.status_code == 400 and refused.json()["errors"][0]["extensions"]["field"] == "decisionsOnly"


DECISION_FIELDS = "id status supersededById supersededAt supersededBy { id }"
AS_IT_STOOD = f"""
query($plan: ID!, $strategy: ID!, $spawn: ID!, $at: DateTime) {{
  plan(id: $plan) {{ tree(asOf: $at) {{ decision {{ {DECISION_FIELDS} }} }} }}
  lineage(decisionId: $spawn, asOf: $at) {{ decisions {{ {DECISION_FIELDS} }} }}
  impact(decisionId: $strategy, asOf: $at) {{ decisions {{ {DECISION_FIELDS} }} }}
  now: decision(id: $strategy) {{ {DECISION_FIELDS} }}
}}"""


def test_reads_as_of_a_moment_before_a_correction_show_each_decision_as_it_stood_then(api: httpx.Client) -> None:
    # Was: the right decisions, but each read SUPERSEDED with supersededBy the correction made
    # after the moment asked about. The same request's current read is as it stands now.
    h = _hierarchy(api)
    before, correction = _strategy_corrected(api, h)

    read = ok(api, AS_IT_STOOD, plan=h["plan"], strategy=h["strategy"], spawn=h["spawn"], at=before)
    then = [
        *[entry["decision"] for entry in read["plan"]["tree"]],
        *read["lineage"]["decisions"],
        *read["impact"]["decisions"],
    ]

    as_it_stood = {"status": "CURRENT", "supersededById": None, "supersededAt": None, "supersededBy": None}
    assert {entry["decision"]["id"] for entry in read["plan"]["tree"]} == {h["root"], h["strategy"], h["spawn"]}
    assert {h["root"], h["strategy"]} <= {d["id"] for d in read["lineage"]["decisions"]}  # where the spawn came from
    assert [{k: d[k] for k in as_it_stood} for d in then] == [as_it_stood] * len(then)
    assert (read["now"]["status"], read["now"]["supersededBy"]) == ("SUPERSEDED", {"id": correction})


PLAN_AS_OF = """
query($plan: ID!, $child: ID!, $strategy: ID!, $at: DateTime) {
  plan(id: $plan, asOf: $at) {
    phase
    phaseHistory { toPhase }
    rootDecision { id status }
    decisions(filter: {status: CURRENT}) { totalCount nodes { id status } }
    childPlans { id invalidatedAt phase }
  }
  child: plan(id: $child, asOf: $at) { invalidatedAt spawnedBy { id status } }
  strategy: decision(id: $strategy, asOf: $at) {
    status supersededBy { id }
    children { id status }
    dependents { id }
    corrections { attemptId }
    plan { phase }
  }
}"""


def test_a_plan_and_a_decision_read_as_of_a_moment_answer_every_field_as_of_then(api: httpx.Client) -> None:
    # Was: plan(id) and decision(id) had no asOf; reached from a past moment (a tree then), a
    # decision's plan read its phase today, its children and dependents included later ones.
    h = _hierarchy(api)  # the plan is in Execute, its child spawned
    later_child = _record(api, h["plan"], "IMPLEMENTATION_CHOICE", h["strategy"], "which cache, recorded later?")
    before, correction = _strategy_corrected(api, h)  # reverts the plan to Strategize, invalidates the child

    then = ok(api, PLAN_AS_OF, plan=h["plan"], child=h["child"], strategy=h["strategy"], at=before)
    now = ok(api, PLAN_AS_OF, plan=h["plan"], child=h["child"], strategy=h["strategy"], at=None)

    assert (then["plan"]["phase"], now["plan"]["phase"]) == ("EXECUTE", "STRATEGIZE")
    assert [c["toPhase"] for c in then["plan"]["phaseHistory"]] == ["EXECUTE"]
    assert then["plan"]["childPlans"] == [{"id": h["child"], "invalidatedAt": None, "phase": "STRATEGIZE"}]
    assert now["plan"]["childPlans"][0]["invalidatedAt"] is not None
    assert then["child"] == {"invalidatedAt": None, "spawnedBy": {"id": h["spawn"], "status": "CURRENT"}}
    current_then = {d["id"] for d in then["plan"]["decisions"]["nodes"]}
    assert current_then == {h["root"], h["strategy"], h["spawn"], later_child}
    assert then["plan"]["decisions"]["totalCount"] == 4 and all(
        d["status"] == "CURRENT" for d in then["plan"]["decisions"]["nodes"]
    )
    assert correction in {d["id"] for d in now["plan"]["decisions"]["nodes"]} and h["strategy"] not in {
        d["id"] for d in now["plan"]["decisions"]["nodes"]
    }
    assert then["strategy"]["status"] == "CURRENT" and then["strategy"]["supersededBy"] is None
    assert then["strategy"]["plan"] == {"phase": "EXECUTE"} and now["strategy"]["plan"] == {"phase": "STRATEGIZE"}
    assert then["strategy"]["corrections"] == [] and len(now["strategy"]["corrections"]) == 1
    assert {c["id"] for c in then["strategy"]["children"]} == {h["spawn"], later_child}


def test_what_was_recorded_after_the_moment_is_not_there_as_of_it(api: httpx.Client) -> None:
    h = _hierarchy(api)
    moment = datetime.now(UTC).isoformat()
    later = _record(api, h["plan"], "IMPLEMENTATION_CHOICE", h["strategy"], "which cache, recorded later?")
    query = "query($id: ID!, $d: ID!, $at: DateTime) { plan(id: $id, asOf: $at) { id } decision(id: $d, asOf: $at) { id children { id } } strategy: decision(id: $d) { children { id } } }"

    read = ok(api, query, id=h["plan"], d=later, at=moment)
    assert read["plan"] == {"id": h["plan"]} and read["decision"] is None
    strategy_then = ok(api, query, id=h["plan"], d=h["strategy"], at=moment)
    assert {c["id"] for c in strategy_then["decision"]["children"]} == {h["spawn"]}
    assert {c["id"] for c in strategy_then["strategy"]["children"]} == {h["spawn"], later}
    too_early = ok(api, query, id=h["plan"], d=h["strategy"], at="2001-01-01T00:00:00Z")
    assert too_early["plan"] is None and too_early["decision"] is None


def test_a_field_the_store_does_not_date_is_refused_as_of_a_moment(api: httpx.Client) -> None:
    h = _hierarchy(api)
    moment = datetime.now(UTC).isoformat()
    for field, selection in (("run", "run { id }"), ("analytics", "analytics { decisions { total } }")):
        error = error_code(
            api, f"query($id: ID!, $at: DateTime) {{ plan(id: $id, asOf: $at) {{ {selection} }} }}", id=h["plan"], at=moment
        )
        assert (error["code"], error["field"]) == ("VALIDATION_FAILED", field)
    assert ok(api, "query($id: ID!) { plan(id: $id) { run { id } } }", id=h["plan"])["plan"]["run"] is None
