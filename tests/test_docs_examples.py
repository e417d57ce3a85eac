"""The docs' examples: every GraphQL example is valid against the schema the service serves, every
fence of the pages in ``PAGES`` is run by a test of a tests/test_docs_*.py module or marked not run
on its page, with the reason; and the graphql.md examples below run against a served API.

An example names the records it works on with the placeholder ``"01M8..."``; a test running it puts
the ids of records it made in their place (``with_ids``: ``planId: "01M8..."`` a plan's id, and so on).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx
import pytest
from graphql import parse, validate

from decisiontrail.access import LOCAL
from decisiontrail.api import schema
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
import docs_examples
from docs_examples import DOCS, PAGES, fences, run_graphql, with_ids
from factories import decision as a_decision

TESTS = Path(__file__).resolve().parent
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


def _asked_for() -> set[tuple[str, str]]:
    """Every ``example(page, first_line)`` a docs test module asks for, each given as a literal or
    a module constant (``PAGE = "docs/actors.md"``)."""
    asked = set()
    for module in sorted(TESTS.glob("test_docs_*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "example":
                page, first = (
                    arg.value if isinstance(arg, ast.Constant) else constants.get(arg.id) if isinstance(arg, ast.Name) else None
                    for arg in node.args
                )
                assert isinstance(page, str) and isinstance(first, str), f"{module.name}:{node.lineno}: name the fence literally"
                asked.add((page, first))
    return asked


def test_every_fence_of_the_covered_pages_is_run_or_marked_not_run() -> None:
    asked = _asked_for()
    found = {(f.page, f.anchor): f for page in PAGES for f in fences(page)}
    for page in PAGES:
        anchors = [f.anchor for f in fences(page)]
        assert len(anchors) == len(set(anchors)), f"{page}: two fences begin alike; give one another first line"

    neither = [f"{f.page}:{f.line} {f.anchor!r}" for key, f in found.items() if key not in asked and f.not_run is None]
    assert not neither, "fences no test runs and no `<!-- not run: why -->` marks:\n" + "\n".join(neither)
    both = [f"{f.page}:{f.line}" for key, f in found.items() if key in asked and f.not_run is not None]
    assert not both, f"marked not run, yet run: {both}"
    gone = sorted(key for key in asked if key[0] in PAGES and key not in found)
    assert not gone, f"tests run fences their pages no longer hold (first line edited?): {gone}"


def test_the_fence_check_sees_an_unmarked_fence_and_a_mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "page.md").write_text("a\n\n<!-- not run: a diagram -->\n```\nx -> y\n```\n\n```sh\nls\n```\n", encoding="utf-8")
    monkeypatch.setattr(docs_examples, "ROOT", tmp_path)

    found = fences("page.md")

    assert [(f.line, f.language, f.anchor, f.not_run) for f in found] == [(4, "", "x -> y", "a diagram"), (8, "sh", "ls", None)]


# -- docs/graphql.md (not yet in PAGES: run here as before) ----------------------------------------


def _block(page: str, holding: str) -> str:
    """The one fenced block of ``docs/<page>`` that holds ``holding``."""
    blocks = [b for b in FENCED.findall((DOCS / page).read_text(encoding="utf-8")) if holding in b]
    assert len(blocks) == 1, f"{page}: {len(blocks)} blocks hold {holding!r}"
    return str(blocks[0])


def test_the_record_decision_example_records_the_decision_with_its_context(api: httpx.Client, store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    document = _block("graphql.md", "recordDecision(input:")

    recorded = run_graphql(api, with_ids(document, planId=plan.plan_id))["recordDecision"]

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
    document = with_ids(_block("graphql.md", "mutation Attach"), decisionId=change.decision_id, planId=plan.plan_id)

    attached = run_graphql(api, document, "Attach")["attachArtifacts"]
    applied = run_graphql(api, document, "Apply")["advancePhase"]

    assert [a["artifactPath"] for a in attached["artifactsProduced"]] == ["reports/load-test.html"]
    assert applied["phase"] == "APPLY" and applied["phaseHistory"][-1]["reason"] == "load test passed"
