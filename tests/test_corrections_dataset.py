"""Corrections as an evaluation dataset: one example per correction, over GraphQL and as JSONL from the CLI."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.cli import main
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from serving import served

OWNER, REVIEWER = "agent", "reviewer-1"

EXAMPLE_FIELDS = """
  input {
    decisionId planId decisionType phase question chosenOption alternativesConsidered confidenceScore rationale
    contextSnapshot { hotContextRef hotContextHash actorStateRef { threadId checkpointNs checkpointId } }
  }
  expectedOutput {
    guidance reason
    correction { decisionId decisionType question chosenOption alternativesConsidered rationale }
    replacement { decisionId chosenOption }
    replayed { decisionId }
  }
  metadata {
    source attemptId attemptNumber mode replayOutcome replayDetail correctedAt requestedBy planId project decisionType
    originalDecisionId correctedDecisionId correctionDecisionId invalidatedDecisionCount invalidatedPlanCount
  }
  record
"""
PLAN_EXAMPLES = "query($plan: ID!, $hierarchy: Boolean!) { plan(id: $plan) { correctionExamples(hierarchy: $hierarchy) { %s } } }"
PROJECT_DATASET = "query($project: String!) { correctionDataset(project: $project) { %s } }"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    return {
        "actor": issue_token(path, OWNER, Role.ACTOR),
        "intruder": issue_token(path, "intruder", Role.ACTOR),
        "reviewer": issue_token(path, REVIEWER, Role.REVIEWER),
        "analyst @search": issue_token(path, "analyst-s", Role.ANALYST, "search"),
        "_file": str(path),
    }


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        yield url


@pytest.fixture
def ask(base_url: str, store: Trail, tokens: dict[str, str]) -> Iterator[Asker]:
    """Send a GraphQL document as one of the tokens, on an empty database."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield Asker(client, tokens)


@dataclass
class Asker:
    client: httpx.Client
    tokens: dict[str, str]

    def raw(self, who: str, document: str, **variables: Any) -> dict[str, Any]:
        response = self.client.post(
            "/graphql",
            json={"query": document, "variables": variables},
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def __call__(self, who: str, document: str, **variables: Any) -> dict[str, Any]:
        body = self.raw(who, document, **variables)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data


def _snapshot(text: str) -> dict[str, Any]:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return {
        "hotContextHash": digest,
        "hotContextRef": f"s3://contexts/{digest}",
        "actorStateRef": {"threadId": f"thread-{text}", "checkpointNs": "strategy", "checkpointId": f"cp-{text}"},
    }


def _plan(ask: Asker, project: str, parent_decision: str | None = None) -> tuple[str, str]:
    """A plan instantiated by the actor: (plan id, root decision id)."""
    document = "mutation($input: InstantiatePlanInput!) { instantiatePlan(input: $input) { id rootDecision { id } } }"
    new: dict[str, Any] = {"description": f"a plan in {project}"}
    new |= {"parentDecisionId": parent_decision} if parent_decision else {"project": project}
    plan = ask("actor", document, input=new)["instantiatePlan"]
    return plan["id"], plan["rootDecision"]["id"]


def _record(ask: Asker, plan: str, decision_type: str = "STRATEGY_CHOICE", **fields: Any) -> str:
    document = "mutation($input: RecordDecisionInput!) { recordDecision(input: $input) { decision { id } } }"
    values = {
        "planId": plan,
        "decisionType": decision_type,
        "question": "Where should requests be limited?",
        "chosenOption": "in the gateway",
        "rationale": "one enforcement point",
        "contextSnapshot": _snapshot(fields.pop("context", "strategy")),
        **fields,
    }
    decision_id: str = ask("actor", document, input=values)["recordDecision"]["decision"]["id"]
    return decision_id


def _correct(ask: Asker, decision: str, guidance: str, reason: str = "") -> tuple[str, str]:
    """A reviewer's correction: (correction decision id, attempt id)."""
    document = """mutation($input: CorrectDecisionInput!) {
      correctDecision(input: $input) { correction { id } attempt { attemptId } } }"""
    done = ask("reviewer", document, input={"decisionId": decision, "mode": "REVERT", "guidance": guidance, "reason": reason})
    return done["correctDecision"]["correction"]["id"], done["correctDecision"]["attempt"]["attemptId"]


@dataclass(frozen=True)
class Corrected:
    plan: str
    strategy: str
    correction: str
    attempt: str
    replacement: str


def _corrected_and_replayed(ask: Asker, project: str = "billing") -> Corrected:
    """A plan whose strategy a reviewer corrected, and whose actor then replayed it."""
    plan, _ = _plan(ask, project)
    strategy = _record(
        ask, plan, alternativesConsidered=["middleware in each service"], confidenceScore=0.62, context="first try"
    )
    correction, attempt = _correct(ask, strategy, "Use per-service middleware", "the gateway is shared")
    replacement = _record(ask, plan, chosenOption="middleware in each service", parentDecisionId=correction, context="replay")
    ask(
        "actor",
        "mutation($input: RecordReplayInput!) { recordReplay(input: $input) { attemptId } }",
        input={"attemptId": attempt, "outcome": "REPLAYED", "decisionIds": [replacement], "detail": "1 step re-run"},
    )
    return Corrected(plan, strategy, correction, attempt, replacement)


def _expected_record(c: Corrected, project: str = "billing") -> dict[str, Any]:
    """The JSONL line of ``_corrected_and_replayed``, written out from what was sent."""
    first, replay = _snapshot("first try"), _snapshot("replay")
    return {
        "input": {
            "decision_id": c.strategy,
            "plan_id": c.plan,
            "decision_type": "strategy_choice",
            "phase": "strategize",
            "question": "Where should requests be limited?",
            "chosen_option": "in the gateway",
            "alternatives_considered": ["middleware in each service"],
            "confidence_score": 0.62,
            "rationale": "one enforcement point",
            "context_snapshot": {
                "hot_context_ref": first["hotContextRef"],
                "hot_context_hash": first["hotContextHash"],
                "actor_state_ref": {
                    "thread_id": "thread-first try",
                    "checkpoint_ns": "strategy",
                    "checkpoint_id": "cp-first try",
                },
            },
        },
        "expected_output": {
            "guidance": "Use per-service middleware",
            "reason": "the gateway is shared",
            "correction": {
                "decision_id": c.correction,
                "decision_type": "user_intervention",
                "chosen_option": "Use per-service middleware",
                "alternatives_considered": ["in the gateway"],
            },
            "replacement": {
                "decision_id": c.replacement,
                "plan_id": c.plan,
                "decision_type": "strategy_choice",
                "phase": "strategize",
                "question": "Where should requests be limited?",
                "chosen_option": "middleware in each service",
                "alternatives_considered": [],
                "confidence_score": None,
                "rationale": "one enforcement point",
                "context_snapshot": {
                    "hot_context_ref": replay["hotContextRef"],
                    "hot_context_hash": replay["hotContextHash"],
                    "actor_state_ref": {"thread_id": "thread-replay", "checkpoint_ns": "strategy", "checkpoint_id": "cp-replay"},
                },
            },
        },
        "metadata": {
            "source": "decisiontrail",
            "attempt_id": c.attempt,
            "attempt_number": 1,
            "mode": "revert",
            "replay_outcome": "replayed",
            "replay_detail": "1 step re-run",
            "requested_by": REVIEWER,
            "plan_id": c.plan,
            "project": project,
            "decision_type": "strategy_choice",
            "original_decision_id": c.strategy,
            "corrected_decision_id": c.strategy,
            "correction_decision_id": c.correction,
            "invalidated_decision_count": 1,
            "invalidated_plan_count": 0,
        },
    }


def _matches(record: dict[str, Any], expected: dict[str, Any]) -> None:
    """``record`` holds everything ``expected`` says (the correction's own fields, such as its
    generated question, and the time are checked apart)."""
    assert record["input"] == expected["input"]
    output = record["expected_output"]
    assert {k: output[k] for k in ("guidance", "reason", "replacement")} == {
        k: expected["expected_output"][k] for k in ("guidance", "reason", "replacement")
    }
    assert output["replayed"] == [expected["expected_output"]["replacement"]]
    correction = expected["expected_output"]["correction"]
    assert {k: output["correction"][k] for k in correction} == correction
    assert {k: record["metadata"][k] for k in expected["metadata"]} == expected["metadata"]
    assert set(record) == {"input", "expected_output", "metadata"}


def test_a_plan_gives_one_example_per_correction_with_the_original_the_guidance_and_the_replacement(ask: Asker) -> None:
    c = _corrected_and_replayed(ask)

    examples = ask("reviewer", PLAN_EXAMPLES % EXAMPLE_FIELDS, plan=c.plan, hierarchy=False)["plan"]["correctionExamples"]

    assert len(examples) == 1
    example = examples[0]
    assert example["input"] == {
        "decisionId": c.strategy,
        "planId": c.plan,
        "decisionType": "STRATEGY_CHOICE",
        "phase": "STRATEGIZE",
        "question": "Where should requests be limited?",
        "chosenOption": "in the gateway",
        "alternativesConsidered": ["middleware in each service"],
        "confidenceScore": 0.62,
        "rationale": "one enforcement point",
        "contextSnapshot": {
            "hotContextRef": _snapshot("first try")["hotContextRef"],
            "hotContextHash": _snapshot("first try")["hotContextHash"],
            "actorStateRef": {"threadId": "thread-first try", "checkpointNs": "strategy", "checkpointId": "cp-first try"},
        },
    }
    assert example["expectedOutput"] == {
        "guidance": "Use per-service middleware",
        "reason": "the gateway is shared",
        "correction": {
            "decisionId": c.correction,
            "decisionType": "USER_INTERVENTION",
            "question": "Correction of a strategy_choice: Where should requests be limited?",
            "chosenOption": "Use per-service middleware",
            "alternativesConsidered": ["in the gateway"],
            "rationale": "the gateway is shared",
        },
        "replacement": {"decisionId": c.replacement, "chosenOption": "middleware in each service"},
        "replayed": [{"decisionId": c.replacement}],
    }
    metadata = dict(example["metadata"])
    assert metadata.pop("correctedAt").startswith("20")
    assert metadata == {
        "source": "decisiontrail",
        "attemptId": c.attempt,
        "attemptNumber": 1,
        "mode": "REVERT",
        "replayOutcome": "REPLAYED",
        "replayDetail": "1 step re-run",
        "requestedBy": REVIEWER,
        "planId": c.plan,
        "project": "billing",
        "decisionType": "STRATEGY_CHOICE",
        "originalDecisionId": c.strategy,
        "correctedDecisionId": c.strategy,
        "correctionDecisionId": c.correction,
        "invalidatedDecisionCount": 1,
        "invalidatedPlanCount": 0,
    }
    _matches(example["record"], _expected_record(c))


def test_a_correction_not_yet_replayed_has_no_replacement_and_a_second_correction_is_a_second_example(ask: Asker) -> None:
    plan, _ = _plan(ask, "billing")
    strategy = _record(ask, plan)
    correction, first = _correct(ask, strategy, "in each service")
    again, second = _correct(ask, correction, "in the gateway after all")

    examples = ask("reviewer", PLAN_EXAMPLES % EXAMPLE_FIELDS, plan=plan, hierarchy=False)["plan"]["correctionExamples"]

    assert [e["metadata"]["attemptId"] for e in examples] == [first, second]
    assert [e["input"]["decisionId"] for e in examples] == [strategy, correction]
    assert [e["expectedOutput"]["correction"]["decisionId"] for e in examples] == [correction, again]
    assert [e["metadata"]["replayOutcome"] for e in examples] == ["PENDING", "PENDING"]
    assert [(e["expectedOutput"]["replacement"], e["expectedOutput"]["replayed"]) for e in examples] == [(None, [])] * 2
    assert [e["record"]["expected_output"]["guidance"] for e in examples] == ["in each service", "in the gateway after all"]


def test_a_plan_without_corrections_gives_an_empty_dataset(
    ask: Asker, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plan, _ = _plan(ask, "billing")
    _record(ask, plan)

    examples = ask("reviewer", PLAN_EXAMPLES % "record", plan=plan, hierarchy=True)["plan"]["correctionExamples"]
    dataset = ask("reviewer", PROJECT_DATASET % "record", project="billing")["correctionDataset"]

    assert examples == [] and dataset == []
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    out = tmp_path / "none.jsonl"
    assert main(["-q", "export", "corrections", "--format", "jsonl", "--plan", plan, "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == ""


def test_the_cli_writes_one_json_object_a_line_with_the_same_content(
    ask: Asker, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    c = _corrected_and_replayed(ask)
    plan, _ = _plan(ask, "billing")
    strategy = _record(ask, plan)
    _, second = _correct(ask, strategy, "not here")
    _corrected_and_replayed(ask, "search")  # another project's: in no billing export
    served = ask("reviewer", PROJECT_DATASET % "record", project="billing")["correctionDataset"]
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)

    out = tmp_path / "corrections.jsonl"
    assert main(["-q", "export", "corrections", "--format", "jsonl", "--plan", c.plan, "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    capsys.readouterr()
    assert main(["-q", "export", "corrections", "--project", "billing"]) == 0  # jsonl is the default, to stdout
    project_lines = capsys.readouterr().out.splitlines()

    assert len(lines) == 1
    _matches(json.loads(lines[0]), _expected_record(c))
    records = [json.loads(line) for line in project_lines]
    assert [r["metadata"]["attempt_id"] for r in records] == [c.attempt, second]
    assert records == [e["record"] for e in served]  # the CLI and the API give the same examples


def test_the_cli_refuses_a_graph_format_for_corrections_and_jsonl_for_a_graph(
    graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)

    assert main(["-q", "export", "corrections", "--plan", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--format", "dot"]) == 2
    assert "export corrections: writes jsonl" in capsys.readouterr().err
    assert main(["-q", "export", "--plan", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--format", "jsonl"]) == 2
    assert "only `export corrections` writes JSON Lines" in capsys.readouterr().err
    assert main(["-q", "export", "corrections", "--lineage", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == 2
    assert "name --plan, --hierarchy or --project" in capsys.readouterr().err
    assert main(["-q", "export", "corrections", "--plan", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]) == 2
    assert "plan 01ARZ3NDEKTSV4RRFFQ69G5FAV does not exist" in capsys.readouterr().err


def test_the_project_dataset_spans_the_projects_plans_and_only_them(ask: Asker) -> None:
    first = _corrected_and_replayed(ask, "billing")
    other = _corrected_and_replayed(ask, "search")
    # A child plan is in its parent plan's project; its corrections are the project's too.
    parent, root = _plan(ask, "billing")
    strategy = _record(ask, parent, parentDecisionId=root)
    spawn = _record(ask, parent, "SUBPLAN_SPAWN", parentDecisionId=strategy, question="Split the work?", context="spawn")
    ask("actor", 'mutation($p: ID!) { advancePhase(planId: $p, phase: EXECUTE, reason: "go") { id } }', p=parent)
    child, _ = _plan(ask, "billing", parent_decision=spawn)
    in_child = _record(ask, child, context="child")
    _, child_attempt = _correct(ask, in_child, "not in the child")

    billing = ask("reviewer", PROJECT_DATASET % "metadata { attemptId planId project }", project="billing")["correctionDataset"]
    search = ask("reviewer", PROJECT_DATASET % "metadata { attemptId planId project }", project="search")["correctionDataset"]
    nowhere = ask("reviewer", PROJECT_DATASET % "metadata { attemptId }", project="no such project")["correctionDataset"]
    of_parent = ask("reviewer", PLAN_EXAMPLES % "metadata { attemptId }", plan=parent, hierarchy=False)["plan"]
    of_hierarchy = ask("reviewer", PLAN_EXAMPLES % "metadata { attemptId }", plan=parent, hierarchy=True)["plan"]

    assert [e["metadata"] for e in billing] == [
        {"attemptId": first.attempt, "planId": first.plan, "project": "billing"},
        {"attemptId": child_attempt, "planId": child, "project": "billing"},
    ]
    assert [e["metadata"] for e in search] == [{"attemptId": other.attempt, "planId": other.plan, "project": "search"}]
    assert nowhere == []
    assert of_parent["correctionExamples"] == []
    assert [e["metadata"]["attemptId"] for e in of_hierarchy["correctionExamples"]] == [child_attempt]


def test_a_caller_that_may_not_see_the_plan_gets_no_examples(ask: Asker) -> None:
    c = _corrected_and_replayed(ask, "billing")
    searched = _corrected_and_replayed(ask, "search")
    document = "query($plan: ID!) { plan(id: $plan) { id correctionExamples { metadata { attemptId } } } }"

    intruder_plan = ask.raw("intruder", document, plan=c.plan)
    intruder_project = ask.raw("intruder", PROJECT_DATASET % "metadata { attemptId }", project="billing")
    analyst_other_project = ask.raw("analyst @search", PROJECT_DATASET % "metadata { attemptId }", project="billing")
    analyst_other_plan = ask.raw("analyst @search", document, plan=c.plan)
    analyst_own = ask("analyst @search", PROJECT_DATASET % "metadata { attemptId }", project="search")
    owner = ask("actor", document, plan=c.plan)

    # As anywhere else: a plan it may not see is null, a dataset of plans it may not see is empty,
    # and nothing in the answers names what is hidden.
    assert intruder_plan == {"data": {"plan": None}}
    assert intruder_project == {"data": {"correctionDataset": []}}
    assert analyst_other_project == {"data": {"correctionDataset": []}}
    assert analyst_other_plan == {"data": {"plan": None}}
    assert [e["metadata"]["attemptId"] for e in analyst_own["correctionDataset"]] == [searched.attempt]
    assert owner["plan"]["correctionExamples"] == [{"metadata": {"attemptId": c.attempt}}]
