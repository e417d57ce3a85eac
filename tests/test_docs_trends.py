"""docs/trends.md's query, run against a served API with the variables the page gives, on a project
"payments" with decisions, a correction and a review waiting, beside another project's plan.
(tests/test_trends.py checks each series in depth.)"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import httpx

from decisiontrail.access import LOCAL
from decisiontrail.domain import AutomationProfile, DecisionType
from decisiontrail.domain.recording import Review
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.recording import record_decision
from docs_examples import DOCS, example, run_graphql
from factories import actor_snapshot, tool_input
from factories import decision as a_decision

PAGE = "docs/trends.md"


def _variables() -> dict[str, str]:
    """The variables the page gives the query."""
    said = re.search(r"With variables such as `(\{.*?\})`", (DOCS / "trends.md").read_text(encoding="utf-8"))
    assert said is not None
    variables: dict[str, str] = json.loads(said.group(1))
    return variables


def test_the_trends_query_answers_a_projects_trends_with_the_pages_variables(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(
        store, "Take card payments", project="payments", automation_profile=AutomationProfile(edit_code=0.5), principal=LOCAL
    )
    instantiate_plan(store, "Index the catalogue", project="search", principal=LOCAL)
    corrected = recording_service.record(
        store,
        a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, confidence_score=0.62),
        principal=LOCAL,
    )
    recording_service.record(
        store,
        a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id, confidence_score=0.91),
        principal=LOCAL,
    )
    recording_service.record(
        store,
        a_decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, corrected.decision_id, confidence_score=0.95),
        principal=LOCAL,
    )
    correct(store, corrected.decision_id, "revert", "Use the provider's hosted page", "PCI scope", principal=LOCAL)
    held = record_decision(
        store,
        tool_input("strategy_choice", question="Which provider?", confidence_score=0.2),
        plan_id=plan.plan_id,
        snapshot=actor_snapshot(),
        principal=LOCAL,
    )
    assert isinstance(held, Review)
    variables = _variables()
    assert datetime.fromisoformat(variables["since"]) < datetime.now(UTC)

    trends = run_graphql(api, example(PAGE, "query Trends($project: String, $since: DateTime, $until: DateTime) {"), **variables)[
        "trends"
    ]

    assert trends["project"] == "payments" and trends["projects"] == ["payments", "search"]
    # Per UTC day, oldest first, the days with none as zeros: today's decisions (corrections left out) and correction.
    today = datetime.now(UTC).date().isoformat()
    *before, last = trends["decisionsPerDay"]
    assert str(last["day"]).startswith(today) and (last["decisions"], last["corrections"]) == (4, 1)
    assert all((d["decisions"], d["corrections"]) == (0, 0) for d in before)
    by_type = {r["decisionType"]: r for r in trends["correctionRateByType"]}
    assert (by_type["STRATEGY_CHOICE"]["decisions"], by_type["STRATEGY_CHOICE"]["corrected"]) == (2, 1)
    assert by_type["STRATEGY_CHOICE"]["rate"] == 0.5
    # The resource selection was superseded as the correction's downstream: it was not corrected.
    assert by_type["RESOURCE_SELECTION"]["corrected"] == 0
    # The actor is the plan's owner: made in process, the name it was made under.
    assert [(r["actor"], r["decisions"], r["corrected"]) for r in trends["correctionRateByActor"]] == [("local", 4, 1)]
    buckets = {round(b["low"], 1): (b["corrected"], b["kept"]) for b in trends["confidence"]}
    assert len(trends["confidence"]) == 10
    # The kept decision is kept; the one below the corrected decision, superseded with it, is neither.
    assert (buckets[0.6], buckets[0.9]) == ((1, 0), (0, 1)) and sum(c + k for c, k in buckets.values()) == 2
    waits = trends["reviewWaitingTimes"]
    assert (waits["resolved"], waits["pending"]) == (0, 1) and waits["oldestPendingSeconds"] >= 0
    assert sum(b["pending"] for b in waits["buckets"]) == 1
    (top,) = trends["topInvalidating"]
    assert (top["decisionId"], top["planId"], top["planDescription"]) == (
        corrected.decision_id,
        plan.plan_id,
        "Take card payments",
    )
    assert (top["corrections"], top["invalidatedDecisions"], top["invalidatedPlans"]) == (1, 2, 0)
