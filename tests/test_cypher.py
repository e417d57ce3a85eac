"""The named Cypher queries: all present, all parse on the real server, labels from the allow-list."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import decisiontrail.cypher as cypher
from decisiontrail.graphdb import Graph
from decisiontrail.domain.vocabulary import Label, Rel
from planning import operators

SOURCE = Path(cypher.__file__).parent
EVERY_FILE = sorted(str(p.relative_to(SOURCE).with_suffix("")) for p in SOURCE.rglob("*.cypher"))
FILES = [name for name in EVERY_FILE if not Path(name).name.startswith("_")]
"""The statements: every file but the fragments (``_name``), which statements include."""


def test_every_file_is_loaded_and_nothing_else() -> None:
    assert FILES, "no .cypher files found beside decisiontrail.cypher"
    assert sorted(cypher.QUERIES) == FILES
    assert sorted(cypher.SOURCES) == EVERY_FILE


@pytest.mark.parametrize("name", FILES)
def test_query_text_is_not_empty(name: str) -> None:
    assert cypher.query(name).strip()


def test_unknown_query_names_its_file() -> None:
    with pytest.raises(KeyError, match="cypher/decision/nope.cypher"):
        cypher.query("decision/nope")


def test_migrations_apply_in_file_name_order() -> None:
    names = cypher.migration_names()
    assert names == sorted(names)
    assert names[0] == "migrations/0001_decision_id_unique"


@pytest.mark.parametrize("name", FILES)
def test_labels_and_relationship_types_come_from_the_allow_list(name: str) -> None:
    text = re.sub(r"//.*", "", cypher.query(name))
    labels = set(re.findall(r"\(\s*\w*\s*:\s*(\w+)", text)) | set(re.findall(r"\bn:(\w+)", text))
    types = set(re.findall(r"\[\s*\w*\s*:\s*(\w+)", text))
    assert labels <= {label.value for label in Label}, labels
    assert types <= {rel.value for rel in Rel}, types


@pytest.mark.parametrize("name", [n for n in FILES if not n.startswith("migrations/")])
def test_query_is_valid_cypher_on_the_server(graph: Graph, name: str) -> None:
    # EXPLAIN plans the query without running it: a syntax or semantic error fails here.
    graph.driver.execute_query("EXPLAIN " + cypher.query(name), _dummy_params(name), database_=graph.database)


@pytest.mark.parametrize("name", [n for n in FILES if not n.startswith("migrations/")])
def test_every_index_a_statement_hints_exists(graph: Graph, name: str) -> None:
    # The server plans around a hint naming no index and only warns (01N31): the hint is silently lost.
    summary = graph.driver.execute_query("EXPLAIN " + cypher.query(name), _dummy_params(name), database_=graph.database).summary
    assert [s.status_description for s in summary.gql_status_objects if s.gql_status == "01N31"] == []


SCANNING = {
    # Everything, by design: the whole database's counts, dump, restore, deletion and retention,
    # the offline loads' lists of plans and attempts, and the migrations applied.
    "admin/count_graph",
    "admin/delete_all_data",
    "admin/delete_all_relationships",
    "backup/count_contents",
    "backup/count_data",
    "backup/create_relationships",
    "backup/finish_restore",
    "backup/read_nodes",
    "backup/read_relationships",
    "backup/undo_restore",
    "graph/all_attempt_rows",
    "graph/all_plan_ids",
    "graph/plan_links",
    "migration/list_applied",
    "retention/find_prunable",
    # The outbox: its pending events (a handful, numbered at every relay's read) and its numbered
    # ones in order of their last number (the index read in order, stopped at a limit or a maximum).
    "backup/settle_outbox",
    "event/pending_events",
    "event/prune_events",
    "event/read_counter",
    # A page's total, read only when asked for (the page itself is an ordered seek).
    "plan/page_plans",
    "review/page_reviews",
    # The trends: counts over every plan the caller sees, by design (a page of plots, not a lookup).
    "trends/confidence_outcomes",
    "trends/correction_rates",
    "trends/decisions_per_day",
    "trends/review_waiting_times",
    "trends/top_invalidating",
    "trends/visible_projects",
}
"""The statements that may read a label, a relationship type or an index whole."""

SCANS = (
    "AllNodesScan",
    "NodeByLabelScan",
    "NodeIndexScan",
    "RelationshipTypeScan",
    "AllRelationshipsScan",
    "RelationshipIndexScan",
)


@pytest.mark.parametrize("name", [n for n in FILES if not n.startswith("migrations/")])
def test_no_other_statement_reads_a_label_or_an_index_whole(store: object, graph: Graph, name: str) -> None:
    # Planned on an empty database, where reading everything there is costs the planner nothing:
    # a request's lookup must be a seek there too (a hint where the planner would not choose one),
    # or the plan cached for a young database reads everything once it has grown.
    summary = graph.driver.execute_query("EXPLAIN " + cypher.query(name), _dummy_params(name), database_=graph.database).summary
    assert summary.plan is not None
    scans = [(op, details) for op, details in operators(summary.plan) if any(scan in op for scan in SCANS)]
    assert bool(scans) == (name in SCANNING), scans


def _dummy_params(name: str) -> dict[str, object]:
    return {param: None for param in re.findall(r"\$(\w+)", cypher.query(name))}


CARRIERS = ["correction/supersede_downstream", "decision/create_decisions"]
"""The statements that announce their write's events themselves (graphdb.outbox.Announcement)."""


def test_a_statement_that_carries_events_announces_them_as_append_events_does() -> None:
    announcing = cypher.query("event/append_events")
    subquery = announcing[announcing.index("CALL () {") :]
    assert [name for name in FILES if "$announce" in cypher.query(name)] == sorted([*CARRIERS, "event/append_events"])
    for name in CARRIERS:
        assert subquery in cypher.query(name), f"{name} announces otherwise than event/append_events"


def test_the_supersession_writes_the_correction_decision_by_the_writes_create_decisions_includes() -> None:
    include = "// include: decision/_create_placed_decisions"
    fragment = cypher.SOURCES["decision/_create_placed_decisions"]
    for name in ("decision/create_decisions", "correction/supersede_downstream"):
        assert include in cypher.SOURCES[name], f"{name} writes placed decisions otherwise than the fragment"
        assert include not in cypher.query(name) and fragment.splitlines()[-1] in cypher.query(name)
    assert fragment in cypher.query("decision/create_decisions")
    # Inside the supersession's subquery, indented as its include line is.
    assert textwrap.indent(fragment, "  ") in cypher.query("correction/supersede_downstream")


def _code(text: str) -> list[str]:
    """The lines of Cypher that are not comments, without their indentation."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("//")]


@pytest.mark.parametrize("fragment", [name for name in EVERY_FILE if name not in FILES])
def test_a_fragment_is_written_once_and_included_not_copied(fragment: str) -> None:
    code = _code(cypher.SOURCES[fragment])
    including = [name for name, text in cypher.SOURCES.items() if f"// include: {fragment}" in text]
    assert including, f"no statement includes {fragment}"
    for name, text in cypher.SOURCES.items():
        written = _code(text)
        copied = any(written[i : i + len(code)] == code for i in range(len(written) - len(code) + 1))
        assert name == fragment or not copied, f"{name} copies {fragment} instead of including it"


# -- composing fragments into statements ----------------------------------------------------


def test_an_include_is_replaced_by_the_fragment_indented_as_its_line() -> None:
    sources = {
        "area/run": "MATCH (n)\nCALL (n) {\n  // include: area/_set\n  RETURN n AS m\n}\nRETURN m",
        "area/_set": "SET n.x = 1\n\n// include: area/_more",
        "area/_more": "SET n.y = 2",
    }

    composed = cypher.compose(sources)

    assert composed == {"area/run": "MATCH (n)\nCALL (n) {\n  SET n.x = 1\n\n  SET n.y = 2\n  RETURN n AS m\n}\nRETURN m"}


def test_an_include_naming_no_file_names_both() -> None:
    with pytest.raises(KeyError, match=r"cypher/area/run.cypher includes 'area/_gone'.*cypher/area/_gone.cypher"):
        cypher.compose({"area/run": "// include: area/_gone\nRETURN 1"})


def test_an_include_coming_back_to_itself_is_refused() -> None:
    with pytest.raises(ValueError, match="area/_a -> area/_b -> area/_a"):
        cypher.compose({"area/run": "// include: area/_a", "area/_a": "// include: area/_b", "area/_b": "// include: area/_a"})


def test_only_a_fragment_is_included() -> None:
    with pytest.raises(ValueError, match="includes the statement 'area/other'"):
        cypher.compose({"area/run": "// include: area/other\nRETURN 1", "area/other": "RETURN 2"})


def test_an_include_line_is_a_line_of_its_own() -> None:
    # Mentioned in a comment, or in the middle of a line, the same words include nothing.
    text = "RETURN 1 // include: area/_x\n// see the include: area/_x"
    assert cypher.compose({"area/run": text, "area/_x": "RETURN 2"}) == {"area/run": text}


def test_visibility_is_written_once_and_included_where_a_view_judges_a_plan() -> None:
    # Was: six statements each wrote the owner and project test, over variables of their own.
    fragment = "access/_sees_plan"
    writes_it = [name for name, text in cypher.SOURCES.items() if "= $owner" in text and name != fragment]
    including = sorted(name for name, text in cypher.SOURCES.items() if f"// include: {fragment}" in text)

    assert writes_it == []
    assert including == [
        "correction/list_examples",
        "decision/lineage_seen",
        "decision/search_decisions",
        "plan/page_plans",
        "review/page_reviews",
        "trends/confidence_outcomes",
        "trends/correction_rates",
        "trends/decisions_per_day",
        "trends/review_waiting_times",
        "trends/top_invalidating",
        "trends/visible_projects",
    ]
    assert all("$owner" in cypher.query(name) and "$project" in cypher.query(name) for name in including)
