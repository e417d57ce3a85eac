"""A page of a plan's decisions, or of the plans, costs what it holds, not the size of what it pages.

Each page read every decision of its plan (every plan, for the plans' list) twice: once to count
the matches for ``totalCount``, once to sort them all and keep a page. The page is an ordered seek
from the cursor now, which stops when the page is full, and the count runs only when the
selection asks for it.
"""

from __future__ import annotations

from typing import Any

import pytest

from decisiontrail.cypher import query
from decisiontrail.domain.pages import DecisionPage, PlanPage, ReviewPage
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from factories import db_hits


def _plan(graph: Graph, plan_id: str, size: int) -> None:
    graph.driver.execute_query(
        "CREATE (p:Plan {plan_id: $plan_id, next_sequence: $size, phase: 'execute', description: 'paged'}) "
        "WITH p UNWIND range(0, $size - 1) AS i "
        "CREATE (:Decision {decision_id: $plan_id + '-' + i, plan_id: $plan_id, sequence_number: i, "
        "  decision_type: CASE i WHEN 0 THEN 'prompt_definition' ELSE 'tool_invocation' END, "
        "  question: 'q', chosen_option: 'o'})-[:IN_PLAN]->(p)",
        plan_id=plan_id,
        size=size,
        database_=graph.database,
    )


def _plans(graph: Graph, prefix: str, count: int) -> None:
    graph.driver.execute_query(
        "UNWIND range(0, $count - 1) AS i CREATE (:Plan {plan_id: $prefix + '-' + i, phase: 'execute', description: 'paged'})",
        prefix=prefix,
        count=count,
        database_=graph.database,
    )


def _profiled(graph: Graph, statement: str, **params: Any) -> tuple[int, Any]:
    """The statement's database hits under PROFILE, and its one record."""
    with graph.driver.session(database=graph.database) as session:
        result = session.run("PROFILE " + query(statement), params)  # type: ignore[arg-type]
        record = result.single(strict=True)
        profile = result.consume().profile
    assert profile is not None
    return db_hits(profile), record


@pytest.mark.parametrize("after", [None, 5], ids=["first page", "a later page"])
def test_a_page_of_decisions_costs_the_same_in_a_plan_of_any_size(store: Trail, graph: Graph, after: int | None) -> None:
    _plan(graph, "SMALL", 30)
    _plan(graph, "LARGE", 3_000)
    page = DecisionPage(first=11, after=after, count=False)

    small, small_page = _profiled(graph, "decision/page_plan_decisions", plan_id="SMALL", **page.params())
    large, large_page = _profiled(graph, "decision/page_plan_decisions", plan_id="LARGE", **page.params())
    counted, counted_page = _profiled(graph, "decision/page_plan_decisions", plan_id="LARGE", **{**page.params(), "count": True})

    start = 0 if after is None else after + 1
    assert list(large_page["decision_ids"]) == [f"LARGE-{i}" for i in range(start, start + 11)]
    assert large_page["total"] is None and counted_page["total"] == 3_000
    assert list(counted_page["decision_ids"]) == list(large_page["decision_ids"])
    # A seek's hits do not depend on the plan's size; reading the plan's 3,000 decisions costs thousands.
    assert large <= small + 50, (small, large)
    assert counted > large + 3_000, (large, counted)


def test_a_page_of_plans_costs_the_same_among_any_number_of_plans(store: Trail, graph: Graph) -> None:
    _plans(graph, "A", 30)
    page = PlanPage(first=11, after="A-1", count=False)
    few, few_page = _profiled(graph, "plan/page_plans", **page.params())
    _plans(graph, "B", 3_000)
    many, many_page = _profiled(graph, "plan/page_plans", **page.params())
    counted, counted_page = _profiled(graph, "plan/page_plans", **{**page.params(), "count": True})

    assert list(many_page["plan_ids"]) == list(few_page["plan_ids"]) == sorted(f"A-{i}" for i in range(30))[2:13]
    assert many_page["total"] is None and counted_page["total"] == 3_030
    assert many <= few + 50, (few, many)
    assert counted > many + 3_000, (many, counted)


def _reviews(graph: Graph, prefix: str, count: int) -> None:
    graph.driver.execute_query(
        "MERGE (p:Plan {plan_id: 'REVIEWED'}) ON CREATE SET p.phase = 'execute' "
        "WITH p UNWIND range(0, $count - 1) AS i "
        "CREATE (:Review {review_id: $prefix + '-' + i, plan_id: 'REVIEWED', status: 'pending'})-[:FOR_PLAN]->(p)",
        prefix=prefix,
        count=count,
        database_=graph.database,
    )


def test_a_page_of_reviews_costs_the_same_among_any_number_of_reviews(store: Trail, graph: Graph) -> None:
    _reviews(graph, "A", 30)
    page = ReviewPage(first=11, after="A-1", status="pending", count=False)
    few, few_page = _profiled(graph, "review/page_reviews", **page.params())
    _reviews(graph, "B", 3_000)
    many, many_page = _profiled(graph, "review/page_reviews", **page.params())
    counted, counted_page = _profiled(graph, "review/page_reviews", **{**page.params(), "count": True})

    ids = sorted(f"A-{i}" for i in range(30))[2:13]
    assert (
        [r["review"]["review_id"] for r in many_page["reviews"]] == [r["review"]["review_id"] for r in few_page["reviews"]] == ids
    )
    assert many_page["total"] is None and counted_page["total"] == 3_030
    assert many <= few + 50, (few, many)
    assert counted > many + 3_000, (many, counted)
