"""The reviewer's inbox over HTTP: reviews across plans by status, plan and project, a page at a time."""

from __future__ import annotations

import httpx

from test_api import INSTANTIATE, gql, ok, record

INBOX = """
query($status: ReviewStatus, $plan: ID, $project: String, $first: Int, $after: String) {
  reviews(status: $status, planId: $plan, project: $project, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } nodes { id planId status question }
  }
}"""
RESOLVE = "mutation($id: ID!) { resolveReview(input: {reviewId: $id, action: APPROVE}) { review { status } } }"


def _held(api: httpx.Client, project: str, question: str) -> tuple[str, str]:
    plan = ok(api, INSTANTIATE, input={"description": question, "project": project, "automationProfile": {"editCode": 0.9}})
    plan_id = plan["instantiatePlan"]["id"]
    review = record(api, plan_id, question=question, confidenceScore=0.1, context=question)["review"]
    return plan_id, review["id"]


def test_the_inbox_lists_reviews_across_plans_by_status_plan_and_project(api: httpx.Client) -> None:
    alpha_plan, first = _held(api, "alpha", "Which limiter?")
    beta_plan, second = _held(api, "beta", "Which store?")
    _, third = _held(api, "alpha", "Which window?")
    ok(api, RESOLVE, id=third)

    pending = ok(api, INBOX, status="PENDING")["reviews"]
    by_plan = ok(api, INBOX, plan=beta_plan)["reviews"]
    alpha = ok(api, INBOX, project="alpha")["reviews"]

    assert [(n["id"], n["status"]) for n in pending["nodes"]] == [(first, "PENDING"), (second, "PENDING")]
    assert pending["totalCount"] == 2
    assert [(n["id"], n["planId"], n["question"]) for n in by_plan["nodes"]] == [(second, beta_plan, "Which store?")]
    assert [(n["id"], n["status"]) for n in alpha["nodes"]] == [(first, "PENDING"), (third, "APPROVED")]
    assert alpha_plan in {n["planId"] for n in alpha["nodes"]}


def test_the_inbox_pages_by_cursor_and_refuses_bad_pages(api: httpx.Client) -> None:
    ids = [_held(api, "alpha", f"Question {i}?")[1] for i in range(3)]

    one = ok(api, INBOX, first=1)["reviews"]
    rest = ok(api, INBOX, first=5, after=one["pageInfo"]["endCursor"])["reviews"]
    too_many = gql(api, INBOX, first=101)
    foreign = gql(api, INBOX, after="bm90LWEtY3Vyc29y")

    assert [n["id"] for n in one["nodes"]] == ids[:1] and one["pageInfo"]["hasNextPage"] and one["totalCount"] == 3
    assert [n["id"] for n in rest["nodes"]] == ids[1:] and not rest["pageInfo"]["hasNextPage"]
    assert too_many["errors"][0]["extensions"] == {"code": "VALIDATION_FAILED", "field": "first"}
    assert foreign["errors"][0]["extensions"]["code"] == "VALIDATION_FAILED"
