"""attachArtifacts over HTTP: artifacts a decision produced later, during Execute, added without
changing anything else about it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from test_api import error_code, ok, snapshot

INSTANTIATE = "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"
RECORD = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
PHASE = "mutation($id: ID!, $phase: Phase!) { advancePhase(planId: $id, phase: $phase) { id } }"
ATTACH = """
mutation($id: ID!, $artifacts: [ArtifactInput!]!) {
  attachArtifacts(decisionId: $id, artifacts: $artifacts) {
    id chosenOption status artifactsProduced { artifactPath artifactType }
  }
}"""
CORRECT = "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { correction { id } } }"


def _record(api: httpx.Client, plan_id: str, decision_type: str, parent: str, **fields: Any) -> str:
    recorded = ok(
        api,
        RECORD,
        input={
            "planId": plan_id,
            "decisionType": decision_type,
            "question": f"which {decision_type}?",
            "chosenOption": "this",
            "rationale": "r",
            "parentDecisionId": parent,
            "contextSnapshot": snapshot(decision_type),
            **fields,
        },
    )
    return str(recorded["recordDecision"]["decision"]["id"])


def _executing(api: httpx.Client) -> tuple[str, str, str]:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = _record(api, plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"])
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    tool = _record(
        api, plan["id"], "TOOL_INVOCATION", strategy, artifactsProduced=[{"artifactPath": "a.py", "artifactType": "file"}]
    )
    return plan["id"], strategy, tool


def test_artifacts_are_added_once_and_nothing_else_changes(api: httpx.Client) -> None:
    _, _, tool = _executing(api)
    artifacts = [{"artifactPath": "report.html", "artifactType": "report"}, {"artifactPath": "a.py", "artifactType": "file"}]

    first = ok(api, ATTACH, id=tool, artifacts=artifacts)["attachArtifacts"]
    again = ok(api, ATTACH, id=tool, artifacts=artifacts)["attachArtifacts"]

    assert first["artifactsProduced"] == [
        {"artifactPath": "a.py", "artifactType": "file"},
        {"artifactPath": "report.html", "artifactType": "report"},
    ]
    assert again == first
    assert (first["chosenOption"], first["status"]) == ("this", "CURRENT")


def test_an_artifact_carries_its_content_digest_recorded_or_attached(api: httpx.Client, graph: Graph) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "p"})["instantiatePlan"]
    strategy = _record(api, plan["id"], "STRATEGY_CHOICE", plan["rootDecision"]["id"])
    ok(api, PHASE, id=plan["id"], phase="EXECUTE")
    built = {"artifactPath": "s3://builds/app.whl", "artifactType": "wheel", "digest": "sha256:" + "ab" * 32}
    tool = _record(api, plan["id"], "TOOL_INVOCATION", strategy, artifactsProduced=[built])
    report = {"artifactPath": "report.html", "artifactType": "report", "digest": "sha512:" + "cd" * 64}

    attached = ok(api, ATTACH, id=tool, artifacts=[report])["attachArtifacts"]

    read = ok(api, "query($id: ID!) { decision(id: $id) { artifactsProduced { artifactPath artifactType digest } } }", id=tool)
    assert read["decision"]["artifactsProduced"] == [built, report]
    assert [a["artifactPath"] for a in attached["artifactsProduced"]] == ["s3://builds/app.whl", "report.html"]
    before = count_graph(graph)
    refused = error_code(
        api,
        RECORD,
        input={
            "planId": plan["id"],
            "decisionType": "TOOL_INVOCATION",
            "question": "q",
            "chosenOption": "o",
            "rationale": "r",
            "parentDecisionId": strategy,
            "contextSnapshot": snapshot("digest"),
            "artifactsProduced": [{"artifactPath": "x", "artifactType": "file", "digest": "sha256:XYZ"}],
        },
    )
    assert refused["code"] == "VALIDATION_FAILED" and "digest" in refused["field"], refused
    assert count_graph(graph) == before


def test_artifacts_are_refused_outside_execute_for_superseded_decisions_and_empty_lists(api: httpx.Client, graph: Graph) -> None:
    plan_id, strategy, tool = _executing(api)
    artifacts = [{"artifactPath": "x", "artifactType": "file"}]
    before = count_graph(graph)

    assert error_code(api, ATTACH, id=tool, artifacts=[])["field"] == "artifacts"
    blank = error_code(api, ATTACH, id=tool, artifacts=[{"artifactPath": " ", "artifactType": "file"}])
    assert blank["code"] == "VALIDATION_FAILED", blank  # refused as bad input, not masked as a bug
    odd = error_code(api, ATTACH, id=tool, artifacts=[{"artifactPath": "x", "artifactType": "file", "digest": "not-a-digest"}])
    assert (odd["code"], odd["field"]) == ("VALIDATION_FAILED", "digest"), odd
    assert error_code(api, ATTACH, id="01M8QAPS8JPCYD5T6NMTXHHEXY", artifacts=artifacts)["code"] == "NOT_FOUND"
    assert count_graph(graph) == before

    ok(api, CORRECT, input={"decisionId": tool, "mode": "REVERT", "guidance": "another tool"})
    assert error_code(api, ATTACH, id=tool, artifacts=artifacts)["rule"] == "decision_is_current"
    ok(api, PHASE, id=plan_id, phase="STRATEGIZE")
    refused = error_code(api, ATTACH, id=strategy, artifacts=artifacts)
    assert refused["code"] == "PHASE_VIOLATION", refused


def test_an_attached_artifact_is_dated_and_absent_from_reads_as_of_before_it(api: httpx.Client) -> None:
    # Was: attaching did not date an artifact, so a read as of any moment showed what was attached
    # later, and ArtifactRef.attachedAt could only ever answer null.
    _, _, tool = _executing(api)
    before = datetime.now(UTC)
    report = {"artifactPath": "report.html", "artifactType": "report"}
    ok(api, ATTACH, id=tool, artifacts=[report])
    after = datetime.now(UTC)
    ok(api, ATTACH, id=tool, artifacts=[report, {"artifactPath": "a.py", "artifactType": "file"}])  # both named already

    read = "query($id: ID!, $at: DateTime) { decision(id: $id, asOf: $at) { artifactsProduced { artifactPath attachedAt } } }"
    now = ok(api, read, id=tool, at=None)["decision"]["artifactsProduced"]
    assert [a["artifactPath"] for a in now] == ["a.py", "report.html"]
    assert now[0]["attachedAt"] is None  # recorded with the decision
    attached_at = datetime.fromisoformat(now[1]["attachedAt"])
    assert before <= attached_at <= after  # the first attaching's date, kept by the second
    then = ok(api, read, id=tool, at=before.isoformat())["decision"]["artifactsProduced"]
    assert then == [{"artifactPath": "a.py", "attachedAt": None}]
