"""The docs' examples: every GraphQL example is valid against the schema the service serves, every
fence of the pages in ``PAGES`` is run by a test of a tests/test_docs_*.py module or marked not run
on its page, with the reason (graphql.md's run in tests/test_docs_graphql.py).

An example names the records it works on with the placeholder ``"01M8..."``; a test running it puts
the ids of records it made in their place (``with_ids``: ``planId: "01M8..."`` a plan's id, and so on).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from graphql import parse, validate

from decisiontrail.api import schema
import docs_examples
from docs_examples import DOCS, PAGES, fences

TESTS = Path(__file__).resolve().parent
BLOCK = re.compile(r"```graphql\n(.*?)```", re.DOTALL)


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


def test_every_page_of_the_docs_is_one_whose_fences_are_run_or_marked() -> None:
    """A new page joins the rule when it is written, not when someone remembers it."""
    assert set(PAGES) == {"README.md"} | {f"docs/{page.name}" for page in DOCS.glob("*.md")}
