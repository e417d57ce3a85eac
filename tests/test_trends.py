"""The ``trends`` query over real HTTP: each series' figures against data built through the services, as each
caller may see them (issue 47, Build 5).

The data: three plans of decisions with known confidences, in projects alpha (one of ann's, one of bob's)
and beta (ann's); a beta decision depends on an alpha one, so correcting the alpha one invalidates it too;
three corrections; gated plans in both projects with resolved and pending reviews. Every expected figure is
worked out here from what was built and read back (an oracle in Python, apart from the Cypher that computes
the answer), and the figures a person would check first are stated outright.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.domain import AutomationProfile, Decision, DecisionType
from decisiontrail.domain.recording import Review, ReviewAction, ReviewStatus
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.services.reviews import resolve_review
from factories import actor_snapshot, decision, tool_input
from serving import served

TRENDS = """query($project: String, $since: DateTime, $until: DateTime) {
  trends(project: $project, since: $since, until: $until) {
    project since until projects
    decisionsPerDay { day decisions corrections }
    correctionRateByType { decisionType decisions corrected rate }
    correctionRateByActor { actor decisions corrected rate }
    confidence { low high corrected kept }
    reviewWaitingTimes {
      resolved pending medianSeconds p90Seconds longestSeconds oldestPendingSeconds
      buckets { label lowSeconds highSeconds resolved pending }
    }
    topInvalidating {
      decisionId planId planDescription sequenceNumber decisionType question chosenOption
      corrections invalidatedDecisions invalidatedPlans lastCorrectedAt
    }
  }
}"""

DOCS = Path(__file__).resolve().parents[1] / "docs" / "trends.md"

# The waiting times' buckets' upper bounds in seconds, restated from docs/trends.md.
WAIT_BOUNDS = [60, 600, 3600, 4 * 3600, 86400, 7 * 86400]


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("trend-tokens") / "tokens.json"
    return {
        "admin": issue_token(path, "admin-1", Role.ADMIN),
        "analyst@alpha": issue_token(path, "analyst-alpha", Role.ANALYST, project="alpha"),
        "ann": issue_token(path, "ann", Role.ACTOR),
        "_file": str(path),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


def ask(base_url: str, token: str, **variables: Any) -> dict[str, Any]:
    body: dict[str, Any] = httpx.post(
        f"{base_url}/graphql",
        json={"query": TRENDS, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    ).json()
    return body


def trends(base_url: str, token: str, **variables: Any) -> dict[str, Any]:
    body = ask(base_url, token, **variables)
    assert not body.get("errors"), body["errors"]
    found: dict[str, Any] = body["data"]["trends"]
    return found


@dataclass
class Built:
    plans: dict[str, tuple[str, str]] = field(default_factory=dict)  # plan id -> (project, owner)
    corrected: list[str] = field(default_factory=list)  # the decisions a correction was made of
    invalidated: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # corrected -> (decisions, plans)
    ids: dict[str, str] = field(default_factory=dict)
    before_corrections: datetime = datetime.now(UTC)


def build(store: Trail) -> Built:
    built = Built()

    def plan(name: str, project: str, owner: str, **more: Any) -> tuple[str, str]:
        made, root = instantiate_plan(store, name, project=project, owner=owner, principal=LOCAL, **more)
        built.plans[made.plan_id] = (project, owner)
        return made.plan_id, root.decision_id

    def record(name: str, plan_id: str, parent: str, confidence: float, **more: Any) -> str:
        made = recording_service.record(
            store,
            decision(
                plan_id, DecisionType.STRATEGY_CHOICE, parent, confidence_score=confidence, chosen_option=f"option {name}", **more
            ),
            principal=LOCAL,
        )
        built.ids[name] = made.decision_id
        return made.decision_id

    ann_alpha, root = plan("ann's alpha plan", "alpha", "ann")
    s1 = record("s1", ann_alpha, root, 0.15)
    record("s2", ann_alpha, root, 0.85)
    record("d3", ann_alpha, root, 0.55, depends_on=(s1,))
    bob_alpha, root = plan("bob's alpha plan", "alpha", "bob")
    record("t1", bob_alpha, root, 0.95)
    record("t2", bob_alpha, root, 1.0)
    ann_beta, root = plan("ann's beta plan", "beta", "ann")
    record("u1", ann_beta, root, 0.4, depends_on=(s1,))
    record("u2", ann_beta, root, 0.42)

    for project, owner in (("alpha", "bob"), ("beta", "ann")):
        gated, _ = plan(f"{owner}'s gated {project} plan", project, owner, automation_profile=AutomationProfile(edit_code=1.0))
        held = [
            recording_service.record_decision(
                store, tool_input("strategy_choice", question=f"q{i}"), plan_id=gated, snapshot=actor_snapshot(), principal=LOCAL
            )
            for i in range(2 if project == "alpha" else 1)
        ]
        assert all(isinstance(r, Review) for r in held)
        time.sleep(0.05)  # a wait long enough to tell from none
        resolve_review(store, held[0].review_id, ReviewAction.APPROVE, principal=LOCAL)

    built.before_corrections = datetime.now(UTC)
    time.sleep(0.01)
    for name in ("s1", "t1", "u2"):
        result = correct(store, built.ids[name], "revert", f"not {name}", principal=LOCAL)
        built.corrected.append(built.ids[name])
        built.invalidated[built.ids[name]] = (list(result.invalidated), list(result.invalidated_plans))
    return built


# -- the oracle: each series worked out in Python from what the services read back -------------------------------


def decisions_of(store: Trail, built: Built, sees: set[str]) -> list[tuple[Decision, str]]:
    return [(d, built.plans[p][1]) for p in sorted(sees) for d in reading.list_decisions(store, p, principal=LOCAL)]


def percentile_cont(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = p * (len(ordered) - 1)
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def expected(store: Trail, built: Built, sees: set[str]) -> dict[str, Any]:
    found = decisions_of(store, built, sees)
    days: dict[str, Counter[str]] = {}
    for d, _ in found:
        days.setdefault(d.created_at.date().isoformat(), Counter())["corrections" if d.is_correction else "decisions"] += 1
    kept = [(d, owner) for d, owner in found if not d.is_correction]
    by_type: dict[str, Counter[str]] = {}
    by_actor: dict[str, Counter[str]] = {}
    buckets = [Counter[str]() for _ in range(10)]
    for d, owner in kept:
        corrected = d.decision_id in built.corrected
        for table, key in ((by_type, d.decision_type.name), (by_actor, owner)):
            table.setdefault(key, Counter())["decisions"] += 1
            table[key]["corrected"] += corrected
        if d.confidence_score is not None:
            bucket = buckets[min(int(d.confidence_score * 10), 9)]
            bucket["corrected"] += corrected
            bucket["kept"] += d.superseded_by is None
    reviews = [r for p in sorted(sees) for r in reading.list_reviews(store, p, principal=LOCAL)]
    waits = [
        (r.resolved_at - r.created_at).total_seconds()
        for r in reviews
        if r.status not in (ReviewStatus.PENDING, ReviewStatus.CANCELLED) and r.resolved_at is not None
    ]
    seen_ids = {d.decision_id for d, _ in found}
    top = [
        (corrected, sum(i in seen_ids for i in gone), sum(p in sees for p in gone_plans))
        for corrected, (gone, gone_plans) in built.invalidated.items()
        if corrected in seen_ids
    ]
    top.sort(key=lambda t: (-t[1], -t[2], t[0]))
    return {
        "decisionsPerDay": [
            {"day": day, "decisions": c["decisions"], "corrections": c["corrections"]} for day, c in sorted(days.items())
        ],
        "correctionRateByType": [
            {"decisionType": t, "decisions": c["decisions"], "corrected": c["corrected"], "rate": c["corrected"] / c["decisions"]}
            for t, c in sorted(by_type.items(), key=lambda kv: kv[0].lower())
        ],
        "correctionRateByActor": [
            {"actor": a, "decisions": c["decisions"], "corrected": c["corrected"], "rate": c["corrected"] / c["decisions"]}
            for a, c in sorted(by_actor.items())
        ],
        "confidence": [
            {"low": i / 10, "high": (i + 1) / 10, "corrected": b["corrected"], "kept": b["kept"]} for i, b in enumerate(buckets)
        ]
        if any(d.confidence_score is not None for d, _ in kept)
        else [],
        "waits": waits,
        "pending": [r for r in reviews if r.status is ReviewStatus.PENDING],
        "top": top,
    }


def waits_bucketed(seconds: list[float]) -> list[int]:
    return [
        sum(1 for s in seconds if (WAIT_BOUNDS[i - 1] if i else 0) <= s < (WAIT_BOUNDS[i] if i < len(WAIT_BOUNDS) else math.inf))
        for i in range(len(WAIT_BOUNDS) + 1)
    ]


def assert_series(answer: dict[str, Any], wanted: dict[str, Any], built: Built) -> None:
    assert answer["decisionsPerDay"] == wanted["decisionsPerDay"]
    assert answer["correctionRateByType"] == wanted["correctionRateByType"]
    assert answer["correctionRateByActor"] == wanted["correctionRateByActor"]
    assert answer["confidence"] == wanted["confidence"]
    waits = answer["reviewWaitingTimes"]
    assert waits["resolved"] == len(wanted["waits"])
    assert waits["pending"] == len(wanted["pending"])
    assert waits["medianSeconds"] == pytest.approx(percentile_cont(wanted["waits"], 0.5), abs=1e-3)
    assert waits["p90Seconds"] == pytest.approx(percentile_cont(wanted["waits"], 0.9), abs=1e-3)
    assert waits["longestSeconds"] == pytest.approx(max(wanted["waits"]), abs=1e-3)
    assert [b["resolved"] for b in waits["buckets"]] == waits_bucketed(wanted["waits"])
    assert len(wanted["pending"]) <= 1  # then the oldest pending review's age is every pending one's
    assert [b["pending"] for b in waits["buckets"]] == waits_bucketed(
        [waits["oldestPendingSeconds"]] if wanted["pending"] else []
    )
    assert [b["highSeconds"] for b in waits["buckets"]] == [*WAIT_BOUNDS, None]
    top = [(t["decisionId"], t["invalidatedDecisions"], t["invalidatedPlans"]) for t in answer["topInvalidating"]]
    assert top == wanted["top"]
    for t in answer["topInvalidating"]:
        assert t["corrections"] == 1
        assert built.plans[t["planId"]]


def still(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer without what differs from one request to the next (a pending review's age) or from one caller to
    another (the projects offered)."""
    waits = {k: v for k, v in answer["reviewWaitingTimes"].items() if k != "oldestPendingSeconds"}
    return {**{k: v for k, v in answer.items() if k != "projects"}, "reviewWaitingTimes": waits}


def test_each_series_counts_what_was_built(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    built = build(store)
    asked = datetime.now(UTC)

    answer = trends(base_url, tokens["admin"])

    assert_series(answer, expected(store, built, set(built.plans)), built)
    # What a person would check first, stated outright: 7 strategy choices, 3 of them corrected.
    strategy = next(r for r in answer["correctionRateByType"] if r["decisionType"] == "STRATEGY_CHOICE")
    assert (strategy["decisions"], strategy["corrected"]) == (7 + 2, 3)  # and the two approved reviews' decisions
    assert sum(d["corrections"] for d in answer["decisionsPerDay"]) == 3
    assert {r["actor"]: r["corrected"] for r in answer["correctionRateByActor"]} == {"ann": 2, "bob": 1}
    confidence = {round(b["low"], 1): (b["corrected"], b["kept"]) for b in answer["confidence"]}
    assert confidence[0.1] == (1, 0)  # s1, corrected
    assert confidence[0.5] == (0, 0)  # d3, superseded as s1's downstream: neither corrected nor kept
    assert confidence[0.9] == (1, 1)  # t1 corrected, t2 (1.0) kept
    assert confidence[0.4] == (1, 0)  # u2 corrected; u1 superseded as s1's downstream
    # s1's correction invalidated itself, d3 and beta's u1; the others only themselves.
    assert answer["topInvalidating"][0]["decisionId"] == built.ids["s1"]
    assert answer["topInvalidating"][0]["invalidatedDecisions"] == 3
    assert answer["topInvalidating"][0]["chosenOption"] == "option s1"
    assert answer["projects"] == ["alpha", "beta"]
    waits = answer["reviewWaitingTimes"]
    assert waits["resolved"] == 2 and waits["pending"] == 1
    assert waits["medianSeconds"] >= 0.05
    pending = expected(store, built, set(built.plans))["pending"][0]
    assert (asked - pending.created_at).total_seconds() <= waits["oldestPendingSeconds"]
    assert waits["oldestPendingSeconds"] <= (datetime.now(UTC) - pending.created_at).total_seconds()


def test_a_project_limited_token_sees_only_its_project(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    built = build(store)
    alpha = {p for p, (project, _) in built.plans.items() if project == "alpha"}

    mine = trends(base_url, tokens["analyst@alpha"])
    asked_for_alpha = trends(base_url, tokens["analyst@alpha"], project="alpha")
    asked_for_beta = trends(base_url, tokens["analyst@alpha"], project="beta")
    admin_alpha = trends(base_url, tokens["admin"], project="alpha")

    assert_series(mine, expected(store, built, alpha), built)
    assert still(asked_for_alpha) == still(admin_alpha) == still({**mine, "project": "alpha"})
    # s1's correction invalidated beta's u1 too: the alpha analyst is not told of it.
    assert mine["topInvalidating"][0]["invalidatedDecisions"] == 2
    assert mine["projects"] == ["alpha"]
    assert asked_for_beta["decisionsPerDay"] == asked_for_beta["correctionRateByType"] == asked_for_beta["topInvalidating"] == []
    assert asked_for_beta["reviewWaitingTimes"]["resolved"] == asked_for_beta["reviewWaitingTimes"]["pending"] == 0
    assert asked_for_beta["confidence"] == asked_for_beta["reviewWaitingTimes"]["buckets"] == []
    assert asked_for_beta["projects"] == []  # not even its own: it asked about another
    # An actor sees its own plans in every project, nobody else's.
    ann = trends(base_url, tokens["ann"])
    assert_series(ann, expected(store, built, {p for p, (_, owner) in built.plans.items() if owner == "ann"}), built)
    assert [r["actor"] for r in ann["correctionRateByActor"]] == ["ann"]


def test_since_and_until_bound_what_is_counted(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    built = build(store)
    mark = built.before_corrections.isoformat()

    after = trends(base_url, tokens["admin"], since=mark)
    before = trends(base_url, tokens["admin"], until=mark)

    assert [(d["decisions"], d["corrections"]) for d in after["decisionsPerDay"]] == [(0, 3)]
    assert after["correctionRateByType"] == [] and after["reviewWaitingTimes"]["resolved"] == 0
    assert sorted(t["decisionId"] for t in after["topInvalidating"]) == sorted(built.corrected)
    assert sum(d["corrections"] for d in before["decisionsPerDay"]) == 0
    assert before["topInvalidating"] == []
    assert before["reviewWaitingTimes"]["resolved"] == 2
    assert datetime.fromisoformat(after["since"]) == datetime.fromisoformat(before["until"]) == built.before_corrections

    # The example of docs/trends.md runs, and a range from long ago counts as much as no range.
    found = re.search(r"```graphql\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None
    example = httpx.post(
        f"{base_url}/graphql",
        json={"query": found.group(1), "variables": {"project": "alpha", "since": "2000-01-01T00:00:00Z"}},
        headers={"Authorization": f"Bearer {tokens['admin']}"},
        timeout=30,
    ).json()
    assert not example.get("errors"), example
    alpha = trends(base_url, tokens["admin"], project="alpha")
    shown = example["data"]["trends"]
    assert shown["project"] == "alpha" and shown["projects"] == ["alpha", "beta"]
    for series in ("decisionsPerDay", "correctionRateByType", "correctionRateByActor", "confidence"):
        assert shown[series] == alpha[series], series
    assert [t["decisionId"] for t in shown["topInvalidating"]] == [t["decisionId"] for t in alpha["topInvalidating"]]
    assert after["until"] is None and before["since"] is None


def test_until_before_since_is_refused_naming_the_field(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    body = ask(base_url, tokens["admin"], since="2026-03-02T00:00:00Z", until="2026-03-01T00:00:00Z")

    assert body["data"] is None
    error = body["errors"][0]
    assert error["extensions"]["code"] == "VALIDATION_FAILED"
    assert error["extensions"]["field"] == "until"
    assert "until" in error["message"]
