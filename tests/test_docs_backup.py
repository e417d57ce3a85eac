"""docs/backup.md's examples, run: the dump and restore commands on the test's server, and a dump's
lines against the page's."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

from decisiontrail.access import LOCAL
from decisiontrail.domain import DecisionType
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.admin import count_graph, delete_all_data
from decisiontrail.services import Trail
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import instantiate_plan
import docs_examples
from docs_examples import Cli, example
from factories import decision as a_decision

PAGE = "docs/backup.md"

cli = docs_examples.cli  # the fixture: the command line on the test's database


def _some_history(store: Trail) -> None:
    """A plan with a dependency and a correction."""
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    first = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    second = recording_service.record(
        store,
        a_decision(plan.plan_id, DecisionType.RESOURCE_SELECTION, first.decision_id, depends_on=(root.decision_id,)),
        principal=LOCAL,
    )
    correct(store, second.decision_id, "revert", "Another resource", principal=LOCAL)


def test_the_dump_and_restore_commands_move_the_store_whole(cli: Cli, store: Trail, graph: Graph) -> None:
    _some_history(store)
    before = count_graph(graph)
    port = graph.uri.rsplit(":", 1)[1]
    lines = [
        line.replace("/srv/decisiontrail-new", str(cli.cwd / "new"))
        .replace("db.internal:7687", f"127.0.0.1:{port}")
        .replace("db-new.internal:7687", f"127.0.0.1:{port}")
        for line in example(PAGE, "# embedded: dump this machine's store, restore it into a fresh data directory").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert [re.search(r"decisiontrail (dump|restore)", line).group(1) for line in lines] == ["dump", "restore"] * 2  # type: ignore[union-attr]

    for line in lines:  # one database stands for each of the page's: emptied before each restore
        if " restore " in line:
            delete_all_data(graph)
            assert count_graph(graph).nodes == 0
        said = cli.shell(line)
        assert said.code == 0, said.err
        assert count_graph(graph) == before


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_a_dump_holds_the_lines_the_page_shows(cli: Cli, store: Trail) -> None:
    _some_history(store)
    assert cli.run("-q", "dump", "trail.dump.gz").code == 0
    records = [json.loads(line) for line in gzip.open(cli.cwd / "trail.dump.gz", "rt", encoding="utf-8")]
    shown = example(PAGE, '{"format": "decisiontrail-dump", "version": 1, "created_at": "2026-12-01T03:43:42.148997+00:00",')
    shown_records = [r for r in re.sub(r"\n (?=\")", " ", shown).splitlines() if r.startswith("{")]  # the header unwrapped

    header, end = records[0], records[-1]
    assert (header["format"], header["version"]) == ("decisiontrail-dump", 1)
    assert header["migrations"][0] == "0001_decision_id_unique"
    assert end == {
        "end": {"nodes": len([r for r in records if "node" in r]), "relationships": len([r for r in records if "rel" in r])}
    }
    for line in shown_records:
        kind = re.match(r'\{"(\w+)"', line).group(1)  # type: ignore[union-attr]
        named = set(re.findall(r'"(\w+|\$)":', line))
        # the dump has a line of the same kind naming every key the page's line names (and, for a
        # decision, its creation time tagged as the page tags it)
        alike = [r for r in records if next(iter(r)) == kind and named <= _keys(r)]
        assert alike, line
        if kind == "node":
            decision = next(r for r in alike if r["labels"] == ["Decision"])
            assert decision["properties"]["created_at"]["$"] == "datetime"
        if kind == "rel":
            assert any(r["rel"] == "DEPENDS_ON" and r["properties"] == {"ordinal": 0} for r in alike)
