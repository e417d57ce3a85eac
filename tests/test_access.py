"""Bearer tokens and roles over real HTTP: each role against every operation, allowed and refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token, token_hash
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.domain import AutomationProfile, DecisionType
from decisiontrail.services.recording import record_decision
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from serving import served
from factories import actor_snapshot, decision, tool_input


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    issued = {role.value: issue_token(path, f"{role.value}-1", role) for role in Role}
    return issued | {
        "other-actor": issue_token(path, "actor-2", Role.ACTOR),
        "alpha-reviewer": issue_token(path, "reviewer-alpha", Role.REVIEWER, project="alpha"),
        "_file": str(path),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


OPERATIONS: dict[str, tuple[str, set[str]]] = {
    # operation: (document, roles allowed)
    "plan": ("query($plan: ID!) { plan(id: $plan) { id } }", {"actor", "reviewer", "analyst", "admin"}),
    "impact": ("query($d: ID!) { impact(decisionId: $d) { countsByType { count } } }", {"actor", "reviewer", "analyst", "admin"}),
    "lineage": ("query($d: ID!) { lineage(decisionId: $d) { plans { id } } }", {"actor", "reviewer", "analyst", "admin"}),
    "instantiatePlan": ('mutation { instantiatePlan(input: {description: "x"}) { id } }', {"actor", "admin"}),
    "runPlan": ('mutation { runPlan(input: {description: "x"}) { id run { status } } }', {"actor", "admin"}),
    "advancePhase": ("mutation($plan: ID!) { advancePhase(planId: $plan, phase: EXECUTE) { id } }", {"actor", "admin"}),
    "addDependency": (
        "mutation($d: ID!, $other: ID!) { addDependency(decisionId: $other, dependsOnId: $d) { id } }",
        {"actor", "admin"},
    ),
    "resolveReview": (
        "mutation($review: ID!) { resolveReview(input: {reviewId: $review, action: APPROVE}) { decision { id } } }",
        {"reviewer", "admin"},
    ),
    "correctDecision": (
        'mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: REVERT, guidance: "g"}) { correction { id } } }',
        {"reviewer", "admin"},
    ),
}


def _fixture_ids(store: Trail) -> dict[str, str]:
    plan, root = instantiate_plan(store, "p", owner="actor-1", principal=LOCAL)  # the actor token's own plan
    d = recording_service.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    other = recording_service.record(
        store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    gated, _ = instantiate_plan(
        store, "gated", automation_profile=AutomationProfile(edit_code=1.0), owner="actor-1", principal=LOCAL
    )
    review = record_decision(
        store, tool_input("strategy_choice"), plan_id=gated.plan_id, snapshot=actor_snapshot(), principal=LOCAL
    )
    return {"plan": plan.plan_id, "d": d.decision_id, "other": other.decision_id, "review": review.review_id}  # type: ignore[union-attr]


@pytest.mark.parametrize("role", [r.value for r in Role])
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_each_role_against_each_operation(
    base_url: str, store: Trail, graph: Graph, tokens: dict[str, str], role: str, operation: str
) -> None:
    ids = _fixture_ids(store)
    document, allowed = OPERATIONS[operation]
    variables = {k: v for k, v in ids.items() if f"${k}" in document}
    before = count_graph(graph)

    body = httpx.post(
        f"{base_url}/graphql",
        json={"query": document, "variables": variables},
        headers={"Authorization": f"Bearer {tokens[role]}"},
        timeout=30,
    ).json()

    if role in allowed:
        assert not body.get("errors"), body
    else:
        assert body["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        assert f"the {role} role may not" in body["errors"][0]["message"]
        assert count_graph(graph) == before  # refused writes nothing


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-real-token", "Basic dXNlcjpwYXNz", "Bearer"])
def test_missing_or_unknown_tokens_are_unauthenticated(base_url: str, store: Trail, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization else {}

    body = httpx.post(f"{base_url}/graphql", json={"query": "{ plans { totalCount } }"}, headers=headers, timeout=30).json()

    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert body["data"] is None


def test_tokens_are_stored_hashed(tokens: dict[str, str]) -> None:
    stored = Path(tokens["_file"]).read_text()

    for role in Role:
        assert tokens[role.value] not in stored
        assert token_hash(tokens[role.value]) in stored
    assert oct(Path(tokens["_file"]).stat().st_mode & 0o777) == "0o600"


def test_serve_refuses_a_public_bind_without_tokens(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from decisiontrail.cli import main

    monkeypatch.delenv("DECISIONTRAIL_TOKENS_FILE", raising=False)

    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert "loopback only" in capsys.readouterr().err


def test_tokens_can_come_from_the_environment(tokens: dict[str, str]) -> None:
    text = Path(tokens["_file"]).read_text()

    from_env = TokenRegistry.from_env({"DECISIONTRAIL_TOKENS": text})
    principal = from_env.authenticate(tokens["reviewer"])

    assert principal is not None and principal.role is Role.REVIEWER
    assert from_env.authenticate("dt_guess") is None
    assert not TokenRegistry.from_env({}).enabled
    with pytest.raises(Exception, match="DECISIONTRAIL_TOKENS"):
        TokenRegistry.from_env({"DECISIONTRAIL_TOKENS": '[{"name": 1}]'})


def test_unexpected_errors_are_masked() -> None:
    from graphql import GraphQLError

    from decisiontrail.schema.errors import should_mask

    assert should_mask(GraphQLError("boom", original_error=RuntimeError("password=secret in MATCH (n)")))
    assert not should_mask(GraphQLError("plan X does not exist", extensions={"code": "NOT_FOUND"}))
    assert not should_mask(GraphQLError("Syntax Error: Expected Name"))


def _as(base_url: str, token: str, document: str, **variables: Any) -> dict[str, Any]:
    body: dict[str, Any] = httpx.post(
        f"{base_url}/graphql",
        json={"query": document, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ).json()
    return body


def test_an_actor_sees_and_writes_only_its_own_plans(base_url: str, store: Trail, graph: Graph, tokens: dict[str, str]) -> None:
    mine, theirs = tokens["actor"], tokens["other-actor"]
    plan = _as(base_url, mine, 'mutation { instantiatePlan(input: {description: "mine"}) { id rootDecision { id } } }')["data"][
        "instantiatePlan"
    ]
    root = plan["rootDecision"]["id"]
    before = count_graph(graph)
    record = """mutation($p: ID!, $deps: [ID!]) { recordDecision(input: {planId: $p, decisionType: STRATEGY_CHOICE,
        question: "q", chosenOption: "o", rationale: "r", dependsOn: $deps,
        contextSnapshot: {hotContextHash: "%s", hotContextRef: "x", actorStateRef: {threadId: "t", checkpointId: "c"}}})
        { decision { id } } }""" % ("a" * 64)
    other_plan = _as(base_url, theirs, 'mutation { instantiatePlan(input: {description: "theirs"}) { id } }')["data"][
        "instantiatePlan"
    ]
    after_other = count_graph(graph)

    seen_by_other = _as(
        base_url,
        theirs,
        "query($p: ID!, $d: ID!) { plan(id: $p) { id } decision(id: $d) { id } plans { totalCount nodes { id } } }",
        p=plan["id"],
        d=root,
    )
    refused = {
        "record": _as(base_url, theirs, record, p=plan["id"]),
        "depend": _as(base_url, theirs, record, p=other_plan["id"], deps=[root]),
        "impact": _as(base_url, theirs, "query($d: ID!) { impact(decisionId: $d) { plans { id } } }", d=root),
        "lineage": _as(base_url, theirs, "query($d: ID!) { lineage(decisionId: $d) { plans { id } } }", d=root),
        "phase": _as(base_url, theirs, "mutation($p: ID!) { advancePhase(planId: $p, phase: EXECUTE) { id } }", p=plan["id"]),
    }
    seen_by_owner = _as(base_url, mine, "query($p: ID!) { plan(id: $p) { id } plans { nodes { id } } }", p=plan["id"])
    seen_by_reviewer = _as(base_url, tokens["reviewer"], "query { plans { totalCount } }")

    assert seen_by_other["data"] == {
        "plan": None,
        "decision": None,
        "plans": {"totalCount": 1, "nodes": [{"id": other_plan["id"]}]},
    }
    for name, body in refused.items():
        assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND", name
        assert "does not exist" in body["errors"][0]["message"], name
    assert count_graph(graph) == after_other  # nothing written by the refused requests
    assert after_other.nodes > before.nodes
    assert seen_by_owner["data"] == {"plan": {"id": plan["id"]}, "plans": {"nodes": [{"id": plan["id"]}]}}
    assert seen_by_reviewer["data"]["plans"]["totalCount"] == 2


def test_corrections_and_review_resolutions_record_who_asked(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    """The caller's token name, not a placeholder, is stored on what it did, for two callers."""
    ids = _fixture_ids(store)
    history = "query($d: ID!) { decision(id: $d) { corrections { requestedBy } } }"

    by_reviewer = _as(base_url, tokens["reviewer"], OPERATIONS["correctDecision"][0], d=ids["d"])
    by_admin = _as(base_url, tokens["admin"], OPERATIONS["correctDecision"][0], d=ids["other"])
    resolved = _as(
        base_url,
        tokens["reviewer"],
        "mutation($review: ID!) { resolveReview(input: {reviewId: $review, action: APPROVE}) { review { resolvedBy } } }",
        review=ids["review"],
    )

    assert "errors" not in by_reviewer and "errors" not in by_admin, (by_reviewer, by_admin)
    assert _as(base_url, tokens["admin"], history, d=ids["d"])["data"]["decision"]["corrections"] == [
        {"requestedBy": "reviewer-1"}
    ]
    assert _as(base_url, tokens["admin"], history, d=ids["other"])["data"]["decision"]["corrections"] == [
        {"requestedBy": "admin-1"}
    ]
    assert resolved["data"]["resolveReview"]["review"] == {"resolvedBy": "reviewer-1"}
    assert [a.requested_by for a in reading.correction_attempts(store, ids["d"], principal=LOCAL)] == ["reviewer-1"]
    assert reading.get_review(store, ids["review"], principal=LOCAL).resolved_by == "reviewer-1"


def test_phase_changes_record_who_and_why_and_a_reviewer_may_only_revert(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    plan, root = instantiate_plan(store, "phases", owner="actor-1", principal=LOCAL)
    recording_service.record(store, decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL)
    move = (
        "mutation($plan: ID!, $phase: Phase!, $reason: String!) { advancePhase(planId: $plan, phase: $phase, reason: $reason)"
        " { phase phaseHistory { fromPhase toPhase reason by at } } }"
    )

    forward = _as(base_url, tokens["actor"], move, plan=plan.plan_id, phase="EXECUTE", reason="strategy settled")
    reviewer_forward = _as(base_url, tokens["reviewer"], move, plan=plan.plan_id, phase="APPLY", reason="done")
    analyst_back = _as(base_url, tokens["analyst"], move, plan=plan.plan_id, phase="STRATEGIZE", reason="no")
    reverted = _as(base_url, tokens["reviewer"], move, plan=plan.plan_id, phase="STRATEGIZE", reason="execute cannot proceed")

    assert forward["data"]["advancePhase"]["phase"] == "EXECUTE"
    assert reviewer_forward["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert analyst_back["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    history = reverted["data"]["advancePhase"]["phaseHistory"]
    assert [(h["fromPhase"], h["toPhase"], h["reason"], h["by"]) for h in history] == [
        ("STRATEGIZE", "EXECUTE", "strategy settled", "actor-1"),
        ("EXECUTE", "STRATEGIZE", "execute cannot proceed", "reviewer-1"),
    ]
    assert all(h["at"] for h in history)
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase.value == "strategize"


def test_an_actors_lineage_does_not_walk_through_a_plan_it_may_not_see(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    # actor-1's decision depends (a link only the system could make) on actor-2's, which depends
    # on a decision in another of actor-1's plans: that one is reached only through actor-2's plan.
    mine, _ = instantiate_plan(store, "mine", owner="actor-1", principal=LOCAL)
    elsewhere, _ = instantiate_plan(store, "mine too", owner="actor-1", principal=LOCAL)
    theirs, _ = instantiate_plan(store, "theirs", owner="actor-2", principal=LOCAL)
    far = recording_service.record(
        store, decision(elsewhere.plan_id, DecisionType.STRATEGY_CHOICE, _root(store, elsewhere)), principal=LOCAL
    )
    middle = recording_service.record(
        store, decision(theirs.plan_id, DecisionType.STRATEGY_CHOICE, _root(store, theirs)), principal=LOCAL
    )
    recording_service.add_dependency(store, middle.decision_id, far.decision_id, principal=LOCAL)
    near = recording_service.record(
        store, decision(mine.plan_id, DecisionType.STRATEGY_CHOICE, _root(store, mine)), principal=LOCAL
    )
    recording_service.add_dependency(store, near.decision_id, middle.decision_id, principal=LOCAL)
    lineage = "query($d: ID!) { lineage(decisionId: $d) { decisions { id } plans { id } } }"

    as_actor = _as(base_url, tokens["actor"], lineage, d=near.decision_id)["data"]["lineage"]
    as_admin = _as(base_url, tokens["admin"], lineage, d=near.decision_id)["data"]["lineage"]

    assert {d["id"] for d in as_actor["decisions"]} == {_root(store, mine)}
    assert {p["id"] for p in as_actor["plans"]} == {mine.plan_id}
    assert {d["id"] for d in as_admin["decisions"]} == {_root(store, mine), middle.decision_id, _root(store, theirs)} | {
        far.decision_id,
        _root(store, elsewhere),
    }
    assert {p["id"] for p in as_admin["plans"]} == {mine.plan_id, theirs.plan_id, elsewhere.plan_id}


def test_an_actors_lineage_within_its_own_plans_is_whole(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    # Was empty: with no plan hidden on the way, lineage_seen's OPTIONAL CALL still answered a row
    # (seen = []), which filtered out everything reached (found through the MCP tools' test).
    mine, _ = instantiate_plan(store, "mine", owner="actor-1", principal=LOCAL)
    near = recording_service.record(
        store, decision(mine.plan_id, DecisionType.STRATEGY_CHOICE, _root(store, mine)), principal=LOCAL
    )
    lineage = "query($d: ID!) { lineage(decisionId: $d) { decisions { id } plans { id } } }"

    as_actor = _as(base_url, tokens["actor"], lineage, d=near.decision_id)["data"]["lineage"]

    assert as_actor == {"decisions": [{"id": _root(store, mine)}], "plans": [{"id": mine.plan_id}]}


def _root(store: Trail, plan: Any) -> str:
    return next(
        d.decision_id
        for d in reading.list_decisions(store, plan.plan_id, principal=LOCAL)
        if d.decision_type is DecisionType.PROMPT_DEFINITION
    )


def test_a_correction_shows_its_caller_only_the_cancelled_reviews_of_plans_it_may_see(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    # A correction's downstream reaches, through DEPENDS_ON, a review waiting in another project's
    # plan, and cancels it. Was: cancelledReviews read the reviews with no principal at all, so a
    # reviewer limited to project alpha was shown beta's review, its plan and its question.
    alpha, alpha_root = instantiate_plan(store, "alpha's", project="alpha", principal=LOCAL)
    d = recording_service.record(
        store, decision(alpha.plan_id, DecisionType.STRATEGY_CHOICE, alpha_root.decision_id), principal=LOCAL
    )
    beta, _ = instantiate_plan(
        store, "beta's", project="beta", automation_profile=AutomationProfile(edit_code=1.0), principal=LOCAL
    )
    waiting = record_decision(
        store,
        tool_input("strategy_choice"),
        plan_id=beta.plan_id,
        snapshot=actor_snapshot(),
        depends_on=[d.decision_id],
        principal=LOCAL,
    )
    document = """mutation($d: ID!) { correctDecision(input: {decisionId: $d, mode: REVERT, guidance: "g"}) {
        correction { id } cancelledReviews { id planId } } }"""

    corrected = _as(base_url, tokens["alpha-reviewer"], document, d=d.decision_id)

    assert not corrected.get("errors"), corrected
    assert corrected["data"]["correctDecision"]["cancelledReviews"] == []
    assert reading.get_review(store, waiting.review_id, principal=LOCAL).status.value == "cancelled"  # type: ignore[union-attr]
