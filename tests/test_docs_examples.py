"""Every GraphQL example in the docs is valid against the schema the service serves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import parse, validate

from decisiontrail.api import schema

DOCS = Path(__file__).resolve().parent.parent / "docs"
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
