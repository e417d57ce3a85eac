"""docs/graphql.md's examples, run against a served API on a hierarchy made here: a plan in project
"billing" whose strategy spawned a child plan, each example asserting what the page says of its answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile, DecisionType, Phase
from decisiontrail.domain.recording import Review
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services.recording import record_decision
import docs_examples
from docs_examples import Cli, example, run_graphql, with_ids
from factories import actor_snapshot, tool_input
from factories import decision as a_decision
from serving import served, subscribed

PAGE = "docs/graphql.md"

cli = docs_examples.cli  # the fixture: the command line on the test's database


@dataclass(frozen=True)
class Hierarchy:
    plan: str
    root: str
    strategy: str
    spawn: str
    child: str
    child_root: str
    before_spawn: datetime
    """A moment after the strategy was recorded and before the spawn was."""


def _hierarchy(store: Trail) -> Hierarchy:
    """A plan of project billing in Execute: root, strategy, a subplan_spawn under it, its child plan."""
    plan, root = instantiate_plan(store, "Add rate limiting", {"service": "billing"}, project="billing", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    before_spawn = datetime.now(UTC)
    spawn = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.SUBPLAN_SPAWN, strategy.decision_id), principal=LOCAL
    )
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    child, child_root = instantiate_plan(store, "quotas", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    return Hierarchy(
        plan.plan_id,
        root.decision_id,
        strategy.decision_id,
        spawn.decision_id,
        child.plan_id,
        child_root.decision_id,
        before_spawn,
    )


def test_the_resume_subscription_replays_a_plans_events_and_resumes_after_a_cursor(base_url: str, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    document = example(PAGE, "subscription Resume($plan: ID!, $after: String) {")

    # `after: "0"` replays the plan's events from its start.
    with subscribed(base_url, document, {"plan": plan.plan_id, "after": "0"}) as ws:
        first = json.loads(ws.recv(timeout=30))
    event = first["payload"]["data"]["decisionEvents"]
    assert first["type"] == "next" and (event["kind"], event["decisionId"]) == ("RECORDED", root.decision_id)
    assert event["cursor"] and event["at"]

    guidance = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    # A subscriber passing the last cursor it saw first receives exactly what was committed after it.
    with subscribed(base_url, document, {"plan": plan.plan_id, "after": event["cursor"]}) as ws:
        resumed = json.loads(ws.recv(timeout=30))["payload"]["data"]["decisionEvents"]
    assert (resumed["kind"], resumed["decisionId"]) == ("RECORDED", guidance.decision_id)
    assert resumed["cursor"] != event["cursor"]


def test_the_curl_example_is_a_request_error_answered_400_as_shown(base_url: str, cli: Cli) -> None:
    block = example(PAGE, "curl -si http://127.0.0.1:8000/graphql -H 'content-type: application/json' \\")
    status, content_type, body = [line.removeprefix("# ") for line in block.splitlines() if line.startswith("# ")]

    said = cli.shell(block.replace("http://127.0.0.1:8000", base_url))

    assert said.code == 0, said.err
    head, _, answer = said.out.replace("\r\n", "\n").partition("\n\n")
    assert head.splitlines()[0] == status
    assert content_type in head.splitlines()[1:]
    assert answer.startswith(body.removesuffix("...}]}")), answer
    assert "data" not in json.loads(answer)


@pytest.fixture
def admin_url(store: Trail, graph: Graph, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The service with one admin token, and that token."""
    path = tmp_path / "tokens.json"
    token = issue_token(path, "ada", Role.ADMIN)
    with served(create_app(graph=graph, tokens=TokenRegistry.load(path))) as url:
        yield url, token


def test_the_python_client_example_instantiates_previews_corrects_and_reads_lineage(
    admin_url: tuple[str, str], store: Trail
) -> None:
    url, token = admin_url
    built = _hierarchy(store)
    code = example(PAGE, "from decisiontrail.client import DecisionTrailClient")
    assert '"http://127.0.0.1:8000", token="dt_..."' in code
    code = code.replace('"http://127.0.0.1:8000", token="dt_..."', f'"{url}", token="{token}"')
    names: dict[str, object] = {"decision_id": built.strategy}

    exec(compile(code, PAGE, "exec"), names)

    plan, impact, result, lineage = (names[n] for n in ("plan", "impact", "result", "lineage"))
    assert isinstance(plan, dict) and isinstance(impact, dict) and isinstance(result, dict) and isinstance(lineage, dict)
    assert plan["phase"] == "STRATEGIZE" and reading.get_plan(store, plan["id"], LOCAL).description == "Add rate limiting"
    assert reading.get_plan(store, plan["id"], LOCAL).automation_profile == AutomationProfile(edit_code=0.8)
    assert [d["id"] for d in impact["decisions"]][0] == built.strategy
    assert {d["id"] for d in impact["decisions"]} == {built.strategy, built.spawn, built.child_root}
    assert reading.get_decision(store, built.strategy, LOCAL).superseded_by is not None
    assert built.root in {d["id"] for d in lineage["decisions"]}


def test_the_record_decision_example_records_under_the_root_with_its_context(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    document = with_ids(example(PAGE, "mutation {\n  recordDecision(input: {"), planId=plan.plan_id)

    recorded = run_graphql(api, document)["recordDecision"]

    assert recorded["review"] is None and recorded["decision"]["parent"] == {"id": root.decision_id}
    assert recorded["decision"]["context"] == "user: Add rate limiting to the public billing API"
    stored = reading.get_decision(store, recorded["decision"]["id"], principal=LOCAL)
    assert stored.chosen_option == "Token bucket in the API gateway"


def test_the_correct_decision_example_invalidates_the_downstream_and_the_child_plan(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(
            PAGE,
            'mutation {\n  correctDecision(input: {decisionId: "01M8...", mode: REVERT, guidance: "Use per-service middleware", '
            'reason: "the gateway is shared"}) {',
        ),
        decisionId=built.strategy,
    )

    corrected = run_graphql(api, document)["correctDecision"]

    assert {d["id"] for d in corrected["invalidated"]} == {built.strategy, built.spawn, built.child_root}
    assert corrected["invalidatedPlans"] == [{"id": built.child}]
    assert reading.get_decision(store, built.strategy, LOCAL).superseded_by == corrected["correction"]["id"]
    assert isinstance(corrected["replayFrontier"], list)


def test_the_guidance_example_records_a_user_intervention_superseding_nothing(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    document = with_ids(
        example(
            PAGE,
            'mutation {\n  addGuidance(input: {planId: "01M8...", parentDecisionId: "01M8...", guidance: "Only the public '
            'endpoints", reason: "scope"}) {',
        ),
        planId=plan.plan_id,
        parentDecisionId=root.decision_id,
    )

    guided = run_graphql(api, document)["addGuidance"]

    assert (guided["decisionType"], guided["chosenOption"]) == ("USER_INTERVENTION", "Only the public endpoints")
    assert reading.get_decision(store, root.decision_id, LOCAL).superseded_by is None
    # "the actor's next decision depends on the guidance"
    after = recording_service.record(
        store,
        a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, depends_on=[guided["id"]]),
        principal=LOCAL,
    )
    assert guided["id"] in reading.get_decision(store, after.decision_id, LOCAL).depends_on


def test_the_lineage_example_walks_up_through_the_spawning_plan(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(
            PAGE,
            'query {\n  lineage(decisionId: "01M8...") { decisions { id decisionType question chosenOption } plans '
            "{ id description } }",
        ),
        decisionId=built.child_root,
    )

    lineage = run_graphql(api, document)["lineage"]

    # Its ancestors: the spawn decision, and up its plan to the root.
    assert {d["id"] for d in lineage["decisions"]} == {built.spawn, built.strategy, built.root}
    assert {(p["id"], p["description"]) for p in lineage["plans"]} == {
        (built.child, "quotas"),
        (built.plan, "Add rate limiting"),
    }


def test_the_tree_example_gives_depths_and_the_hierarchy(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(
            PAGE,
            'query {\n  plan(id: "01M8...") {\n    tree { depth decision { id decisionType chosenOption status parentDecisionId } }',
        ),
        id=built.plan,
    )

    plan = run_graphql(api, document)["plan"]

    assert [(row["depth"], row["decision"]["id"]) for row in plan["tree"]] == [
        (0, built.root),
        (1, built.strategy),
        (2, built.spawn),
    ]
    assert [row["decision"]["parentDecisionId"] for row in plan["tree"]] == [None, built.root, built.strategy]
    assert plan["descendants"] == [{"id": built.child, "description": "quotas", "spawnedBy": {"id": built.spawn}}]


def test_the_preview_example_names_the_decision_first_then_its_downstream(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(
            PAGE,
            'query {\n  impact(decisionId: "01M8...") { decisions { id decisionType } plans { id } countsByType { '
            "decisionType count } }",
        ),
        decisionId=built.strategy,
        id=built.plan,
    )

    answer = run_graphql(api, document)

    impact, plan = answer["impact"], answer["plan"]
    assert impact["decisions"][0]["id"] == built.strategy
    assert {d["id"] for d in impact["decisions"]} == {built.strategy, built.spawn, built.child_root}
    assert impact["plans"] == [{"id": built.child}]
    assert sum(c["count"] for c in impact["countsByType"]) == 3
    assert plan["phase"] == "EXECUTE" and plan["rootDecision"] == {"id": built.root}
    nodes = {n["id"]: n for n in plan["decisions"]["nodes"]}
    assert set(nodes) == {built.root, built.strategy, built.spawn}
    assert nodes[built.root]["children"] == [{"id": built.strategy}]


def test_the_past_impact_example_leaves_out_what_came_later(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    page = example(PAGE, 'query {\n  impact(decisionId: "01M8...", asOf: "2026-11-24T09:00:00Z") {')
    # "last Tuesday" is the test's moment between the strategy and the spawn below it.
    document = with_ids(page.replace("2026-11-24T09:00:00Z", built.before_spawn.isoformat()), decisionId=built.strategy)

    impact = run_graphql(api, document)["impact"]

    assert impact["decisions"] == [{"id": built.strategy, "decisionType": "STRATEGY_CHOICE"}] and impact["plans"] == []
    now = run_graphql(api, with_ids(page.replace(', asOf: "2026-11-24T09:00:00Z"', ""), decisionId=built.strategy))["impact"]
    assert {d["id"] for d in now["decisions"]} == {built.strategy, built.spawn, built.child_root}
    steps = {p["decisionId"]: [s["relationship"] for s in p["steps"]] for p in now["paths"]}
    assert steps[built.spawn] == ["PARENT"]


def test_the_prompt_correction_example_gives_the_plan_its_new_prompt(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(PAGE, 'mutation {\n  correctDecision(input: {decisionId: "01M8...", mode: REVERT, guidance: "limit per client",'),
        decisionId=built.root,
    )

    corrected = run_graphql(api, document)["correctDecision"]

    assert "Add per-client rate limiting" in corrected["correction"]["chosenOption"]
    assert corrected["invalidatedPlans"] == [{"id": built.child}]
    plan = reading.get_plan(store, built.plan, LOCAL)
    assert (plan.description, plan.arguments) == ("Add per-client rate limiting", {"limit": 100, "per": "client"})


def test_the_replay_example_reports_the_replay_of_a_correction(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    result = correct(store, strategy.decision_id, "revert", "Use Redis counters", "three replicas", principal=LOCAL)
    replayed = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, result.correction.decision_id), principal=LOCAL
    )
    document = with_ids(
        example(
            PAGE,
            'mutation {\n  recordReplay(input: {attemptId: "01M8...", outcome: REPLAYED, decisionIds: ["01M8..."], '
            'detail: "1 step re-run"}) {',
        ),
        attemptId=result.attempt.attempt_id,
        decisionIds=replayed.decision_id,
    )

    reported = run_graphql(api, document)["recordReplay"]

    assert reported == {
        "attemptId": result.attempt.attempt_id,
        "attemptNumber": 1,
        "replayOutcome": "REPLAYED",
        "replayedDecisionIds": [replayed.decision_id],
    }
    # "whose decisions then depend on the correction (and the one that stands in ... replaces it)"
    assert result.correction.decision_id in reading.get_decision(store, replayed.decision_id, LOCAL).depends_on


def test_the_attach_then_apply_example_attaches_and_applies(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    advance_phase(store, plan.plan_id, Phase.EXECUTE, "strategy complete", by="test", principal=LOCAL)
    change = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.IMPLEMENTATION_CHOICE, strategy.decision_id), principal=LOCAL
    )
    document = with_ids(example(PAGE, "mutation Attach {"), decisionId=change.decision_id, planId=plan.plan_id)

    attached = run_graphql(api, document, "Attach")["attachArtifacts"]
    applied = run_graphql(api, document, "Apply")["advancePhase"]

    assert attached["id"] == change.decision_id
    assert attached["artifactsProduced"] == [
        {
            "artifactPath": "reports/load-test.html",
            "artifactType": "report",
            "digest": "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
        }
    ]
    assert applied["phase"] == "APPLY"
    assert applied["phaseHistory"][-1] == {"toPhase": "APPLY", "by": "local", "reason": "load test passed"}


def test_the_inbox_example_pages_the_pending_reviews_of_a_project(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(
        store, "Add rate limiting", project="billing", automation_profile=AutomationProfile(edit_code=0.9), principal=LOCAL
    )
    instantiate_plan(store, "elsewhere", project="search", automation_profile=AutomationProfile(edit_code=0.9), principal=LOCAL)
    arguments = tool_input("strategy_choice", question="Which limiter?", confidence_score=0.4)
    held = record_decision(store, arguments, plan_id=plan.plan_id, snapshot=actor_snapshot(), principal=LOCAL)
    assert isinstance(held, Review)

    inbox = run_graphql(api, example(PAGE, 'query {\n  reviews(status: PENDING, project: "billing", first: 20) {'))["reviews"]

    assert inbox["totalCount"] == 1 and inbox["pageInfo"]["hasNextPage"] is False
    (node,) = inbox["nodes"]
    assert (node["id"], node["planId"], node["question"]) == (held.review_id, plan.plan_id, "Which limiter?")
    assert (node["confidenceScore"], node["threshold"], node["parent"]) == (0.4, 0.9, {"id": root.decision_id})


def test_the_analytics_example_counts_the_hierarchy(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    document = with_ids(
        example(PAGE, 'query {\n  plan(id: "01M8...") {\n    analytics(scope: HIERARCHY, top: 5) {'), id=built.plan
    )

    analytics = run_graphql(api, document)["plan"]["analytics"]

    decisions = analytics["decisions"]
    assert (decisions["total"], decisions["superseded"]) == (4, 0)
    assert {(t["decisionType"], t["count"]) for t in decisions["byType"]} == {
        ("PROMPT_DEFINITION", 2),
        ("STRATEGY_CHOICE", 1),
        ("SUBPLAN_SPAWN", 1),
    }
    assert analytics["corrections"]["rate"] == 0 and analytics["corrections"]["mostCorrected"] == []
    # blastRadius is what impact counts, the decision itself included: the root's is the hierarchy.
    top = analytics["mostCritical"][0]
    assert (top["decisionId"], top["decisionType"], top["blastRadius"]) == (built.root, "PROMPT_DEFINITION", 4)


def test_the_invariants_example_sets_gathers_adds_and_removes(api: httpx.Client, store: Trail) -> None:
    document = example(PAGE, "mutation SetGlobal {")

    set_global = run_graphql(api, document, "SetGlobal")["setInvariants"]
    set_project = run_graphql(api, document, "SetProject")["setInvariants"]
    plan = run_graphql(api, document, "Instantiate")["instantiatePlan"]

    assert (set_global["scope"], set_global["updatedBy"]) == ("GLOBAL", "local")
    assert set_global["invariants"] == [
        {"name": "coverage", "statement": "Test coverage stays at or above 80%", "scope": "GLOBAL"}
    ]
    assert (set_project["scope"], set_project["project"]) == ("PROJECT", "billing")
    # The plan declares the global, its project's and its own; its own coverage overrides the global one.
    assert {(i["name"], i["scope"]) for i in plan["invariants"]} >= {("coverage", "PLAN"), ("compatibility", "PROJECT")}
    enforced = {n["chosenOption"]: n for n in plan["decisions"]["nodes"]}
    coverage = next(n for option, n in enforced.items() if "95%" in option)
    assert any("80%" in alternative for alternative in coverage["alternativesConsidered"])
    assert any("backward compatible" in option for option in enforced)

    ids = with_ids(document, planId=plan["id"])
    added = run_graphql(api, ids, "Add")["addInvariant"]
    removed = run_graphql(api, ids, "Remove")["removeInvariant"]

    assert reading.get_decision(store, added["id"], LOCAL).decision_type is DecisionType.INVARIANT_ENFORCED
    assert any(d["decisionType"] == "INVARIANT_ENFORCED" for d in removed["invalidated"])
    declared = {i.name for i in reading.get_plan(store, plan["id"], LOCAL).invariants}
    assert "latency" in declared and "compatibility" not in declared


def test_the_dataset_example_gives_one_example_per_correction(api: httpx.Client, store: Trail) -> None:
    built = _hierarchy(store)
    strategy = reading.get_decision(store, built.strategy, LOCAL)
    result = correct(store, built.strategy, "revert", "Use Redis counters", "three replicas", principal=LOCAL)
    document = with_ids(
        example(PAGE, 'query {\n  plan(id: "01M8...") {\n    correctionExamples(hierarchy: true) {'), id=built.plan
    )

    answer = run_graphql(api, document)

    (one,) = answer["plan"]["correctionExamples"]
    assert (one["input"]["decisionType"], one["input"]["chosenOption"]) == ("STRATEGY_CHOICE", strategy.chosen_option)
    assert one["input"]["contextSnapshot"]["hotContextHash"] == strategy.context_snapshot.hot_context_hash
    assert (one["expectedOutput"]["guidance"], one["expectedOutput"]["reason"]) == ("Use Redis counters", "three replicas")
    assert one["expectedOutput"]["correction"]["decisionId"] == result.correction.decision_id
    assert one["expectedOutput"]["replacement"] is None
    metadata = one["metadata"]
    assert (metadata["attemptId"], metadata["attemptNumber"], metadata["planId"]) == (result.attempt.attempt_id, 1, built.plan)
    assert (metadata["replayOutcome"], metadata["requestedBy"], metadata["invalidatedDecisionCount"]) == ("PENDING", "local", 3)
    (record,) = answer["correctionDataset"]
    assert sorted(record["record"]) == ["expected_output", "input", "metadata"]
    assert record["record"]["metadata"]["attempt_id"] == result.attempt.attempt_id
