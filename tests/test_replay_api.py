"""recordReplay over HTTP: an API client reports how a correction's replay went, or is refused with nothing written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.services import reading
from decisiontrail.services import Trail
from decisiontrail.access import LOCAL

from test_api import INSTANTIATE, gql, ok, record

CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id } attempt { attemptId replayOutcome } }
}"""
REPLAY = """
mutation($input: RecordReplayInput!) {
  recordReplay(input: $input) {
    attemptId replayOutcome replayDetail replayedDecisionIds originalDecisionId correctedDecisionId correctionDecisionId
  }
}"""


def _corrected(api: httpx.Client) -> tuple[str, str, str, str]:
    """A plan whose strategy was corrected: (plan, strategy, correction decision, attempt)."""
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]["id"]
    strategy = record(api, plan)["decision"]["id"]
    corrected = ok(api, CORRECT, input={"decisionId": strategy, "mode": "REVERT", "guidance": "the other way"})["correctDecision"]
    return plan, strategy, corrected["correction"]["id"], corrected["attempt"]["attemptId"]


def test_a_client_reports_the_replay_and_the_decisions_it_recorded(api: httpx.Client, store: Trail) -> None:
    plan, strategy, correction_id, attempt_id = _corrected(api)
    replacement = record(api, plan, chosenOption="the other way", parentDecisionId=correction_id, context="replay")["decision"][
        "id"
    ]

    reported = ok(
        api,
        REPLAY,
        input={"attemptId": attempt_id, "outcome": "REPLAYED", "decisionIds": [replacement], "detail": "1 step re-run"},
    )["recordReplay"]

    assert reported == {
        "attemptId": attempt_id,
        "replayOutcome": "REPLAYED",
        "replayDetail": "1 step re-run",
        "replayedDecisionIds": [replacement],
        "originalDecisionId": strategy,
        "correctedDecisionId": strategy,
        "correctionDecisionId": correction_id,
    }
    stored = reading.get_attempt(store, attempt_id, principal=LOCAL)
    assert (stored.replay_outcome, stored.replayed_decision_ids) == (ReplayOutcome.REPLAYED, (replacement,))


@pytest.mark.parametrize(
    ("change", "code", "detail"),
    [
        ({"outcome": "PENDING"}, "VALIDATION_FAILED", "outcome"),
        ({"decisionIds": ["01ARZ3NDEKTSV4RRFFQ69G5FAV"]}, "NOT_FOUND", "decision 01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        ({"attemptId": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "NOT_FOUND", "correction attempt 01ARZ3NDEKTSV4RRFFQ69G5FAV"),
        ({"outcome": "DONE"}, None, "ReplayOutcome"),
    ],
)
def test_a_refused_report_writes_nothing(
    api: httpx.Client, store: Trail, change: dict[str, Any], code: str | None, detail: str
) -> None:
    _, _, _, attempt_id = _corrected(api)

    body = gql(api, REPLAY, input={"attemptId": attempt_id, "outcome": "FAILED", "detail": "x"} | change)

    error = body["errors"][0]
    assert (error.get("extensions") or {}).get("code") == code, error
    assert detail in error["message"]
    stored = reading.get_attempt(store, attempt_id, principal=LOCAL)
    assert (stored.replay_outcome, stored.replay_detail, stored.replayed_decision_ids) == (ReplayOutcome.PENDING, None, ())


DECISION = "query($id: ID!) { decision(id: $id) { status dependsOn { id } } }"
CORRECTED = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { invalidated { id } attempt { attemptNumber originalDecisionId correctedDecisionId } }
}"""


def _replayed(api: httpx.Client) -> tuple[str, str, str]:
    """A corrected strategy and its replay reported: (strategy, correction decision, replacement)."""
    plan, strategy, correction_id, attempt_id = _corrected(api)
    replacement = record(api, plan, chosenOption="the other way", parentDecisionId=correction_id, context="replay")["decision"][
        "id"
    ]
    ok(api, REPLAY, input={"attemptId": attempt_id, "outcome": "REPLAYED", "decisionIds": [replacement]})
    return strategy, correction_id, replacement


def test_a_replayed_decision_depends_on_the_guidance_and_falls_with_it(api: httpx.Client) -> None:
    _, correction_id, replacement = _replayed(api)
    assert ok(api, DECISION, id=replacement)["decision"]["dependsOn"] == [{"id": correction_id}]

    invalidated = ok(api, CORRECTED, input={"decisionId": correction_id, "mode": "REVERT", "guidance": "neither way"})

    assert replacement in {d["id"] for d in invalidated["correctDecision"]["invalidated"]}
    assert ok(api, DECISION, id=replacement)["decision"]["status"] == "SUPERSEDED"


def test_correcting_the_replacement_continues_the_attempt_numbering(api: httpx.Client, store: Trail) -> None:
    strategy, _, replacement = _replayed(api)

    again = ok(api, CORRECTED, input={"decisionId": replacement, "mode": "REVERT", "guidance": "a third way"})

    attempt = again["correctDecision"]["attempt"]
    assert (attempt["attemptNumber"], attempt["originalDecisionId"], attempt["correctedDecisionId"]) == (
        2,
        strategy,
        replacement,
    )
    assert [a.attempt_number for a in reading.correction_attempts(store, replacement, principal=LOCAL)] == [1, 2]


def test_a_dependency_a_replay_report_added_is_dated_and_absent_before_it(api: httpx.Client) -> None:
    # Was: the DEPENDS_ON a replay's report adds carried no date, so a read as of a moment before
    # the report showed the replayed decision depending on the correction already (and the
    # attempt already replayed).
    plan, strategy, correction_id, attempt_id = _corrected(api)
    replacement = record(api, plan, chosenOption="the other way", parentDecisionId=correction_id, context="replay")["decision"][
        "id"
    ]
    read = """query($r: ID!, $c: ID!, $s: ID!, $at: DateTime) {
      replacement: decision(id: $r, asOf: $at) { dependsOn { id } }
      correction: decision(id: $c, asOf: $at) { dependents { id } downstreamDecisionIds }
      strategy: decision(id: $s, asOf: $at) { corrections { replayOutcome replayedDecisionIds } }
    }"""
    before = ok(api, read, r=replacement, c=correction_id, s=strategy, at=None)
    moment = datetime.now(UTC).isoformat()

    ok(api, REPLAY, input={"attemptId": attempt_id, "outcome": "REPLAYED", "decisionIds": [replacement]})
    then = ok(api, read, r=replacement, c=correction_id, s=strategy, at=moment)
    now = ok(api, read, r=replacement, c=correction_id, s=strategy, at=None)

    assert now["replacement"]["dependsOn"] == [{"id": correction_id}]
    assert now["correction"] == {"dependents": [{"id": replacement}], "downstreamDecisionIds": [replacement]}
    assert now["strategy"]["corrections"] == [{"replayOutcome": "REPLAYED", "replayedDecisionIds": [replacement]}]
    pending = {"corrections": [{"replayOutcome": "PENDING", "replayedDecisionIds": []}]}
    assert then == before
    assert then == {
        "replacement": {"dependsOn": []},
        "correction": {"dependents": [], "downstreamDecisionIds": []},
        "strategy": pending,
    }
