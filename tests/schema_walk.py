"""The schema walk of tests/test_visibility_walk.py: a schema read by introspection, selections of every field,
documents within the server's limits, and the values of an answer field by field."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from graphql import Lexer, Source, TokenKind

INTROSPECTION = """
query {
  __schema {
    queryType { name }
    types { kind name fields { name type { ...Ref } args { name defaultValue type { ...Ref } } } }
  }
}
fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }
"""

MAX_PATH = 6  # object fields from a root to where a type is expanded
SITES = 6  # paths tried per type and root
TOKEN_BUDGET = 4200  # the server refuses more than 5000 tokens (api.MAX_TOKENS), counted by graphql-core's lexer
ALIAS_BUDGET = 30  # api.MAX_ALIASES

Path = tuple["Field", ...]  # object fields from a root
Recipes = dict[str, Callable[[Any], list[dict[str, Any]]]]  # Type.field -> its argument sets, from what a root is about


@dataclass(frozen=True)
class Arg:
    name: str
    ref: str  # as a variable declares it: "[ID!]!"
    required: bool  # non-null without a default


@dataclass(frozen=True)
class Field:
    owner: str
    name: str
    type: str  # the named type under lists and non-nulls
    is_object: bool
    args: tuple[Arg, ...]

    @property
    def key(self) -> str:
        return f"{self.owner}.{self.name}"


def _ref(t: dict[str, Any]) -> str:
    if t["kind"] == "NON_NULL":
        return _ref(t["ofType"]) + "!"
    if t["kind"] == "LIST":
        return f"[{_ref(t['ofType'])}]"
    return str(t["name"])


def _named(t: dict[str, Any]) -> dict[str, Any]:
    while t.get("ofType"):
        t = t["ofType"]
    return t


class Shape:
    """The object types of a schema and their fields, from its introspection (``INTROSPECTION``'s ``__schema``)."""

    def __init__(self, introspection: dict[str, Any]) -> None:
        self.query = introspection["queryType"]["name"]
        self.objects: dict[str, dict[str, Field]] = {}
        for t in introspection["types"]:
            if t["name"].startswith("__") or t["kind"] not in ("OBJECT", "INTERFACE", "UNION"):
                continue
            assert t["kind"] == "OBJECT", f"the walk selects no fragments: {t['name']} is an {t['kind']}"
            self.objects[t["name"]] = {
                f["name"]: Field(
                    t["name"],
                    f["name"],
                    _named(f["type"])["name"],
                    _named(f["type"])["kind"] not in ("SCALAR", "ENUM"),
                    tuple(
                        Arg(a["name"], _ref(a["type"]), a["type"]["kind"] == "NON_NULL" and a["defaultValue"] is None)
                        for a in f["args"]
                    ),
                )
                for f in t["fields"]
            }

    def reachable(self) -> set[str]:
        """The object types Query leads to, Query included."""
        seen, todo = {self.query}, [self.query]
        while todo:
            for f in self.objects[todo.pop()].values():
                if f.is_object and f.type not in seen:
                    seen.add(f.type)
                    todo.append(f.type)
        return seen

    def walked_fields(self) -> list[str]:
        """Every field of Query and of the object types it leads to."""
        return sorted(f.key for t in self.reachable() for f in self.objects[t].values())

    def sites(self, root: Field) -> dict[str, list[Path]]:
        """For each object type below ``root``, the first ``SITES`` paths reaching it (breadth first, no type twice)."""
        found: dict[str, list[Path]] = {root.type: [()]}
        frontier: list[tuple[Path, tuple[str, ...]]] = [((), (root.type,))]
        for _ in range(MAX_PATH):
            following = []
            for path, types in frontier:
                for f in self.objects[types[-1]].values():
                    if not f.is_object or f.type in types:
                        continue
                    paths = found.setdefault(f.type, [])
                    if len(paths) < SITES:
                        paths.append((*path, f))
                        following.append(((*path, f), (*types, f.type)))
            frontier = following
        return found


class MissingRecipe(AssertionError):
    pass


def argument_sets(recipes: Recipes, f: Field, about: Any) -> list[dict[str, Any]]:
    """The argument sets ``f`` is selected with: its recipe's, or none (refused when an argument is required)."""
    recipe = recipes.get(f.key)
    if recipe is not None:
        return recipe(about)
    if any(a.required for a in f.args):
        raise MissingRecipe(f"no argument recipe for {f.key}: add one to RECIPES")
    return [{}]


@dataclass
class Node:
    """A field selected (once per argument set, aliased after the first) and what is selected below it."""

    field: Field | None  # None: the operation
    variants: list[dict[str, Any]]
    children: dict[str, Node] = dataclasses.field(default_factory=dict)

    def aliases(self) -> Iterator[tuple[str, dict[str, Any]]]:
        assert self.field is not None
        for i, arguments in enumerate(self.variants):
            yield (self.field.name if i == 0 else f"{self.field.name}_{i}"), arguments

    def shown(self, child: Node, thin: bool) -> bool:
        """Whether ``child`` is selected: always, but for a leaf in a thin document other than the object's id
        (or, for an object without one, its ID fields)."""
        assert child.field is not None
        if not thin or child.field.is_object:
            return True
        return child.field.name == "id" if "id" in self.children else child.field.type == "ID"


class Selector:
    """Builds selections under one root, with arguments from ``recipes`` about ``about``."""

    def __init__(self, shape: Shape, recipes: Recipes, about: Any) -> None:
        self.shape = shape
        self.recipes = recipes
        self.about = about

    def node(self, f: Field, variants: list[dict[str, Any]] | None = None, *, bare: bool = False) -> Node:
        """``f`` with the scalar and enum fields of its type (only its ID fields when ``bare``)."""
        node = Node(f, variants if variants is not None else argument_sets(self.recipes, f, self.about))
        if f.is_object:
            for leaf in self.shape.objects[f.type].values():
                if not leaf.is_object and (not bare or leaf.type == "ID"):
                    node.children[leaf.name] = Node(leaf, argument_sets(self.recipes, leaf, self.about))
        return node

    def tree(self, root: Field, arguments: dict[str, Any], paths: list[Path], *, expand: bool) -> Node:
        """``root`` and every path below it: with ``expand``, every field of each path's last type (each object
        field with its own leaves) and every leaf on the way; else (a probe) only the paths and ids."""
        tree = Node(None, [{}], {root.name: self.node(root, [arguments], bare=not expand)})
        for path in paths:
            node = tree.children[root.name]
            for step in path:
                if step.name not in node.children:
                    node.children[step.name] = self.node(step, bare=not expand)
                node = node.children[step.name]
            if expand:
                assert node.field is not None
                for f in self.shape.objects[node.field.type].values():
                    node.children.setdefault(f.name, self.node(f))
        return tree


def render(tree: Node, *, thin: bool = False) -> tuple[str, dict[str, Any]]:
    """The document and its variables (every argument a variable, declared with the argument's type); a
    ``thin`` document selects no leaf but ids."""
    declared: list[str] = []
    variables: dict[str, Any] = {}

    def selection(node: Node) -> str:
        parts = ["__typename"] if node.field is not None else []
        for child in node.children.values():
            assert child.field is not None
            if not node.shown(child, thin):
                continue
            for alias, arguments in child.aliases():
                text = alias if alias == child.field.name else f"{alias}: {child.field.name}"
                if arguments:
                    refs = {a.name: a.ref for a in child.field.args}
                    names = []
                    for name, value in arguments.items():
                        variable = f"v{len(variables)}"
                        variables[variable] = value
                        declared.append(f"${variable}: {refs[name]}")
                        names.append(f"{name}: ${variable}")
                    text += f"({', '.join(names)})"
                if child.field.is_object:
                    text += " { " + selection(child) + " }"
                parts.append(text)
        return " ".join(parts)

    body = selection(tree)
    head = f"query({', '.join(declared)})" if declared else "query"
    return f"{head} {{ {body} }}", variables


def within_limits(document: str) -> bool:
    lexer, count = Lexer(Source(document)), 0
    while lexer.advance().kind is not TokenKind.EOF:
        count += 1
    return count <= TOKEN_BUDGET and len(re.findall(r"\b\w+_\d+: ", document)) <= ALIAS_BUDGET


def packed(selector: Selector, root: Field, arguments: dict[str, Any], paths: list[Path], *, expand: bool) -> list[Node]:
    """The paths in as few trees as the server's limits allow: all in one, or halves of them apart."""
    tree = selector.tree(root, arguments, paths, expand=expand)
    if len(paths) > 1 and not within_limits(render(tree)[0]):
        half = len(paths) // 2
        return [
            *packed(selector, root, arguments, paths[:half], expand=expand),
            *packed(selector, root, arguments, paths[half:], expand=expand),
        ]
    return [tree]


def objects_at(value: Any, keys: list[str]) -> list[dict[str, Any]]:
    """The objects an answer holds at a path of response keys (lists flattened, nulls left out)."""
    current = [value]
    for key in keys:
        following: list[Any] = []
        for v in current:
            found = v.get(key) if isinstance(v, dict) else None
            following.extend(found if isinstance(found, list) else [found])
        current = [v for v in following if v is not None]
    return [v for v in current if isinstance(v, dict)]


@dataclass(frozen=True)
class Leaf:
    key: str  # Type.field of the value
    value: Any
    chain: tuple[tuple[str, dict[str, Any]], ...]  # (object field, object) from the root down to the value's object
    is_object: bool = False  # the value of an object field (whose own fields are leaves of their own)


def leaves(node: Node, value: Any, *, thin: bool = False, chain: tuple[tuple[str, dict[str, Any]], ...] = ()) -> Iterator[Leaf]:
    """Every value the answer ``value`` holds for what ``node`` selects, with where it is."""
    for child in node.children.values():
        assert child.field is not None
        if not node.shown(child, thin):
            continue
        for alias, _ in child.aliases():
            v = value.get(alias) if isinstance(value, dict) else None
            yield Leaf(child.field.key, v, chain, is_object=child.field.is_object)
            if child.field.is_object:
                for item in v if isinstance(v, list) else [v]:
                    if isinstance(item, dict):
                        yield from leaves(child, item, thin=thin, chain=(*chain, (child.field.key, item)))


def key_at(tree: Node, path: list[Any]) -> str | None:
    """The Type.field an error's path ends at."""
    node, key = tree, None
    for step in path:
        if isinstance(step, int):
            continue
        found = next((c for c in node.children.values() for alias, _ in c.aliases() if alias == step), None)
        if found is None or found.field is None:
            break
        node, key = found, found.field.key
    return key


def objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every object an answer holds, at any depth."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from objects(v)
