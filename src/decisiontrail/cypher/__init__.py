"""Every Cypher query of the project, one named ``.cypher`` file each, loaded once at import.

A query is addressed by its path without the suffix: ``query("decision/create_decisions")``.
Query text is constant; values always travel in ``$params``.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import LiteralString


def _load() -> dict[str, LiteralString]:
    queries: dict[str, LiteralString] = {}
    pending: list[tuple[str, Traversable]] = [("", files(__name__))]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name.endswith(".cypher"):
                text = entry.read_text(encoding="utf-8").strip()
                # The files are part of the package, not input: they are literal query text.
                queries[prefix + entry.name.removesuffix(".cypher")] = text  # type: ignore[assignment,unused-ignore]
    return queries


QUERIES: dict[str, LiteralString] = _load()


def query(name: str) -> LiteralString:
    """The text of the named query; KeyError names the missing file."""
    try:
        return QUERIES[name]
    except KeyError:
        raise KeyError(f"no Cypher query {name!r}: expected cypher/{name}.cypher in the package") from None


def migration_names() -> list[str]:
    """The schema migrations in the order they apply (their file names sort in that order)."""
    return sorted(name for name in QUERIES if name.startswith("migrations/"))
