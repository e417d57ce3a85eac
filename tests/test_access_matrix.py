"""Every caller against every operation over real HTTP (the matrix of reliability/access.py), and projects."""

from __future__ import annotations

import hmac
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import graphql
import pytest

from decisiontrail import access
from decisiontrail.access import LOCAL, Role, TokenRegistry, issue_token, token_hash
from decisiontrail.app import create_app
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.api import schema
from decisiontrail.domain import Decision
from decisiontrail.services.lifecycle import instantiate_plan
from decisiontrail.domain.correction import ReplayOutcome
from decisiontrail.services import correction as correction_service
from decisiontrail.services import reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services import Trail
from reliability.access import CALLERS, OPERATIONS, issue_tokens, make_fixture, run
from factories import actor_snapshot, tool_input
from serving import served, subscribed


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("matrix") / "tokens.json"


@pytest.fixture(scope="module")
def tokens(token_file: Path) -> dict[str, str]:
    return issue_tokens(token_file)


@pytest.fixture
def base_url(store: Trail, graph: Graph, tokens: dict[str, str], token_file: Path) -> Iterator[str]:
    # No runtime workers: the matrix judges each request by what it changed, and runPlan's runs,
    # driven in the background, would change the database between requests (they stay queued).
    with served(create_app(graph=graph, tokens=TokenRegistry.load(token_file), runtime_workers=0)) as url:
        yield url


def test_every_query_and_mutation_of_the_schema_is_in_the_matrix() -> None:
    sdl = graphql.build_schema(str(schema))
    assert sdl.query_type is not None and sdl.mutation_type is not None
    fields = {f"Query.{f}" for f in sdl.query_type.fields} | {f"Mutation.{f}" for f in sdl.mutation_type.fields}

    covered = {op.field for op in OPERATIONS if op.field is not None}

    assert fields - covered == set(), "operations without a matrix entry"
    assert covered - fields == set(), "matrix entries for operations the schema does not have"
    assert {op.request.split("/")[2] for op in OPERATIONS if op.field is None} == {"plans", "decisions"}


def test_every_caller_against_every_operation(base_url: str, graph: Graph, store: Trail, tokens: dict[str, str]) -> None:
    outcome = run(base_url, graph, tokens)

    assert outcome.failures == [], "\n".join(outcome.failures)
    figures = outcome.figures
    assert figures["cases"] == len(OPERATIONS) * len(CALLERS)
    assert figures["allowed as expected"] + figures["refused as expected"] == figures["cases"]
    assert figures["unexpected"] == figures["writes by refused requests"] == figures["leaks"] == 0
    assert figures["refusals unlike a missing record"] == 0
    # Every kind of answer happened, so none of the checks above held vacuously.
    assert {"UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "VALIDATION_FAILED"} <= set(outcome.errors_by_code)
    assert figures["allowed as expected"] > 0


def test_a_project_token_lists_and_exports_only_its_project(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    import httpx

    fixture = make_fixture(store)
    beta = {"Authorization": f"Bearer {tokens['analyst @beta']}"}
    alpha = {"Authorization": f"Bearer {tokens['reviewer @alpha']}"}
    document = "{ plans(first: 100) { totalCount nodes { id project } } }"

    listed = httpx.post(f"{base_url}/graphql", json={"query": document}, headers=beta, timeout=30).json()["data"]["plans"]
    hierarchy = httpx.get(f"{base_url}/export/plans/{fixture.ids['plan']}.json?scope=hierarchy", headers=alpha, timeout=30)

    assert listed == {"totalCount": 1, "nodes": [{"id": fixture.ids["beta"], "project": "beta"}]}
    assert hierarchy.status_code == 200
    exported = {n["id"] for n in hierarchy.json()["nodes"]}
    # The plan's decision depends on one in project beta: the export leaves it out.
    assert {fixture.ids["plan"], fixture.ids["child"], fixture.ids["decision"]} <= exported
    assert not {fixture.ids["beta"], fixture.ids["upstream"], fixture.ids["downstream"]} & exported


def test_a_child_plan_inherits_its_parents_project_and_refuses_another(store: Trail) -> None:
    fixture = make_fixture(store)
    spawn = fixture.ids["liveSpawn"]  # a parallel spawn of a plan in Execute: it spawns a group

    child, _ = instantiate_plan(store, "inherits", spawned_by_decision_id=spawn, principal=LOCAL)
    same, _ = instantiate_plan(store, "names it", spawned_by_decision_id=spawn, project="alpha", principal=LOCAL)
    with pytest.raises(ValidationFailed, match="parent plan's project") as refused:
        instantiate_plan(store, "elsewhere", spawned_by_decision_id=spawn, project="beta", principal=LOCAL)

    assert (
        reading.get_plan(store, child.plan_id, LOCAL).project == reading.get_plan(store, same.plan_id, LOCAL).project == "alpha"
    )
    assert refused.value.field == "project"


def test_tokens_are_stored_hashed_with_their_project(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"

    token = issue_token(path, "ci", Role.ACTOR, project="alpha")
    unscoped = issue_token(path, "ops", Role.ADMIN)

    text = path.read_text()
    assert token not in text and unscoped not in text
    assert json.loads(text) == [
        {"name": "ci", "role": "actor", "sha256": token_hash(token), "project": "alpha"},
        {"name": "ops", "role": "admin", "sha256": token_hash(unscoped)},
    ]
    registry = TokenRegistry.load(path)
    assert registry.authenticate(token) == access.Principal("ci", Role.ACTOR, "alpha")
    assert registry.authenticate(unscoped) == access.Principal("ops", Role.ADMIN, None)
    with pytest.raises(ValidationFailed, match="project"):
        TokenRegistry.parse('[{"name": "x", "role": "actor", "sha256": "00", "project": ""}]', "DECISIONTRAIL_TOKENS")


def test_presented_tokens_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    issued = [issue_token(path, f"t{i}", Role.ANALYST) for i in range(3)]
    registry = TokenRegistry.load(path)
    compared: list[tuple[str, str]] = []
    compare_digest = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return compare_digest(a, b)

    monkeypatch.setattr(access.hmac, "compare_digest", spy)
    principal = registry.authenticate(issued[0])

    assert principal is not None and principal.name == "t0"
    # Every stored hash is compared, through hmac.compare_digest, even after the first matches.
    assert compared == [(token_hash(issued[0]), token_hash(t)) for t in issued]


def test_the_token_command_takes_a_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from decisiontrail.cli import main

    path = tmp_path / "tokens.json"

    assert main(["token", "--name", "ci", "--role", "actor", "--project", "alpha", "--file", str(path)]) == 0

    token = capsys.readouterr().out.strip()
    principal = TokenRegistry.load(path).authenticate(token)
    assert principal is not None and principal.project == "alpha"


CORRECT_AND_TELL = """
mutation($id: ID!) {
  correctDecision(input: {decisionId: $id, mode: REVERT, guidance: "narrower"}) {
    invalidated { id }
    replayFrontier { planId }
    attempt { invalidatedDecisionCount invalidatedPlanCount countsByType { decisionType count } }
  }
}"""
HISTORY = """
query($id: ID!) {
  decision(id: $id) { corrections { invalidatedDecisionCount countsByType { decisionType count } } }
}"""


def test_a_correction_tells_a_project_token_only_of_what_it_may_see(base_url: str, store: Trail, tokens: dict[str, str]) -> None:
    import httpx

    fixture = make_fixture(store)
    # The alpha plan's decision has a dependent in project beta: correcting it invalidates both.
    alpha = {"Authorization": f"Bearer {tokens['reviewer @alpha']}"}
    admin = {"Authorization": f"Bearer {tokens['admin']}"}

    def ask(document: str, headers: dict[str, str]) -> dict[str, Any]:
        body = httpx.post(
            f"{base_url}/graphql",
            json={"query": document, "variables": {"id": fixture.ids["decision"]}},
            headers=headers,
            timeout=30,
        ).json()
        assert not body.get("errors"), body
        return dict(body["data"])

    told = ask(CORRECT_AND_TELL, alpha)["correctDecision"]

    assert [d["id"] for d in told["invalidated"]] == [fixture.ids["decision"]]
    assert [p["planId"] for p in told["replayFrontier"]] == [fixture.ids["plan"]]
    assert told["attempt"] == {
        "invalidatedDecisionCount": 1,
        "invalidatedPlanCount": 0,
        "countsByType": [{"decisionType": "STRATEGY_CHOICE", "count": 1}],
    }
    # The whole story is there for a caller that sees both projects.
    [whole] = ask(HISTORY, admin)["decision"]["corrections"]
    [seen] = ask(HISTORY, alpha)["decision"]["corrections"]
    assert whole == {"invalidatedDecisionCount": 2, "countsByType": [{"decisionType": "STRATEGY_CHOICE", "count": 2}]}
    assert seen == {"invalidatedDecisionCount": 1, "countsByType": [{"decisionType": "STRATEGY_CHOICE", "count": 1}]}


REPLAYED = """
query($id: ID!) { decision(id: $id) { corrections { attemptId replayedDecisionIds } } }"""


def test_a_replay_tells_a_project_token_only_of_the_decisions_it_may_see(
    base_url: str, store: Trail, tokens: dict[str, str]
) -> None:
    import httpx

    fixture = make_fixture(store)
    # Correcting the alpha plan's decision invalidates its dependent in project beta; the replay
    # records a decision in each plan.
    attempt = correction_service.correct(store, fixture.ids["decision"], "revert", "narrower", "matrix", principal=LOCAL).attempt
    replayed = [
        recording_service.record_decision(
            store,
            tool_input("strategy_choice", parent_decision_id=root),
            plan_id=plan,
            snapshot=actor_snapshot("replay"),
            principal=LOCAL,
        )
        for plan, root in ((fixture.ids["plan"], fixture.ids["root"]), (fixture.ids["beta"], fixture.ids["betaRoot"]))
    ]
    assert all(isinstance(d, Decision) for d in replayed)
    ids = [d.decision_id for d in replayed]
    correction_service.record_replay(store, attempt.attempt_id, ReplayOutcome.REPLAYED, decision_ids=ids, principal=LOCAL)

    def ask(token: str) -> list[Any]:
        body = httpx.post(
            f"{base_url}/graphql",
            json={"query": REPLAYED, "variables": {"id": fixture.ids["decision"]}},
            headers={"Authorization": f"Bearer {tokens[token]}"},
            timeout=30,
        ).json()
        assert not body.get("errors"), body
        return list(body["data"]["decision"]["corrections"])

    assert ask("admin") == [{"attemptId": attempt.attempt_id, "replayedDecisionIds": ids}]
    assert ask("reviewer @alpha") == [{"attemptId": attempt.attempt_id, "replayedDecisionIds": ids[:1]}]


SUBSCRIBE = "subscription($id: ID!) { decisionEvents(planId: $id) { kind decisionId } }"


def _subscription_answer(base_url: str, token: str | None, plan_id: str, wake: Any) -> dict[str, Any]:
    """Subscribe as ``token`` and return the first message after ``wake()`` records into the plan:
    an event (``next``) for a caller that may see it, an ``error`` otherwise."""
    with subscribed(base_url, SUBSCRIBE, {"id": plan_id}, token=token) as ws:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            wake()
            try:
                message: dict[str, Any] = json.loads(ws.recv(timeout=0.5))
                return message
            except TimeoutError:
                continue
    raise AssertionError("the subscription neither answered nor refused within 15 s")


@pytest.mark.parametrize(
    ("caller", "expected"),
    [
        ("admin", "next"),
        ("actor (owner)", "next"),
        ("reviewer @alpha", "next"),
        (None, "UNAUTHENTICATED"),
        ("actor (not owner)", "NOT_FOUND"),
        ("reviewer @beta", "NOT_FOUND"),
        ("actor @beta (owner's name)", "NOT_FOUND"),
    ],
)
def test_live_events_follow_the_same_access_rules(
    base_url: str, store: Trail, tokens: dict[str, str], caller: str | None, expected: str
) -> None:
    import httpx

    fixture = make_fixture(store)
    plan_id = fixture.ids["plan"]
    admin = {"Authorization": f"Bearer {tokens['admin']}"}
    woken = iter(range(1000))

    def wake() -> None:  # something happens in the plan: guidance under its root
        document = "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }"
        variables = {"input": {"planId": plan_id, "parentDecisionId": fixture.ids["root"], "guidance": f"note {next(woken)}"}}
        body = httpx.post(
            f"{base_url}/graphql", json={"query": document, "variables": variables}, headers=admin, timeout=30
        ).json()
        assert not body.get("errors"), body

    message = _subscription_answer(base_url, tokens[caller] if caller else None, plan_id, wake)

    if expected == "next":
        assert message["type"] == "next" and message["payload"]["data"]["decisionEvents"]["kind"] == "RECORDED", message
        return
    # Refused before any event: as an `error` message, or as a result with errors and no data.
    errors = message["payload"] if message["type"] == "error" else message["payload"]["errors"]
    assert message["type"] == "error" or message["payload"]["data"] is None, message
    assert errors[0]["extensions"]["code"] == expected, message
