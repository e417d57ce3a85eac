"""Backups: `dump` and `restore` of the whole store, compared record for record with plain Cypher readings."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from decisiontrail import otlp
from decisiontrail.actors.demonstration import record_demonstration
from decisiontrail.checks import run_checks
from decisiontrail.cli import main
from decisiontrail.domain import AutomationProfile, DecisionType, Phase
from decisiontrail.domain.invariants import Invariant, Scope
from decisiontrail.domain.recording import Review, ReviewStatus
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.exceptions import Conflict, ValidationFailed
from decisiontrail.graphdb import Graph, outbox
from decisiontrail.graphdb.admin import delete_all_data, schema_names
from decisiontrail.graphdb.loading import load_graph
from decisiontrail.services import Trail, backup, reading
from decisiontrail.services.correction import correct
from decisiontrail.services.relay import number_pending, read_numbered
from decisiontrail.services.importing import import_spans
from decisiontrail.services.invariants import set_invariants
from decisiontrail.services.lifecycle import add_guidance, instantiate_plan
from decisiontrail.services.recording import record_decision
from decisiontrail.services.checkpoints import checkpointer
from decisiontrail.access import LOCAL
from factories import actor_snapshot, new_plan, tool_input
from test_interop_otlp import AGENT_SPAN, DECISION_SPAN, _json_span, _otlp_json

# -- an independent reading: every data node and relationship, as plain Cypher returns them ----------

PROPERTIES = (
    "[k IN keys({v}) | [k, valueType({v}[k]), {v}[k], "
    "CASE WHEN valueType({v}[k]) STARTS WITH 'LIST' THEN null ELSE toString({v}[k]) END]]"
)
NODES = f"MATCH (n) WHERE NOT n:SchemaMigration RETURN labels(n) AS labels, {PROPERTIES.format(v='n')} AS properties"
RELATIONSHIPS = (
    "MATCH (a)-[r]->(b) WHERE NOT a:SchemaMigration AND NOT b:SchemaMigration "
    f"RETURN type(r) AS type, labels(a) AS a_labels, {PROPERTIES.format(v='a')} AS a, "
    f"labels(b) AS b_labels, {PROPERTIES.format(v='b')} AS b, {PROPERTIES.format(v='r')} AS properties"
)


def _canonical_properties(rows: list[list[Any]]) -> tuple[tuple[str, str, str, str, str | None], ...]:
    # Each value by Neo4j's own type name, its text in Cypher (a zone id shows as [Europe/Paris], an
    # offset as +05:30) and the driver's value with its Python type: equal only if exactly the same.
    return tuple(sorted((key, kind, type(value).__name__, repr(value), text) for key, kind, value, text in rows))


def _node_form(labels: list[str], properties: list[list[Any]]) -> tuple[Any, ...]:
    return (tuple(sorted(labels)), _canonical_properties(properties))


def canonical(graph: Graph) -> tuple[Counter[Any], Counter[Any]]:
    """Every node (labels, properties) and relationship (type, both ends whole, properties), as multisets."""
    nodes, _, _ = graph.driver.execute_query(NODES, database_=graph.database)
    relationships, _, _ = graph.driver.execute_query(RELATIONSHIPS, database_=graph.database)
    return (
        Counter(_node_form(r["labels"], r["properties"]) for r in nodes),
        Counter(
            (
                r["type"],
                _node_form(r["a_labels"], r["a"]),
                _node_form(r["b_labels"], r["b"]),
                _canonical_properties(r["properties"]),
            )
            for r in relationships
        ),
    )


def labels_in(graph: Graph) -> set[str]:
    records, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE NOT n:SchemaMigration UNWIND labels(n) AS label RETURN DISTINCT label", database_=graph.database
    )
    return {r["label"] for r in records}


def count_nodes(graph: Graph) -> int:
    records, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE NOT n:SchemaMigration RETURN count(n) AS n", database_=graph.database
    )
    return int(records[0]["n"])


def empty(graph: Graph) -> bool:
    nodes, relationships = canonical(graph)
    return not nodes and not relationships


def no_restore_leftovers(graph: Graph) -> bool:
    constraints, indexes = schema_names(graph)
    return "restore_dump_id" not in constraints | indexes


# -- a realistic store -------------------------------------------------------------------------------


def record_store(store: Trail) -> dict[str, str]:
    """The demonstration (two plans, a resolved review, checkpoint groups, a correction and its replay),
    a pending review, invariant sets, an imported OTLP trace and a span still waiting for its root;
    the demonstration's events numbered, those after it pending."""
    demo = record_demonstration(store, checkpointer(store))
    assert number_pending(store.database) > 0
    set_invariants(store, Scope.GLOBAL, None, [Invariant(name="no-pii", statement="Never log personal data")], principal=LOCAL)
    gated, _ = instantiate_plan(
        store, "Gate everything", {"ticket": 7}, automation_profile=AutomationProfile(edit_code=1.0), principal=LOCAL
    )
    review = record_decision(
        store,
        tool_input("strategy_choice", confidence_score=0.5),
        plan_id=gated.plan_id,
        snapshot=actor_snapshot(),
        principal=LOCAL,
    )
    assert isinstance(review, Review) and review.status is ReviewStatus.PENDING
    # Another trace's span, still waiting for its root.
    waiting = {**_json_span("b000000000000002", "llm", 1, "b000000000000001", openinference__span__kind="LLM")}
    waiting["traceId"] = "6b8efff798038103d269b633813fc60c"
    request = json.dumps(_otlp_json([AGENT_SPAN, DECISION_SPAN, waiting])).encode()
    assert import_spans(store, otlp.decode_lines(request), principal=LOCAL).plan_ids
    return {"root": demo.root_plan.plan_id, "child": demo.child_plan.plan_id}


def lines_of(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as text:
        return [json.loads(line) for line in text]


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.writelines(json.dumps(record) + "\n" for record in records)
    return path


# -- the round trip ----------------------------------------------------------------------------------


def test_a_restored_store_is_record_for_record_the_dumped_one_and_still_works(store: Trail, graph: Graph, tmp_path: Path) -> None:
    plans = record_store(store)
    before = canonical(graph)
    labels = labels_in(graph)
    path = tmp_path / "trail.dump.gz"

    dumped = backup.dump(store, path, progress=False, principal=LOCAL)
    delete_all_data(graph)
    assert empty(graph)
    restored = backup.restore(store, path, progress=False, principal=LOCAL)

    assert canonical(graph) == before
    # The store really was varied: every kind of record the service keeps but the ledger is in it.
    assert labels >= {"Decision", "Plan", "Review", "Context", "CheckpointGroup", "PhaseChange", "CorrectionAttempt"}
    assert labels >= {"PlanLock", "InvariantSet", "Trace", "Span", "Event", "EventCounter", "PendingEvent"}
    assert (restored.nodes, restored.relationships) == (dumped.nodes, dumped.relationships)
    assert dumped.nodes == sum(before[0].values()) and dumped.relationships == sum(before[1].values())
    assert restored.migrations_run == ()
    assert no_restore_leftovers(graph)
    report = run_checks(load_graph(graph, LoadScope.ALL, progress=False))
    assert report.ok and report.plans >= 3, report.render()
    # The restored store takes new work: a restored decision corrected (its applied plan goes back to
    # Execute), then guidance recorded into that plan.
    leaf = reading.list_decisions(store, plans["child"], current_only=True, principal=LOCAL)[-1]
    result = correct(store, leaf.decision_id, "append", "Use a token bucket instead", "too coarse", principal=LOCAL)
    assert leaf.decision_id in result.invalidated
    assert reading.get_plan(store, plans["child"], principal=LOCAL).phase is Phase.EXECUTE
    latest = max(
        reading.list_decisions(store, plans["child"], current_only=True, principal=LOCAL), key=lambda d: d.sequence_number
    )
    numbers = [d.sequence_number for d in reading.list_decisions(store, plans["child"], principal=LOCAL)]
    guided = add_guidance(
        store, plans["child"], "Keep the quotas per tenant", parent_decision_id=latest.decision_id, principal=LOCAL
    )
    assert guided.plan_id == plans["child"] and guided.sequence_number == max(numbers) + 1
    assert run_checks(load_graph(graph, LoadScope.ALL, progress=False)).ok


def test_the_dump_holds_the_ledger_only_as_its_header_says(store: Trail, graph: Graph, tmp_path: Path) -> None:
    new_plan(store)
    path = tmp_path / "trail.dump.gz"

    backup.dump(store, path, progress=False, principal=LOCAL)

    header, *records, trailer = lines_of(path)
    applied, _, _ = graph.driver.execute_query("MATCH (m:SchemaMigration) RETURN m.name AS name ORDER BY name")
    assert header["format"] == "decisiontrail-dump" and header["version"] == 1
    assert header["migrations"] == [r["name"] for r in applied]
    assert not any("SchemaMigration" in r.get("labels", []) for r in records)
    nodes = [r for r in records if "node" in r]
    assert trailer == {"end": {"nodes": len(nodes), "relationships": len(records) - len(nodes)}}
    assert len(nodes) == count_nodes(graph)
    # Nodes come first, then relationships, and every relationship joins two nodes of the file.
    first_rel = next(i for i, r in enumerate(records) if "rel" in r)
    assert all("node" in r for r in records[:first_rel]) and all("rel" in r for r in records[first_rel:])
    ids = {r["node"] for r in nodes}
    assert all(r["from"] in ids and r["to"] in ids for r in records[first_rel:])


def test_values_json_cannot_hold_come_back_exactly(store: Trail, graph: Graph, tmp_path: Path) -> None:
    graph.driver.execute_query(
        """
        CREATE (a:PlanLock {plan_id: 'a', writes: 9223372036854775807,
          fold: datetime('2025-10-26T02:30:00.000000005+02:00[Europe/Paris]'),
          after_fold: datetime('2025-10-26T02:30:00.000000005+01:00[Europe/Paris]'),
          offset: datetime('2025-01-01T10:00:00.123456789+05:30'),
          utc: datetime('2025-01-01T10:00:00Z'),
          local: localdatetime('2025-01-01T10:00:00.000000001'), day: date('2024-02-29'),
          clock: time('12:00:00.5-03:00'), local_clock: localtime('23:59:59.999999999'),
          span: duration('P1Y2M3DT4H5M6.000000007S'), flat: point({x: 1.5, y: -2}),
          globe: point({longitude: 12.5, latitude: 41.9, height: 21}),
          nan: 0.0 / 0.0, inf: 1.0 / 0.0, ratio: 0.1, whole: 1.0, yes: true, text: 'é ✓ "quoted"\nnext',
          days: [date('2024-01-01'), date('2024-01-02')], ratios: [0.5, 1.0], none: [], bytes: $bytes})
        CREATE (b:PlanLock {plan_id: 'b', writes: 0})
        CREATE (a)-[:DEPENDS_ON {ordinal: 3, at: datetime('2025-06-01T00:00:00+02:00'), tags: ['x', 'y']}]->(b)
        CREATE (a)-[:DEPENDS_ON {ordinal: 3}]->(b)
        """,
        bytes=b"\x00\xffbackup",
        database_=graph.database,
    )
    before = canonical(graph)
    path = tmp_path / "values.dump.gz"

    backup.dump(store, path, progress=False, principal=LOCAL)
    delete_all_data(graph)
    backup.restore(store, path, progress=False, principal=LOCAL)

    assert canonical(graph) == before
    (node_forms, _) = before
    texts = {text for form in node_forms for _, _, _, _, text in form[1]}
    assert "2025-10-26T02:30:00.000000005+02:00[Europe/Paris]" in texts  # the first of the two 02:30s survived as itself
    assert "NaN" in texts and "2025-01-01T10:00:00Z" in texts


# -- what is refused ---------------------------------------------------------------------------------


def test_restore_into_a_database_with_data_is_refused_and_writes_nothing(store: Trail, graph: Graph, tmp_path: Path) -> None:
    new_plan(store)
    path = tmp_path / "trail.dump.gz"
    backup.dump(store, path, progress=False, principal=LOCAL)
    new_plan(store, description="another plan")
    before = canonical(graph)

    with pytest.raises(Conflict, match=f"not empty: it holds {count_nodes(graph)} node"):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert canonical(graph) == before
    assert no_restore_leftovers(graph)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of three records, so a refusal late in a file comes after records were written."""
    monkeypatch.setattr(backup, "BATCH_SIZE", 3)


@pytest.fixture
def dumped(store: Trail, graph: Graph, tmp_path: Path) -> list[dict[str, Any]]:
    """The lines of a dump of a small store, its events numbered, the database emptied afterwards."""
    plan, root = new_plan(store)
    for n in range(3):
        add_guidance(store, plan.plan_id, f"guidance {n}", parent_decision_id=root.decision_id, principal=LOCAL)
    number_pending(store.database)
    path = tmp_path / "small.dump.gz"
    backup.dump(store, path, progress=False, principal=LOCAL)
    delete_all_data(graph)
    records = lines_of(path)
    assert sum("node" in r for r in records) > 6 and sum("rel" in r for r in records) > 6
    return records


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize("cut", [1, 4], ids=["without-trailer", "without-relationships"])
def test_a_dump_cut_short_is_refused_and_leaves_the_database_empty(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]], cut: int
) -> None:
    path = write_lines(tmp_path / "cut.dump.gz", dumped[:-cut])

    with pytest.raises(ValidationFailed, match="without its trailer: it was cut short"):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)
    assert no_restore_leftovers(graph)


@pytest.mark.usefixtures("small_batches")
def test_a_file_cut_mid_stream_is_refused_and_leaves_the_database_empty(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    whole = write_lines(tmp_path / "whole.dump.gz", dumped).read_bytes()
    path = tmp_path / "cut.dump.gz"
    path.write_bytes(whole[: len(whole) * 3 // 4])

    with pytest.raises(ValidationFailed, match="cut short|not JSON"):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)


@pytest.mark.usefixtures("small_batches")
def test_a_trailer_that_counts_otherwise_is_refused(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    missing_one = [r for i, r in enumerate(dumped) if i != 2]
    path = write_lines(tmp_path / "short.dump.gz", missing_one)

    with pytest.raises(ValidationFailed, match="the trailer counts|not in the dump"):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"labels": ["Person"]}, "labelled 'Person', a label decisiontrail does not keep"),
        ({"labels": ["Restoring"]}, "labelled 'Restoring'"),
        ({"labels": ["SchemaMigration"]}, "labelled 'SchemaMigration'"),
        ({"properties": {"when": {"$": "sundial", "value": "noon"}}}, "a property value cannot be read"),
    ],
)
def test_a_node_outside_the_vocabulary_is_refused_after_others_were_written(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]], change: dict[str, Any], message: str
) -> None:
    last_node = max(i for i, r in enumerate(dumped) if "node" in r)
    records = [dict(r, **change) if i == last_node else r for i, r in enumerate(dumped)]
    path = write_lines(tmp_path / "foreign.dump.gz", records)

    with pytest.raises(ValidationFailed, match=message):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)
    assert no_restore_leftovers(graph)


@pytest.mark.usefixtures("small_batches")
def test_a_relationship_type_outside_the_vocabulary_is_refused(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    records = [dict(r, rel="KNOWS") if i == len(dumped) - 2 else r for i, r in enumerate(dumped)]
    path = write_lines(tmp_path / "foreign.dump.gz", records)

    with pytest.raises(ValidationFailed, match="type 'KNOWS'"):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({"version": 2}, "format version 2, newer than this decisiontrail reads"),
        ({"format": "something-else"}, "not a decisiontrail dump"),
        ({"migrations": ["0001_decision_id_unique", "9999_from_the_future"]}, "migrations this decisiontrail does not know"),
    ],
)
def test_a_dump_this_code_cannot_read_is_refused_before_anything_is_written(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]], header: dict[str, Any], message: str
) -> None:
    path = write_lines(tmp_path / "other.dump.gz", [dict(dumped[0], **header), *dumped[1:]])

    with pytest.raises(ValidationFailed, match=message):
        backup.restore(store, path, progress=False, principal=LOCAL)

    assert empty(graph)
    assert no_restore_leftovers(graph)


def test_a_file_that_is_not_gzip_is_refused(store: Trail, graph: Graph, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"format": "decisiontrail-dump"}\n', encoding="utf-8")

    with pytest.raises(ValidationFailed, match="not a gzip-compressed dump"):
        backup.restore(store, path, progress=False, principal=LOCAL)


def test_migrations_newer_than_the_dump_run_over_what_it_restored(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    older = dumped[0]["migrations"][:-1]
    path = write_lines(tmp_path / "older.dump.gz", [dict(dumped[0], migrations=older), *dumped[1:]])

    restored = backup.restore(store, path, progress=False, principal=LOCAL)

    assert restored.migrations_run == (dumped[0]["migrations"][-1],)
    assert restored.nodes == sum("node" in r for r in dumped)


def test_a_dump_whose_counter_is_behind_its_events_restores_an_outbox_that_numbers_on(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    # Events numbered while the dump read its nodes: the counter as it was before them.
    last = max(r["properties"]["last_seq"] for r in dumped if "Event" in r.get("labels", []))
    behind = [
        dict(r, properties={**r["properties"], "seq": last - 2}) if "EventCounter" in r.get("labels", []) else r for r in dumped
    ]
    backup.restore(store, write_lines(tmp_path / "behind.dump.gz", behind), progress=False, principal=LOCAL)
    plan_id = next(r["properties"]["plan_id"] for r in dumped if "Plan" in r.get("labels", []))
    root_id = next(
        r["properties"]["decision_id"]
        for r in dumped
        if "Decision" in r.get("labels", []) and r["properties"]["decision_type"] == "prompt_definition"
    )
    made = add_guidance(store, plan_id, "after the restore", parent_decision_id=root_id, principal=LOCAL)

    rows = read_numbered(store.database, outbox.read_after, last, 100).rows
    assert [(r["seq"], r["decision_id"]) for r in rows] == [(last + 1, made.decision_id)]


def test_a_dump_from_before_the_outbox_stored_runs_restores_its_events_readable(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    # Before 0030 an outbox event was a node of its own with decision_id and review_id; 0030
    # (a data fix committed in batches) must run again over what a restore of such a dump wrote.
    path = write_lines(tmp_path / "small.dump.gz", dumped)
    backup.restore(store, path, progress=False, principal=LOCAL)
    events = read_numbered(store.database, outbox.read_after, 0, 1000).rows
    delete_all_data(graph)

    def old_shape(record: dict[str, Any]) -> list[dict[str, Any]]:
        if "Event" not in record.get("labels", []):
            return [record]
        props = record["properties"]
        first, last = props["seq"], props["last_seq"]
        return [
            {
                "node": f"{record['node']}.{i}",
                "labels": ["Event"],
                "properties": {
                    **{k: v for k, v in props.items() if k not in ("last_seq", "decision_ids", "review_ids")},
                    "seq": first + i,
                    **({"decision_id": props["decision_ids"][i]} if props.get("decision_ids") else {}),
                    **({"review_id": props["review_ids"][i]} if props.get("review_ids") else {}),
                },
            }
            for i in range(last - first + 1)
        ]

    before = [n for n in dumped[0]["migrations"] if n < "0030"]
    old = [dict(dumped[0], migrations=before), *(line for record in dumped[1:] for line in old_shape(record))]
    assert sum("Event" in r.get("labels", []) for r in old) == len(events) > 0
    restored = backup.restore(store, write_lines(tmp_path / "old.dump.gz", old), progress=False, principal=LOCAL)

    assert restored.migrations_run[0] == "0030_event_runs"
    assert read_numbered(store.database, outbox.read_after, 0, 1000).rows == events


def test_nodes_an_interrupted_restore_left_are_replaced(
    store: Trail, graph: Graph, tmp_path: Path, dumped: list[dict[str, Any]]
) -> None:
    path = write_lines(tmp_path / "small.dump.gz", dumped)
    graph.driver.execute_query("CREATE (:Plan:Restoring {plan_id: 'half', _dump_id: 'x'})", database_=graph.database)

    backup.restore(store, path, progress=False, principal=LOCAL)

    assert count_nodes(graph) == sum("node" in r for r in dumped)
    assert "Restoring" not in labels_in(graph)


# -- the commands ------------------------------------------------------------------------------------


def test_dump_and_restore_commands_end_to_end(
    store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    plan, _ = new_plan(store)
    before = canonical(graph)
    path = tmp_path / "cli.dump.gz"

    assert main(["-q", "dump", str(path)]) == 0
    assert "dumped" in capsys.readouterr().out
    assert main(["-q", "restore", str(path)]) == 2
    assert "the database is not empty" in capsys.readouterr().err
    delete_all_data(graph)
    assert main(["-q", "restore", str(path)]) == 0

    assert f"restored {sum(before[0].values())} node(s)" in capsys.readouterr().out
    assert canonical(graph) == before
    assert reading.list_decisions(store, plan.plan_id, principal=LOCAL)[0].decision_type is DecisionType.PROMPT_DEFINITION


@pytest.mark.parametrize("command", ["dump", "restore"])
def test_help_says_what_is_in_a_dump_and_what_is_refused(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])

    out = " ".join(capsys.readouterr().out.split())
    for words in ("migration ledger", "API tokens", "JSON Lines", "version 1", "event outbox", "docs/backup.md"):
        assert words in out
    if command == "restore":
        assert "must hold no data: a non-empty database is refused" in out
