"""Every Cypher query of the project, one named ``.cypher`` file each, loaded once at import.

A query is addressed by its path without the suffix: ``query("decision/create_decisions")``.
Query text is constant; values always travel in ``$params``.

Cypher that more than one statement runs is written once, as a fragment: a file whose name
starts with ``_`` (``decision/_create_placed_decisions.cypher``), never run on its own. A
statement composes it by a line of its own, ``// include: decision/_create_placed_decisions``,
which loading replaces with the fragment's text, indented as the line is (inside a subquery, say).
A fragment may include another; an unknown name or an include that comes back to itself fails the
import, naming the files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import LiteralString

INCLUDE = re.compile(r"^(?P<indent>[ \t]*)// include: (?P<name>\S+)[ \t]*$", re.MULTILINE)
"""A line that composes a fragment into the statement where it stands."""


def is_fragment(name: str) -> bool:
    """Whether ``name`` is a fragment (composed into statements) rather than a statement."""
    return name.rsplit("/", 1)[-1].startswith("_")


def compose(sources: Mapping[str, str]) -> dict[str, str]:
    """The statements of ``sources`` (name: text as written), each with its includes replaced by
    the fragments they name; the fragments themselves are not among them.

    >>> sources = {"a/run": "MATCH (n)\\nCALL (n) {\\n  // include: a/_body\\n}\\nRETURN n", "a/_body": "SET n.x = 1\\nSET n.y = 2"}
    >>> print(compose(sources)["a/run"])
    MATCH (n)
    CALL (n) {
      SET n.x = 1
      SET n.y = 2
    }
    RETURN n
    >>> sorted(compose(sources))
    ['a/run']
    """
    composed: dict[str, str] = {}

    def text_of(name: str, including: tuple[str, ...]) -> str:
        if name in including:
            raise ValueError(f"Cypher fragment cypher/{name}.cypher includes itself: {' -> '.join((*including, name))}")
        if name not in sources:
            raise KeyError(f"cypher/{including[-1]}.cypher includes {name!r}: expected cypher/{name}.cypher in the package")
        if including and not is_fragment(name):
            raise ValueError(
                f"cypher/{including[-1]}.cypher includes the statement {name!r}: only a fragment (_name) is included"
            )

        def expand(line: re.Match[str]) -> str:
            indent = line["indent"]
            included = text_of(line["name"], (*including, name))
            return "\n".join(indent + part if part else part for part in included.splitlines())

        return INCLUDE.sub(expand, sources[name])

    for name in sources:
        if not is_fragment(name):
            composed[name] = text_of(name, ())
        else:
            text_of(name, ())  # an unused fragment's own includes are checked too
    return composed


def _read() -> dict[str, str]:
    sources: dict[str, str] = {}
    pending: list[tuple[str, Traversable]] = [("", files(__name__))]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name.endswith(".cypher"):
                sources[prefix + entry.name.removesuffix(".cypher")] = entry.read_text(encoding="utf-8").strip()
    return sources


SOURCES: dict[str, str] = _read()
"""Every file as written, fragments included (by name, without the suffix)."""

# The files are part of the package, not input: what they compose is literal query text.
QUERIES: dict[str, LiteralString] = compose(SOURCES)  # type: ignore[assignment,unused-ignore]


def query(name: str) -> LiteralString:
    """The text of the named query, its fragments composed in; KeyError names the missing file."""
    try:
        return QUERIES[name]
    except KeyError:
        raise KeyError(f"no Cypher query {name!r}: expected cypher/{name}.cypher in the package") from None


def migration_names() -> list[str]:
    """The schema migrations in the order they apply (their file names sort in that order)."""
    return sorted(name for name in QUERIES if name.startswith("migrations/"))
