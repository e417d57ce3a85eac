"""docs/security.md: every setting of who may call and how often is on the page with the default the
service has, and the page's example prints what the page says it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices

from decisiontrail.settings import Environment

PAGE = Path(__file__).resolve().parent.parent / "docs" / "security.md"
PREFIXES = ("DECISIONTRAIL_TOKENS", "DECISIONTRAIL_OIDC_", "DECISIONTRAIL_RATE_")
ROW = re.compile(r"^\| `(DECISIONTRAIL_[A-Z_]+)` \| ([^|]+) \|", re.MULTILINE)


def _settings() -> dict[str, object]:
    """Each security variable the service reads, with its default."""
    found: dict[str, object] = {}
    for info in Environment.model_fields.values():
        alias = info.validation_alias
        names = [str(c) for c in alias.choices] if isinstance(alias, AliasChoices) else [str(alias)]
        found |= {name: info.default for name in names if name.startswith(PREFIXES)}
    return found


def _shown(default: object) -> str:
    if default is None:
        return "unset"
    return f"`{default:g}`" if isinstance(default, float) else f"`{default}`"


def test_every_setting_is_on_the_page_with_its_default() -> None:
    table = {name: cell.strip() for name, cell in ROW.findall(PAGE.read_text(encoding="utf-8"))}
    settings = _settings()

    assert set(table) == set(settings)
    assert {name: table[name] for name in settings} == {name: _shown(default) for name, default in settings.items()}


def test_the_claims_example_prints_what_the_page_shows(capsys: pytest.CaptureFixture[str]) -> None:
    text = PAGE.read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", text, re.DOTALL)
    assert example is not None, "the page's example and what it prints"

    exec(compile(example.group(1), str(PAGE), "exec"), {})

    assert capsys.readouterr().out == example.group(2)
