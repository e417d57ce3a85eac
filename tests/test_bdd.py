"""The specification's compliance scenarios as Gherkin features, run over HTTP against the suite's Neo4j.

``features/correction_scenarios.feature`` holds ADR-007's six correction scenarios and
``features/recording_completeness.feature`` ADR-033's recording-completeness scenarios, written for
a product owner to read. The ADRs name Behave; pytest-bdd runs the same Gherkin inside this suite, so
the scenarios share its one embedded Neo4j, its served API and its per-test wipe, and run in
``make test`` with everything else.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.services import Trail, analysis
from decisiontrail.access import LOCAL
from test_api import error_code, ok, snapshot

scenarios("features/correction_scenarios.feature", "features/recording_completeness.feature")

SET = """
mutation($scope: InvariantScope!, $project: String, $invariants: [InvariantInput!]!) {
  setInvariants(scope: $scope, project: $project, invariants: $invariants) { scope }
}"""
INSTANTIATE = """
mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"""
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } review { id } } }"
PHASE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id phase } }"
PHASE_WHY = """
mutation($id: ID!, $phase: Phase!, $reason: String!) { advancePhase(planId: $id, phase: $phase, reason: $reason) { id phase } }"""
CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) {
    correction { id } attempt { attemptId } invalidated { id } invalidatedPlans { id } replayFrontier { threadId }
  }
}"""
REPLAY = """
mutation($input: RecordReplayInput!) { recordReplay(input: $input) { attemptId replayOutcome replayedDecisionIds } }"""
ADD = "mutation($input: AddInvariantInput!) { addInvariant(input: $input) { id } }"
REMOVE = """
mutation($plan: ID!, $name: String!, $reason: String!) {
  removeInvariant(planId: $plan, name: $name, reason: $reason) { correction { id } invalidated { id } }
}"""
PLAN = """
query($id: ID!) {
  plan(id: $id) {
    id description phase invalidatedAt invariants { name statement } phaseHistory { fromPhase toPhase }
    tree { depth decision { id decisionType rationale } }
    decisions(first: 100) {
      nodes { id decisionType chosenOption alternativesConsidered status parent { id } checkpointGroup { groupId } }
    }
  }
}"""
STRANDED = """
query { reviews(status: PENDING, first: 100) { nodes { id planId parent { status } } } }"""


@pytest.fixture
def world() -> dict[str, Any]:
    """What the scenario's steps have made so far: ids by name."""
    return {}


def _plan(api: httpx.Client, plan_id: str) -> dict[str, Any]:
    found: dict[str, Any] = ok(api, PLAN, id=plan_id)["plan"]
    return found


def _current(plan: dict[str, Any], decision_type: str) -> list[dict[str, Any]]:
    return [d for d in plan["decisions"]["nodes"] if d["decisionType"] == decision_type and d["status"] == "CURRENT"]


def _record(
    api: httpx.Client, plan_id: str, decision_type: str, chosen: str, parent: str | None = None, confidence: float = 0.99
) -> str:
    recorded = _propose(api, plan_id, decision_type, chosen, parent, confidence)
    assert recorded["decision"] is not None, recorded
    return str(recorded["decision"]["id"])


def _propose(
    api: httpx.Client, plan_id: str, decision_type: str, chosen: str, parent: str | None, confidence: float
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "planId": plan_id,
        "decisionType": decision_type,
        "question": f"Which {decision_type.replace('_', ' ')}?",
        "chosenOption": chosen,
        "rationale": "as the scenario says",
        "confidenceScore": confidence,
        "contextSnapshot": snapshot(f"{plan_id} {decision_type} {chosen}"),
    }
    if parent is not None:
        fields["parentDecisionId"] = parent
    recorded: dict[str, Any] = ok(api, RECORD, input=fields)["recordDecision"]
    return recorded


# -- given -----------------------------------------------------------------------------------


@given(parsers.parse('the project "{project}" requires "{name}": "{statement}"'))
def project_invariant(api: httpx.Client, project: str, name: str, statement: str) -> None:
    ok(api, SET, scope="PROJECT", project=project, invariants=[{"name": name, "statement": statement}])


@given(parsers.parse('the global invariants require "{name}": "{statement}"'))
def global_invariant(api: httpx.Client, name: str, statement: str) -> None:
    ok(api, SET, scope="GLOBAL", invariants=[{"name": name, "statement": statement}])


@given(parsers.parse('a plan "{description}" in project "{project}"'))
def a_plan(api: httpx.Client, world: dict[str, Any], description: str, project: str) -> None:
    plan = ok(api, INSTANTIATE, input={"description": description, "project": project})["instantiatePlan"]
    world["plan"], world["root"] = plan["id"], plan["rootDecision"]["id"]


@given(parsers.parse('its strategy "{chosen}"'))
def its_strategy(api: httpx.Client, world: dict[str, Any], chosen: str) -> None:
    world["strategy"] = _record(api, world["plan"], "STRATEGY_CHOICE", chosen, world["root"])


@given(
    parsers.parse(
        'a child plan "{description}" spawned by that strategy once the plan executes, with its own strategy "{chosen}"'
    )
)
def a_child_plan(api: httpx.Client, world: dict[str, Any], description: str, chosen: str) -> None:
    world["spawn"] = _record(api, world["plan"], "SUBPLAN_SPAWN", f"Spawn: {description}", world["strategy"])
    moves_to_execute(api, world)  # ADR-007's timing: the spawn is decided in Strategize, the child runs in Execute
    gated = {"editCode": 0.95, "executeCommand": 0.95}  # a person decides below 95% confidence
    child = ok(
        api, INSTANTIATE, input={"description": description, "parentDecisionId": world["spawn"], "automationProfile": gated}
    )["instantiatePlan"]
    world["child"], world["child_root"] = child["id"], child["rootDecision"]["id"]
    world["child_strategy"] = _record(api, world["child"], "STRATEGY_CHOICE", chosen, world["child_root"])


@given("a review waits on a resource choice under the child plan's strategy")
def a_waiting_review(api: httpx.Client, world: dict[str, Any]) -> None:
    held = _propose(api, world["child"], "RESOURCE_SELECTION", "The quotas table", world["child_strategy"], 0.5)
    assert held["review"] is not None, held
    world["review"] = held["review"]["id"]


# -- when ------------------------------------------------------------------------------------


def _correct(api: httpx.Client, world: dict[str, Any], decision_id: str, guidance: str) -> None:
    world["correction"] = ok(api, CORRECT, input={"decisionId": decision_id, "mode": "REVERT", "guidance": guidance})[
        "correctDecision"
    ]


@when(parsers.parse('the reviewer corrects the plan\'s prompt_definition to "{guidance}"'))
def correct_prompt(api: httpx.Client, world: dict[str, Any], guidance: str) -> None:
    _correct(api, world, world["root"], guidance)


@when(parsers.parse('the reviewer corrects the plan\'s strategy to "{guidance}"'))
def correct_strategy(api: httpx.Client, world: dict[str, Any], guidance: str) -> None:
    _correct(api, world, world["strategy"], guidance)


@when(parsers.parse('the reviewer corrects the child plan\'s prompt_definition to "{guidance}"'))
def correct_child_prompt(api: httpx.Client, world: dict[str, Any], guidance: str) -> None:
    _correct(api, world, world["child_root"], guidance)


@when(parsers.parse('the reviewer corrects the plan\'s spawn to "{guidance}"'))
def correct_spawn(api: httpx.Client, world: dict[str, Any], guidance: str) -> None:
    _correct(api, world, world["spawn"], guidance)


@when("the strategy actor replays it as a subplan_parallel_spawn and reports the replay")
def replay_parallel(api: httpx.Client, world: dict[str, Any]) -> None:
    world["parallel"] = _record(api, world["plan"], "SUBPLAN_PARALLEL_SPAWN", "Both child plans at once", world["strategy"])
    attempt = world["correction"]["attempt"]["attemptId"]
    world["replay"] = ok(api, REPLAY, input={"attemptId": attempt, "outcome": "REPLAYED", "decisionIds": [world["parallel"]]})[
        "recordReplay"
    ]


@when(parsers.parse('the reviewer removes the invariant "{name}" from the plan because "{reason}"'))
def remove_invariant(api: httpx.Client, world: dict[str, Any], name: str, reason: str) -> None:
    world["removed"] = ok(api, REMOVE, plan=world["plan"], name=name, reason=reason)["removeInvariant"]


@when(parsers.parse('the reviewer moves the plan back to Strategize because "{reason}"'))
def revert_to_strategize(api: httpx.Client, world: dict[str, Any], reason: str) -> None:
    reverted = ok(api, PHASE_WHY, id=world["plan"], phase="STRATEGIZE", reason=reason)["advancePhase"]
    assert reverted["phase"] == "STRATEGIZE"


@when(parsers.parse('the reviewer adds the invariant "{name}": "{statement}" to the plan because "{reason}"'))
def add_invariant(api: httpx.Client, world: dict[str, Any], name: str, statement: str, reason: str) -> None:
    world["added"] = ok(api, ADD, input={"planId": world["plan"], "name": name, "statement": statement, "reason": reason})[
        "addInvariant"
    ]["id"]


@when(parsers.parse('an actor instantiates a plan "{description}" declaring "{name}": "{statement}"'))
def instantiate_declaring(api: httpx.Client, world: dict[str, Any], description: str, name: str, statement: str) -> None:
    invariants = [{"name": name, "statement": statement, "scope": "PLAN"}]
    plan = ok(api, INSTANTIATE, input={"description": description, "invariants": invariants})["instantiatePlan"]
    world["plan"], world["root"] = plan["id"], plan["rootDecision"]["id"]


@when(parsers.parse('an actor instantiates a plan "{description}" declaring no invariants'))
def instantiate_plain(api: httpx.Client, world: dict[str, Any], description: str) -> None:
    plan = ok(api, INSTANTIATE, input={"description": description})["instantiatePlan"]
    world["plan"], world["root"] = plan["id"], plan["rootDecision"]["id"]


@when(parsers.parse('the actor records a strategy_choice "{chosen}"'))
def record_strategy(api: httpx.Client, world: dict[str, Any], chosen: str) -> None:
    world["strategy"] = _record(api, world["plan"], "STRATEGY_CHOICE", chosen, world["root"])


@when(parsers.parse('the actor records a tool_invocation "{chosen}"'))
def record_tool(api: httpx.Client, world: dict[str, Any], chosen: str) -> None:
    world["tool"] = _record(api, world["plan"], "TOOL_INVOCATION", chosen)  # its parent inferred


@when("the plan moves to Execute")
@then("the plan moves to Execute")
def moves_to_execute(api: httpx.Client, world: dict[str, Any]) -> None:
    assert ok(api, PHASE, id=world["plan"], phase="EXECUTE")["advancePhase"]["phase"] == "EXECUTE"


# -- then ------------------------------------------------------------------------------------


@then(parsers.parse('the plan\'s description is "{description}"'))
def plan_description(api: httpx.Client, world: dict[str, Any], description: str) -> None:
    assert _plan(api, world["plan"])["description"] == description


@then(parsers.parse('the child plan\'s description is "{description}"'))
def child_description(api: httpx.Client, world: dict[str, Any], description: str) -> None:
    assert _plan(api, world["child"])["description"] == description


@then(parsers.parse('the plan\'s current tree is its new prompt_definition, with the invariant "{name}" enforced again under it'))
def tree_is_new_root(api: httpx.Client, world: dict[str, Any], name: str) -> None:
    # The correction returned the plan to Strategize: its reconciliation ran again (ADR-033).
    tree = _plan(api, world["plan"])["tree"]
    assert [(e["depth"], e["decision"]["decisionType"]) for e in tree] == [(0, "PROMPT_DEFINITION"), (1, "INVARIANT_ENFORCED")]
    assert tree[0]["decision"]["id"] == world["correction"]["correction"]["id"]
    assert tree[1]["decision"]["rationale"].startswith(f"{name}:")


@then("the child plan is invalidated")
def child_invalidated(api: httpx.Client, world: dict[str, Any]) -> None:
    child = _plan(api, world["child"])
    assert child["invalidatedAt"] is not None
    assert all(d["status"] == "SUPERSEDED" for d in child["decisions"]["nodes"])


@then("the strategy, the spawn and the child plan are invalidated, and nothing else")
def strategy_downstream(api: httpx.Client, world: dict[str, Any]) -> None:
    correction = world["correction"]
    child_decisions = {d["id"] for d in _plan(api, world["child"])["decisions"]["nodes"]}
    assert {d["id"] for d in correction["invalidated"]} == {world["strategy"], world["spawn"], *child_decisions}
    assert [p["id"] for p in correction["invalidatedPlans"]] == [world["child"]]
    plan = _plan(api, world["plan"])
    still = {d["id"] for d in plan["decisions"]["nodes"] if d["status"] == "CURRENT"}
    assert world["root"] in still and len(_current(plan, "INVARIANT_ENFORCED")) == 1


@then("the plan is back in Strategize")
def plan_in_strategize(api: httpx.Client, world: dict[str, Any]) -> None:
    plan = _plan(api, world["plan"])
    assert plan["phase"] == "STRATEGIZE"
    assert [(c["fromPhase"], c["toPhase"]) for c in plan["phaseHistory"]][-2:] == [
        ("STRATEGIZE", "EXECUTE"),
        ("EXECUTE", "STRATEGIZE"),
    ]


@then("the parent plan's decisions are all still current")
def parent_untouched(api: httpx.Client, world: dict[str, Any]) -> None:
    assert all(d["status"] == "CURRENT" for d in _plan(api, world["plan"])["decisions"]["nodes"])
    assert {d["id"] for d in world["correction"]["invalidated"]} == {world["child_root"], world["child_strategy"]} | {
        d["id"] for d in _plan(api, world["child"])["decisions"]["nodes"] if d["status"] == "SUPERSEDED"
    }


@then(parsers.parse('the plan no longer declares "{name}" and its invariant_enforced is superseded'))
def invariant_removed(api: httpx.Client, world: dict[str, Any], name: str) -> None:
    plan = _plan(api, world["plan"])
    assert name not in {i["name"] for i in plan["invariants"]}
    assert _current(plan, "INVARIANT_ENFORCED") == []
    assert [d["id"] for d in world["removed"]["invalidated"]] != []


@then(parsers.parse('the plan declares "{name}" and an invariant_enforced enforces "{statement}"'))
def invariant_added(api: httpx.Client, world: dict[str, Any], name: str, statement: str) -> None:
    plan = _plan(api, world["plan"])
    assert name in {i["name"] for i in plan["invariants"]}
    assert world["added"] in {d["id"] for d in _current(plan, "INVARIANT_ENFORCED") if d["chosenOption"] == statement}


@then("the correction's attempt reports the replay as REPLAYED")
def replay_reported(world: dict[str, Any]) -> None:
    assert world["replay"]["replayOutcome"] == "REPLAYED"
    assert world["replay"]["replayedDecisionIds"] == [world["parallel"]]


@then("once the plan executes again, a new child plan can be spawned by the parallel spawn")
def new_child(api: httpx.Client, world: dict[str, Any]) -> None:
    moves_to_execute(api, world)
    child = ok(api, INSTANTIATE, input={"description": "Per-client quotas, in parallel", "parentDecisionId": world["parallel"]})[
        "instantiatePlan"
    ]
    assert _plan(api, child["id"])["invalidatedAt"] is None


@then("the plan's tree reads, no review is stranded and every check passes")
def settled(api: httpx.Client, store: Trail, world: dict[str, Any]) -> None:
    for plan_id in (world["plan"], world.get("child")):
        if plan_id is not None:
            _plan(api, plan_id)  # the tree and every decision read, or ok() fails on the errors
    stranded = [
        r
        for r in ok(api, STRANDED)["reviews"]["nodes"]
        if r["parent"]["status"] != "CURRENT" or _plan(api, r["planId"])["invalidatedAt"] is not None
    ]
    assert stranded == []
    report = analysis.check(store, LoadScope.ALL, progress=False, principal=LOCAL)
    assert report.ok, report.render()


@then("the plan has exactly one current prompt_definition")
def one_root(api: httpx.Client, world: dict[str, Any]) -> None:
    assert [d["id"] for d in _current(_plan(api, world["plan"]), "PROMPT_DEFINITION")] == [world["root"]]


@then(parsers.parse('an invariant_enforced enforces "{statement}" over "{overridden}"'))
def enforced_over(api: httpx.Client, world: dict[str, Any], statement: str, overridden: str) -> None:
    enforced = _current(_plan(api, world["plan"]), "INVARIANT_ENFORCED")
    assert [(d["chosenOption"], d["alternativesConsidered"]) for d in enforced] == [(statement, [overridden])]
    assert all(d["parent"] == {"id": world["root"]} for d in enforced)


@then("the plan has at least one strategy_choice")
def has_strategy(api: httpx.Client, world: dict[str, Any]) -> None:
    assert len(_current(_plan(api, world["plan"]), "STRATEGY_CHOICE")) >= 1


@then("moving the plan to Execute is refused with PHASE_VIOLATION")
def cannot_leave(api: httpx.Client, world: dict[str, Any]) -> None:
    assert error_code(api, PHASE, id=world["plan"], phase="EXECUTE")["code"] == "PHASE_VIOLATION"
    assert _plan(api, world["plan"])["phase"] == "STRATEGIZE"


@then("the tool_invocation hangs under the strategy and has a checkpoint group")
def tool_under_strategy(api: httpx.Client, world: dict[str, Any]) -> None:
    [tool] = _current(_plan(api, world["plan"]), "TOOL_INVOCATION")
    assert tool["id"] == world["tool"] and tool["parent"] == {"id": world["strategy"]}
    assert tool["checkpointGroup"] is not None


@then("recording a tool_invocation directly under the prompt_definition is refused with PHASE_VIOLATION")
def not_under_root(api: httpx.Client, world: dict[str, Any]) -> None:
    refused = error_code(
        api,
        RECORD,
        input={
            "planId": world["plan"],
            "decisionType": "TOOL_INVOCATION",
            "question": "Which tool, at the root?",
            "chosenOption": "make",
            "rationale": "r",
            "parentDecisionId": world["root"],
            "contextSnapshot": snapshot("under the root"),
        },
    )
    assert (refused["code"], refused["rule"]) == ("PHASE_VIOLATION", "execute_under_strategize")
