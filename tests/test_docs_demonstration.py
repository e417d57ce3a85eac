"""The demonstration as the docs show it, recorded by a real ``decisiontrail demo`` process on the
test's database (README.md's "existing Neo4j" command), then read as the pages read it: its output
(README.md, docs/correction.md's worked example), ``check --all`` (docs/checks.md), the graph model
(docs/architecture.md) and the checkpoints' nodes (docs/checkpoints.md)."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass

import pytest

from decisiontrail.graphdb import Graph
import docs_examples
from docs_examples import ID, Cli, example, numbered

cli = docs_examples.cli  # the fixture: the command line on the test's database


@dataclass(frozen=True)
class Demonstration:
    printed: str
    shown: str
    """What README.md shows it prints."""


@pytest.fixture
def demonstration(cli: Cli) -> Demonstration:
    command = example(
        "README.md", "NEO4J_URI=neo4j://db.internal:7687 NEO4J_USER=neo4j NEO4J_PASSWORD=... .venv/bin/decisiontrail demo"
    )
    port = cli.graph.uri.rsplit(":", 1)[1]
    said = cli.shell(command.replace("neo4j://db.internal:7687", f"neo4j://127.0.0.1:{port}"))
    assert said.code == 0, said.err
    return Demonstration(
        said.out, example("README.md", "plan 01M91NR4XK37RC8VQCQRVB65AT: Add rate limiting to the public billing API")
    )


def test_the_demonstration_prints_what_the_readme_and_the_worked_example_show(demonstration: Demonstration) -> None:
    assert numbered(demonstration.printed).splitlines() == numbered(demonstration.shown).splitlines()

    # The worked example's blocks are the README's ids: put in the ones this run printed.
    theirs = list(dict.fromkeys(ID.findall(demonstration.shown)))
    ours = list(dict.fromkeys(ID.findall(demonstration.printed)))
    for block in (
        example(
            "docs/correction.md",
            "correction 01M91NR5YBJZ0F54SQ3DJXSX33 (user_intervention) supersedes 01M91NR5TKQ1PA723J7PSRG543, attempt 1",
        ),
        example(
            "docs/correction.md",
            "      #6 implementation_choice: In-process buckets refilled by a monotonic clock  [superseded by 01M91NR5YBJZ0F54SQ3DJXSX33]",
        ),
    ):
        assert ID.sub(lambda m: ours[theirs.index(m.group(0))], block) in demonstration.printed, block


def test_check_all_on_the_demonstration_answers_as_shown(demonstration: Demonstration, cli: Cli) -> None:
    session = example("docs/checks.md", "$ decisiontrail -q check --all")
    command, *shown = session.splitlines()

    said = cli.run(*command.split()[2:])

    assert said.code == 0 and said.out.splitlines() == shown, said


def _nodes(line: str) -> list[tuple[int, int, str]]:
    """Each ``(...)`` of a diagram's line: where it starts and ends, and its text."""
    return [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"\(([^)]*)\)", line)]


def _nearest(column: int, nodes: list[tuple[int, int, str]]) -> str:
    """The text of the node of a line nearest ``column``."""
    return min(nodes, key=lambda n: 0 if n[0] <= column < n[1] else min(abs(n[0] - column), abs(n[1] - column)))[2]


def _label(node: str, named: dict[str, str]) -> str:
    """A diagram node's label: its own (``child:Plan``), or the one its name was given before (``original``)."""
    found = re.match(r"\s*(\w*)\s*(?::(\w+))?", node)
    assert found is not None, node
    name, label = found.groups()
    if label is not None:
        named[name] = label
        return label
    return named[name]


def test_the_demonstration_has_every_relationship_of_the_graph_model(demonstration: Demonstration, graph: Graph) -> None:
    lines = example(
        "docs/architecture.md",
        " (:Plan) <-[:CHILD_OF]- (child:Plan) -[:SPAWNED_BY]-> (:Decision {decision_type: 'subplan_spawn'})",
    ).splitlines()
    named: dict[str, str] = {}
    drawn = set()
    for line in lines:  # across: (a) -[:T]-> (b) and (a) <-[:T]- (b); a name stands for what it named before
        nodes = _nodes(line)
        for (_, end, left), (start, _, right) in zip(nodes, nodes[1:], strict=False):
            arrow = re.fullmatch(r"\s*(,?)\s*(<?)-\[:(\w+)[^\]]*\]->?\s*", line[end:start])
            if arrow is None:
                continue
            again, pointing_left, kind = arrow.groups()  # ", -[:T]->": the line's first node's again
            a, b = _label(nodes[0][2] if again else left, named), _label(right, named)
            drawn.add((b, kind, a) if pointing_left else (a, kind, b))
    for row, line in enumerate(lines):  # up: the node below a "| T" points at the one above its "^"
        for column, kind in ((m.start(), m.group(1)) for m in re.finditer(r"\| (\w+)", line)):
            above = _nearest(column, next(_nodes(lines[r]) for r in range(row, -1, -1) if _nodes(lines[r])))
            below = _nearest(column, next(_nodes(lines[r]) for r in range(row, len(lines)) if _nodes(lines[r])))
            drawn.add((_label(below, named), kind, _label(above, named)))
    assert {kind for _, kind, _ in drawn} == {a or b for a, b in re.findall(r"\[:(\w+)|\| (\w+)", "\n".join(lines))}

    missing = []
    for start, kind, end in sorted(drawn):
        records, _, _ = graph.driver.execute_query(
            f"MATCH (:{start})-[:{kind}]->(:{end}) RETURN count(*) AS n", database_=graph.database
        )
        if records[0]["n"] == 0:
            missing.append((start, kind, end))
    assert not missing, missing


def test_the_checkpoints_are_stored_as_their_page_shows(demonstration: Demonstration, graph: Graph, cli: Cli) -> None:
    shape = example(
        "docs/checkpoints.md",
        "(:Checkpoint {thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, plan_id})",
    )
    drawn = {label: set(keys.split(", ")) for label, keys in re.findall(r"\(:(\w+) \{([^}]*)\}\)", shape)}
    assert set(drawn) == {"Checkpoint", "CheckpointBlob", "CheckpointWrite"}

    for label, keys in drawn.items():
        records, _, _ = graph.driver.execute_query(
            f"MATCH (n:{label}) UNWIND keys(n) AS key RETURN collect(DISTINCT key) AS keys, count(DISTINCT n) AS n",
            database_=graph.database,
        )
        assert records[0]["n"] > 0 and set(records[0]["keys"]) == keys, (label, records[0]["keys"])
    (holds,) = re.findall(r"-\[:(\w+)\]->", shape)
    records, _, _ = graph.driver.execute_query(
        f"MATCH (:Checkpoint)-[:{holds}]->(:CheckpointBlob) RETURN count(*) AS n", database_=graph.database
    )
    assert records[0]["n"] > 0

    # "they are in every dump and restore"
    assert cli.run("-q", "dump", "trail.dump.gz").code == 0
    with gzip.open(cli.cwd / "trail.dump.gz", "rt", encoding="utf-8") as dump:
        header = json.loads(dump.readline())
    assert all(header["counts"]["nodes"].get(label) for label in drawn), header["counts"]
