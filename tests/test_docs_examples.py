"""The docs' examples: every GraphQL example is valid against the schema the service serves, and
those below run, against a served API or the command line, and answer as their page shows.

An example names the records it works on with the placeholder ``"01M8..."``; a test running it puts
the ids of records it made in their place (``_with_ids``: ``planId: "01M8..."`` a plan's id, and so on).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import parse, validate

from decisiontrail.access import LOCAL
from decisiontrail.api import schema
from decisiontrail.cli import main
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from factories import decision as a_decision

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```graphql\n(.*?)```", re.DOTALL)
FENCED = re.compile(r"```[\w.]*\n(.*?)```", re.DOTALL)


def _examples() -> list[tuple[str, int, str]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            found.append((page.name, text[: match.start()].count("\n") + 1, match.group(1)))
    return found


EXAMPLES = _examples()


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 10, [f"{page}:{line}" for page, line, _ in EXAMPLES]


@pytest.mark.parametrize(("page", "line", "document"), EXAMPLES, ids=[f"{p}:{n}" for p, n, _ in EXAMPLES])
def test_a_docs_example_is_valid_against_the_schema(page: str, line: int, document: str) -> None:
    errors = validate(schema._schema, parse(document))
    assert not errors, f"{page}:{line}: " + "; ".join(e.message for e in errors)


def _block(page: str, holding: str) -> str:
    """The one fenced block of ``docs/<page>`` that holds ``holding``."""
    blocks = [b for b in FENCED.findall((DOCS / page).read_text(encoding="utf-8")) if holding in b]
    assert len(blocks) == 1, f"{page}: {len(blocks)} blocks hold {holding!r}"
    return str(blocks[0])


def _with_ids(document: str, **ids: str) -> str:
    """``document`` with ``<name>: "01M8..."`` made ``<name>: "<the id given for name>"``."""
    for name, value in ids.items():
        document = document.replace(f'{name}: "01M8..."', f'{name}: "{value}"')
    assert '"01M8..."' not in document, document
    return document


def _run(api: httpx.Client, document: str, operation: str | None = None) -> dict[str, Any]:
    body = api.post("/graphql", json={"query": document, "operationName": operation}).json()
    assert "errors" not in body, body
    return dict(body["data"])


# -- docs/graphql.md ---------------------------------------------------------------------------


def test_the_record_decision_example_records_the_decision_with_its_context(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    document = _block("graphql.md", "recordDecision(input:")

    recorded = _run(api, _with_ids(document, planId=plan.plan_id))["recordDecision"]

    assert recorded["review"] is None and recorded["decision"]["parent"] == {"id": root.decision_id}
    assert recorded["decision"]["context"] == "user: Add rate limiting to the public billing API"
    stored = reading.get_decision(store, recorded["decision"]["id"], principal=LOCAL)
    assert stored.chosen_option == "Token bucket in the API gateway"


def test_the_attach_then_apply_example_attaches_and_applies(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    advance_phase(store, plan.plan_id, Phase.EXECUTE, "strategy complete", by="test", principal=LOCAL)
    change = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.IMPLEMENTATION_CHOICE, strategy.decision_id), principal=LOCAL
    )
    document = _with_ids(_block("graphql.md", "mutation Attach"), decisionId=change.decision_id, planId=plan.plan_id)

    attached = _run(api, document, "Attach")["attachArtifacts"]
    applied = _run(api, document, "Apply")["advancePhase"]

    assert [a["artifactPath"] for a in attached["artifactsProduced"]] == ["reports/load-test.html"]
    assert applied["phase"] == "APPLY" and applied["phaseHistory"][-1]["reason"] == "load test passed"


# -- docs/interop.md ---------------------------------------------------------------------------


def _curl(block: str) -> tuple[Path, str, list[str]]:
    """What a ``$ curl ... /v1/traces`` session of ``block`` sends (the file, its content type) and
    the answers it shows, one a line, in order."""
    command = re.search(r"^\$ curl (.*?)\n(?!\s)", block, flags=re.MULTILINE | re.DOTALL)
    assert command is not None, block
    sent = command.group(1)
    path = re.search(r"--data-binary @(\S+)", sent)
    content_type = re.search(r"-H 'content-type: ([^']+)'", sent)
    assert path is not None and content_type is not None, sent
    answers = [line for line in block.splitlines() if line.startswith(("{", "HTTP "))]
    return ROOT / path.group(1), content_type.group(1), answers


def _post(base_url: str, path: Path, content_type: str) -> httpx.Response:
    return httpx.post(f"{base_url}/v1/traces", content=path.read_bytes(), headers={"content-type": content_type}, timeout=30)


def test_the_otlp_curl_example_answers_as_shown(base_url: str, store: Trail) -> None:
    path, content_type, answers = _curl(_block("interop.md", '{"partialSuccess"'))

    answer = _post(base_url, path, content_type)

    assert answer.status_code == 200 and [answer.json()] == [json.loads(a) for a in answers]


def test_the_otlp_curl_after_the_cli_import_is_refused_as_shown(
    base_url: str, store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    path, content_type, answers = _curl(_block("interop.md", "HTTP 409"))
    assert main(["-q", "import", "otlp", str(path)]) == 0
    capsys.readouterr()

    answer = _post(base_url, path, content_type)

    body, status = answers
    assert status == f"HTTP {answer.status_code}"
    shown, got = json.loads(body), answer.json()
    login = re.search(r"\((cli:[^)]+)\)", got["message"])
    assert login is not None, got
    assert got | {"message": got["message"].replace(login.group(1), "cli:ana")} == shown
