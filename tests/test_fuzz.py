"""The quick part of the fuzzing (reliability/fuzz.py): the API over real HTTP against the session's Neo4j."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph
from decisiontrail.services import Trail
from reliability import fuzz
from reliability.fuzz import CYPHER_LOOKALIKES, Probe, Session, classify
from reliability.outcome import Outcome
from reliability.serving import served


@pytest.fixture
def base_url(store: Trail, graph: Graph) -> Iterator[str]:
    with served(create_app(graph=graph)) as url:
        yield url


@pytest.fixture
def session(base_url: str, store: Trail) -> Iterator[Session]:
    client = Session(base_url, Outcome("test", "one test's requests"), token=None, progress=lambda _: None)
    try:
        yield client
    finally:
        client.close()


# The service runs in this process, and its plan runtime's threads take from `random` (LangGraph's
# checkpoint ids) while Hypothesis draws the next probe here; Hypothesis cannot tell that from a
# strategy of ours using `random`. Its own draws come from its own seed either way.
@pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies:hypothesis.errors.HypothesisDeprecationWarning"
)
def test_fuzzing_breaks_no_guarantee(base_url: str, graph: Graph, store: Trail, pytestconfig: pytest.Config) -> None:
    # Other documents each run: the run's Hypothesis seed (`make test` gives one), else a fresh one.
    given = pytestconfig.getoption("hypothesis_seed")
    seed = int(given) if given is not None else secrets.randbits(32)
    print(f"fuzzing with seed {seed} (--hypothesis-seed={seed} repeats it)")

    outcome = fuzz.run(base_url, graph, examples=120, seed=seed)

    assert outcome.passed, "\n".join(outcome.failures)
    figures = outcome.figures
    assert figures["unmasked"] == figures["violations"] == 0
    assert sum(n for kind, n in figures["documents_by_kind"].items() if kind != "setup") >= 120
    # The fuzzing reached the store, not only GraphQL's validation.
    assert figures["mutations_written_by_kind"].get("hand-made", 0) > 0
    assert outcome.errors_by_code.get("GRAPHQL_VALIDATION_FAILED", 0) > 0
    assert figures["documents_by_kind"].get("subscription", 0) > 0  # decisionEvents over WebSocket too


def test_cypher_looking_text_is_stored_and_read_back_verbatim(session: Session, graph: Graph) -> None:
    before = count_graph(graph).nodes

    matched = fuzz.cypher_round_trip(session, graph)

    assert session.outcome.failures == []
    assert matched == 9 * len(CYPHER_LOOKALIKES)  # nine fields of each plan, decision and correction
    assert count_graph(graph).nodes > before


def _record(plan_id: str, **odd: Any) -> dict[str, Any]:
    fields = {
        "planId": plan_id,
        "decisionType": "STRATEGY_CHOICE",
        "question": "q",
        "chosenOption": "o",
        "rationale": "r",
        "contextSnapshot": fuzz.snapshot("context", own=False),
    }
    return {"input": {**fields, **odd}}


OWN_REF_WITHOUT_CONTEXT = {
    "contextSnapshot": {
        "hotContextHash": hashlib.sha256(b"c").hexdigest(),
        "hotContextRef": f"decisiontrail:context/{hashlib.sha256(b'c').hexdigest()}",
        "actorStateRef": {"threadId": "t", "checkpointId": "c"},
    }
}


@pytest.mark.parametrize(
    ("probe", "code"),
    [
        (Probe("hand-made", b"null"), "BAD_REQUEST"),
        (Probe("hand-made", b"5"), "BAD_REQUEST"),
        (
            Probe(
                "hand-made",
                b'{"query": "{ plans { totalCount } }", "variables": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
            ),
            "BAD_REQUEST",
        ),
        (Probe("hand-made", b"{"), "BAD_REQUEST"),
        (
            Probe(
                "hand-made", fuzz._json({"query": "{ plans { totalCount } }", "variables": {"a": "x" * 2_000_000}}), chunked=True
            ),
            "PAYLOAD_TOO_LARGE",
        ),
        (
            Probe(
                "hand-made",
                b"",
                method="GET",
                content_type="",
                query="query=mutation%7BadvancePhase(planId%3A%22x%22%2Cphase%3AAPPLY)%7Bid%7D%7D",
            ),
            "BAD_REQUEST",
        ),
        (Probe("hand-made", b"", method="PUT"), "METHOD_NOT_ALLOWED"),
        (Probe("hand-made", b"\xff\xfe\x00"), "BAD_REQUEST"),
        ({"question": "\ud800"}, "BAD_REQUEST"),
        ({"idempotencyKey": "k" * 100_000}, "VALIDATION_FAILED"),
        (OWN_REF_WITHOUT_CONTEXT, "VALIDATION_FAILED"),
    ],
    ids=[
        "null",
        "number",
        "deep-json",
        "not-json",
        "chunked-2MB",
        "mutation-over-get",
        "put",
        "utf-16-garbage",
        "lone-surrogate",
        "huge-idempotency-key",
        "own-ref-without-context",
    ],
)
def test_what_fuzzing_found_is_answered_with_a_client_code(session: Session, graph: Graph, probe: Any, code: str) -> None:
    if isinstance(probe, dict):  # a recording into a real plan, odd in these fields
        plan = session.ok(fuzz.INSTANTIATE, {"input": {"description": "p"}})["instantiatePlan"]["id"]
        probe = Probe.graphql("hand-made", fuzz.RECORD, _record(plan, **probe))
    before = count_graph(graph)

    verdict = session.send(probe)

    assert verdict.problems == ()
    assert verdict.codes == (code,)
    assert count_graph(graph) == before


def test_a_time_without_offset_is_read_as_utc(session: Session) -> None:
    plan = session.ok(fuzz.INSTANTIATE, {"input": {"description": "p"}})["instantiatePlan"]["id"]
    query = "query($id: ID!, $at: DateTime) { plan(id: $id) { tree(asOf: $at) { depth } decisions(filter: {createdTo: $at}) { totalCount } } }"

    verdict = session.send(Probe.graphql("hand-made", query, {"id": plan, "at": "2999-01-01T00:00:00"}))

    assert verdict.codes == () and verdict.problems == ()
    assert verdict.data["plan"]["tree"] == [{"depth": 0}]
    assert verdict.data["plan"]["decisions"]["totalCount"] == 1


@pytest.mark.parametrize(
    ("status", "body", "echo", "broken"),
    [
        (500, "Internal Server Error", "", True),
        (502, json.dumps({"data": None}), "", True),
        (400, "Unable to parse request body as JSON", "", True),
        (200, json.dumps([1, 2]), "", True),
        (200, json.dumps({"errors": [{"message": 'Traceback (most recent call last):\n  File "x.py"'}]}), "", True),
        (
            200,
            json.dumps({"errors": [{"message": "{neo4j_code: Neo.ClientError.Statement.SyntaxError}", "path": ["plan"]}]}),
            "",
            True,
        ),
        (
            200,
            json.dumps(
                {"errors": [{"message": "'NoneType' object is not subscriptable", "extensions": {"code": "VALIDATION_FAILED"}}]}
            ),
            "",
            True,
        ),
        (200, json.dumps({"errors": [{"message": "plan lost", "path": ["plan"]}]}), "", True),
        (200, json.dumps({"errors": [{"message": "nope", "extensions": {"code": "INTERNAL_SERVER_ERROR"}}]}), "", True),
        (200, json.dumps({"errors": [{"nomessage": 1}]}), "", True),
        (200, json.dumps({"data": {"plan": None}}), "", False),
        # Masked from the client as it should be, but a bug all the same: the run fails on it.
        (200, json.dumps({"data": None, "errors": [{"message": "Unexpected error.", "path": ["plan"]}]}), "", True),
        (
            200,
            json.dumps(
                {"errors": [{"message": "Cannot query field 'x' on type 'Query'.", "locations": [{"line": 1, "column": 3}]}]}
            ),
            "",
            False,
        ),
        (
            200,
            json.dumps(
                {"errors": [{"message": "decision '}) MATCH (n) RETURN n does not exist", "extensions": {"code": "NOT_FOUND"}}]}
            ),
            "'}) MATCH (n) RETURN n",
            False,
        ),
        (413, json.dumps({"errors": [{"message": "too big", "extensions": {"code": "PAYLOAD_TOO_LARGE"}}]}), "", False),
    ],
    ids=[
        "500",
        "502-json",
        "plain-text-400",
        "not-a-result",
        "traceback",
        "neo4j-error",
        "leak-behind-a-code",
        "no-code-at-a-path",
        "unknown-code",
        "no-message",
        "data",
        "masked",
        "graphql-validation",
        "input-echoed",
        "413",
    ],
)
def test_the_classifier_fails_broken_answers_and_passes_good_ones(status: int, body: str, echo: str, broken: bool) -> None:
    verdict = classify(status, body, echo=echo)

    assert bool(verdict.problems) is broken, verdict
