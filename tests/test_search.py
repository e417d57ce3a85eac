"""Finding over HTTP: decisions searched across plans by their words and ids, and the plan list's order and filters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import instantiate_plan
from factories import decision
from serving import served
from test_api import EXECUTE, INSTANTIATE, error_code, gql, ok, record

SEARCH = """query($text: String!, $first: Int, $after: String, $project: String, $planId: ID) {
  searchDecisions(text: $text, first: $first, after: $after, project: $project, planId: $planId) {
    totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id question status plan { id } } }
  } }"""


def found(api: httpx.Client, text: str, **variables: Any) -> dict[str, Any]:
    result: dict[str, Any] = ok(api, SEARCH, text=text, **variables)["searchDecisions"]
    return result


def ids(connection: dict[str, Any]) -> list[str]:
    return [e["node"]["id"] for e in connection["edges"]]


# -- searching decisions ------------------------------------------------------------------------------------


def test_a_word_is_found_in_the_question_the_chosen_option_or_the_rationale_in_any_plan(api: httpx.Client) -> None:
    one = ok(api, INSTANTIATE, input={"description": "first"})["instantiatePlan"]["id"]
    two = ok(api, INSTANTIATE, input={"description": "second"})["instantiatePlan"]["id"]
    asked = record(api, one, question="Should sessions live in Redis?", chosenOption="yes", context="a")["decision"]
    chosen = record(api, two, question="Where do sessions live?", chosenOption="Memcached cluster", context="b")["decision"]
    argued = record(api, two, question="Which region?", chosenOption="eu-west", rationale="Latency to Frankfurt", context="c")[
        "decision"
    ]

    assert ids(found(api, "redis")) == [asked["id"]]
    assert ids(found(api, "MEMCACHED")) == [chosen["id"]]
    assert ids(found(api, "frankfurt")) == [argued["id"]]
    assert found(api, "frankfurt")["edges"][0]["node"]["plan"] == {"id": two}
    assert sorted(ids(found(api, "sessions"))) == sorted([asked["id"], chosen["id"]])
    assert found(api, "sessions")["totalCount"] == 2
    # Every word must be found (each in any of the three): one missing finds nothing.
    assert ids(found(api, "sessions redis")) == [asked["id"]]
    assert ids(found(api, "redis frankfurt")) == []
    assert found(api, "nowhere to be found") == {
        "totalCount": 0,
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "edges": [],
    }


def test_a_superseded_decision_is_found_with_its_status_and_so_is_its_correction(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    original = record(api, plan, question="Which broker, Kafka or RabbitMQ?", chosenOption="Kafka")["decision"]
    correction = ok(
        api,
        """mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }""",
        input={"decisionId": original["id"], "mode": "REVERT", "guidance": "use RabbitMQ", "reason": "ops know it"},
    )["correctDecision"]["correction"]

    statuses = {e["node"]["id"]: e["node"]["status"] for e in found(api, "kafka")["edges"]}

    assert statuses == {original["id"]: "SUPERSEDED", correction["id"]: "CURRENT"}


def test_a_decision_is_found_by_its_id_in_any_case_before_what_only_mentions_it(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    target = record(api, plan, question="Which cache?", context="t")["decision"]
    mention = record(api, plan, question="Why?", rationale=f"follows {target['id']}", context="m")["decision"]
    record(api, plan, question="Unrelated?", context="u")

    by_id = found(api, f"  {target['id'].lower()} ")

    assert ids(by_id) == [target["id"], mention["id"]]
    assert by_id["totalCount"] == 2
    assert ids(found(api, "01ARZ3NDEKTSV4RRFFQ69G5FAV")) == []  # a ULID nobody has: nothing


def test_a_question_match_ranks_before_a_rationale_only_one(api: httpx.Client) -> None:
    """A question weighs three times a rationale, a chosen option twice (domain.pages.FIELD_WEIGHTS)."""
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    # Recorded first, so its id sorts first; and its short rationale would outscore a long question,
    # were the fields weighed alike.
    in_rationale = record(api, plan, question="Which queue?", rationale="Kafka", context="r")["decision"]
    in_question = record(
        api,
        plan,
        question="Which queue should the billing service use for its invoice events, Kafka or another one that we know?",
        rationale="the team runs it already in production for other services",
        context="q",
    )["decision"]
    in_option = record(api, plan, question="Which log?", chosenOption="Kafka", context="o")["decision"]

    hits = ids(found(api, "kafka"))

    assert [h for h in hits if h != in_option["id"]] == [in_question["id"], in_rationale["id"]]
    assert hits.index(in_option["id"]) < hits.index(in_rationale["id"])


@pytest.mark.parametrize(
    "text",
    [
        '"a:b"',
        "a:b",
        "rate-limit",
        "AND",
        "NOT x",
        "*",
        "?",
        "(",
        ")",
        "[x TO y]",
        "{",
        "\\",
        '"',
        "x^2",
        "~",
        "a && b",
        "/re/",
        "!",
    ],
)
def test_what_lucene_would_read_as_syntax_is_searched_as_text(api: httpx.Client, text: str) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    labelled = record(api, plan, question="Keys like a:b stay?", chosenOption="Add a rate-limit to login", context="l")
    other = record(api, plan, question="Anything else?", chosenOption="no", context="o")["decision"]

    body = gql(api, SEARCH, text=text)

    assert "errors" not in body, body["errors"]
    hits = ids(body["data"]["searchDecisions"])
    assert other["id"] not in hits  # never everything: a wildcard or a range was not read as one
    if text in ('"a:b"', "a:b", "rate-limit"):
        assert hits == [labelled["decision"]["id"]]


def test_search_pages_by_opaque_cursor_and_refuses_what_is_not_its_cursor(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    made = [record(api, plan, question=f"Paging question {i}?", context=f"p{i}")["decision"]["id"] for i in range(7)]

    pages, after = [], None
    for _ in range(10):  # 7 hits, 3 a page: a pager that never ends fails here
        page = found(api, "paging", first=3, after=after)
        pages.append(ids(page))
        assert page["totalCount"] == 7
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
        assert page["edges"][-1]["cursor"] == after
    plans_cursor = ok(api, "query { plans(first: 1) { pageInfo { endCursor } } }")["plans"]["pageInfo"]["endCursor"]

    assert [len(p) for p in pages] == [3, 3, 1]
    assert sorted(sum(pages, [])) == sorted(made)
    assert ids(found(api, "paging", first=7)) == sum(pages, [])  # the pages, in the order of one page
    assert error_code(api, SEARCH, text="paging", after=plans_cursor)["field"] == "after"
    assert error_code(api, SEARCH, text="paging", after="bm90LWEtY3Vyc29y")["field"] == "after"
    assert error_code(api, SEARCH, text="paging", first=101)["field"] == "first"
    assert error_code(api, SEARCH, text="x" * 201)["field"] == "text"
    assert found(api, "   ") == {"totalCount": 0, "pageInfo": {"hasNextPage": False, "endCursor": None}, "edges": []}


def test_search_narrows_to_a_project_and_a_plan(api: httpx.Client) -> None:
    alpha = ok(api, INSTANTIATE, input={"description": "a", "project": "alpha"})["instantiatePlan"]["id"]
    beta = ok(api, INSTANTIATE, input={"description": "b", "project": "beta"})["instantiatePlan"]["id"]
    other_beta = ok(api, INSTANTIATE, input={"description": "b2", "project": "beta"})["instantiatePlan"]["id"]
    in_alpha = record(api, alpha, question="Redis here?", context="a")["decision"]["id"]
    in_beta = record(api, beta, question="Redis there?", context="b")["decision"]["id"]
    in_other_beta = record(api, other_beta, question="Redis too?", context="c")["decision"]["id"]

    assert ids(found(api, "redis", project="alpha")) == [in_alpha]
    assert sorted(ids(found(api, "redis", project="beta"))) == sorted([in_beta, in_other_beta])
    assert ids(found(api, "redis", planId=other_beta)) == [in_other_beta]
    assert found(api, "redis", project="alpha", planId=beta)["totalCount"] == 0


# -- what a caller finds: a token limited to a project, an actor's -------------------------------------------


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    return {
        "admin": issue_token(path, "admin-1", Role.ADMIN),
        "alpha-analyst": issue_token(path, "analyst-alpha", Role.ANALYST, project="alpha"),
        "actor": issue_token(path, "actor-1", Role.ACTOR),
        "_file": str(path),
    }


@pytest.fixture
def limited(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[dict[str, httpx.Client]]:
    """A client per token, of the service served with them, on an empty database."""
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        clients = {
            name: httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {token}"})
            for name, token in tokens.items()
            if name != "_file"
        }
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()


def _redis_plan(store: Trail, *, project: str | None = None, owner: str | None = None) -> tuple[str, str]:
    plan, root = instantiate_plan(store, "p", project=project, owner=owner, principal=LOCAL)
    made = recording_service.record(
        store,
        decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, question="Redis or not?"),
        principal=LOCAL,
    )
    return plan.plan_id, made.decision_id


def test_a_caller_finds_only_the_decisions_of_plans_it_may_see_and_counts_no_other(
    store: Trail, limited: dict[str, httpx.Client]
) -> None:
    alpha_plan, alpha = _redis_plan(store, project="alpha")
    beta_plan, beta = _redis_plan(store, project="beta")
    _, actors = _redis_plan(store, owner="actor-1")
    _, someone_elses = _redis_plan(store, owner="actor-2")

    admin = found(limited["admin"], "redis")
    analyst = found(limited["alpha-analyst"], "redis")
    actor = found(limited["actor"], "redis")

    assert sorted(ids(admin)) == sorted([alpha, beta, actors, someone_elses]) and admin["totalCount"] == 4
    assert analyst["totalCount"] == 1 and ids(analyst) == [alpha]
    assert actor["totalCount"] == 1 and ids(actor) == [actors]
    # Neither by id, nor by asking for the other's project or plan.
    assert found(limited["alpha-analyst"], beta.lower())["totalCount"] == 0
    assert found(limited["alpha-analyst"], "redis", project="beta") == {
        "totalCount": 0,
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "edges": [],
    }
    assert found(limited["alpha-analyst"], "redis", planId=beta_plan)["totalCount"] == 0
    assert found(limited["actor"], someone_elses)["totalCount"] == 0
    assert ids(found(limited["alpha-analyst"], alpha, planId=alpha_plan)) == [alpha]


# -- the plan list: newest first, and its filters -------------------------------------------------------------

PLANS = """query($first: Int, $after: String, $newestFirst: Boolean, $project: String, $hasCorrections: Boolean,
                 $hasPendingReviews: Boolean, $maxConfidence: Float, $phase: Phase) {
  plans(first: $first, after: $after, newestFirst: $newestFirst, project: $project, hasCorrections: $hasCorrections,
        hasPendingReviews: $hasPendingReviews, maxConfidence: $maxConfidence, phase: $phase) {
    totalCount pageInfo { hasNextPage endCursor } nodes { id }
  } }"""


def listed(api: httpx.Client, **variables: Any) -> list[str]:
    """Every plan the list gives, page after page of two."""
    plans, after = [], None
    for _ in range(20):
        page = ok(api, PLANS, first=2, after=after, **variables)["plans"]
        plans += [p["id"] for p in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            return plans
        after = page["pageInfo"]["endCursor"]
    raise AssertionError("a pager that never ends")


def test_plans_newest_first_page_by_page(api: httpx.Client) -> None:
    made = [ok(api, INSTANTIATE, input={"description": f"plan {i}"})["instantiatePlan"]["id"] for i in range(5)]

    assert listed(api, newestFirst=True) == made[::-1]
    assert listed(api) == made  # oldest first stays the default
    assert listed(api, newestFirst=False) == made


def test_plans_filtered_by_project_corrections_pending_reviews_and_low_confidence(api: httpx.Client) -> None:
    def plan(**entry: Any) -> str:
        made: str = ok(api, INSTANTIATE, input={"description": "p", **entry})["instantiatePlan"]["id"]
        return made

    corrected = plan(project="payments")
    low = record(api, corrected, confidenceScore=0.1, context="c")["decision"]
    ok(
        api,
        "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }",
        input={"decisionId": low["id"], "mode": "REVERT", "guidance": "g", "reason": "r"},
    )
    waiting = plan(project="payments", automationProfile={"editCode": 1.0})
    assert record(api, waiting, confidenceScore=0.9, context="w")["review"]["status"] == "PENDING"
    unsure = plan(project="catalog")
    record(api, unsure, confidenceScore=0.3, context="u")
    record(api, unsure, confidenceScore=0.95, context="v")
    sure = plan(project="catalog")
    record(api, sure, confidenceScore=0.95, context="s")
    ok(api, EXECUTE, id=sure)
    every = [corrected, waiting, unsure, sure]

    assert listed(api) == every
    assert listed(api, project="payments") == [corrected, waiting]
    assert listed(api, project="catalog", newestFirst=True) == [sure, unsure]
    assert listed(api, hasCorrections=True) == [corrected]
    assert listed(api, hasCorrections=False) == [waiting, unsure, sure]
    assert listed(api, hasPendingReviews=True) == [waiting]
    assert listed(api, hasPendingReviews=False) == [corrected, unsure, sure]
    # A current decision at most that confident: the corrected plan's low one was superseded.
    assert listed(api, maxConfidence=0.5) == [unsure]
    assert listed(api, maxConfidence=0.3) == [unsure]  # at most, not below
    assert listed(api, maxConfidence=0.95) == [unsure, sure]
    assert listed(api, maxConfidence=0.95, phase="EXECUTE", newestFirst=True) == [sure]
    assert listed(api, project="catalog", hasCorrections=True) == []
    counted = ok(api, PLANS, first=1, project="payments", hasPendingReviews=False)["plans"]
    assert counted["totalCount"] == 1 and counted["nodes"] == [{"id": corrected}]


def test_a_project_limited_token_lists_no_other_projects_plans_by_asking_for_them(
    store: Trail, limited: dict[str, httpx.Client]
) -> None:
    alpha, _ = _redis_plan(store, project="alpha")
    _redis_plan(store, project="beta")

    asked_for_beta = ok(limited["alpha-analyst"], PLANS, project="beta")["plans"]
    asked_for_alpha = ok(limited["alpha-analyst"], PLANS, project="alpha", newestFirst=True)["plans"]

    assert asked_for_beta == {"totalCount": 0, "pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": []}
    assert asked_for_alpha["nodes"] == [{"id": alpha}] and asked_for_alpha["totalCount"] == 1
