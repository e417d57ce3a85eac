"""checks.history.as_of: a decision graph as it stood at a past moment, a pure function of the present one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import networkx as nx
import pytest

from decisiontrail.checks import run_checks
from decisiontrail.checks.history import as_of
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph

T0 = datetime(2026, 6, 1, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def corrected_hierarchy() -> nx.MultiDiGraph[str]:
    """At 0-3h a plan, its strategy, a spawn and a child plan; at 5h a correction of the strategy
    supersedes the strategy and the spawn, invalidates the child and cancels its review."""
    G = decision_graph()
    add_plan(G, "P", created_at=at(0), phase="execute")
    add_decision(G, "root", plan_id="P", decision_type="prompt_definition", sequence_number=0, created_at=at(0))
    add_decision(G, "strategy", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent="root",
                 created_at=at(1), superseded_at=at(5))  # fmt: skip
    add_decision(G, "spawn", plan_id="P", decision_type="subplan_spawn", sequence_number=2, parent="strategy",
                 created_at=at(2), superseded_at=at(5))  # fmt: skip
    add_plan(G, "C", created_at=at(3), invalidated_at=at(5))
    add_edge(G, "C", "P", "CHILD_OF")
    add_edge(G, "C", "spawn", "SPAWNED_BY")
    add_decision(G, "child_root", plan_id="C", decision_type="prompt_definition", sequence_number=0, created_at=at(3),
                 superseded_at=at(5))  # fmt: skip
    add_review(G, "R", plan_id="C", status="cancelled", created_at=at(4), resolved_at=at(5), cancelled_by="fix")
    add_decision(G, "fix", plan_id="P", decision_type="user_intervention", sequence_number=3, parent="root",
                 created_at=at(5), is_correction=True)  # fmt: skip
    add_edge(G, "fix", "strategy", "CORRECTS")
    for old in ("strategy", "spawn", "child_root"):
        add_edge(G, old, "fix", "SUPERSEDED_BY", at=at(5))
    add_attempt(G, "A", at=at(5))
    add_edge(G, "A", "strategy", "ATTEMPT_ON")
    add_edge(G, "C", "A", "INVALIDATED_BY")
    return G


def test_before_the_correction_it_is_undone_and_what_came_later_is_gone() -> None:
    G = corrected_hierarchy()

    then = as_of(G, at(4.5))

    assert set(then) == {"P", "root", "strategy", "spawn", "C", "child_root", "R"}
    assert {then.nodes[n]["status"] for n in ("strategy", "spawn", "child_root")} == {"current"}
    assert then.nodes["C"]["status"] == "active" and "invalidated_at" not in then.nodes["C"]
    assert then.nodes["R"]["status"] == "pending" and "cancelled_by" not in then.nodes["R"]
    assert not [e for e in then.edges(keys=True) if e[2] in ("SUPERSEDED_BY", "INVALIDATED_BY", "CORRECTS")]
    assert run_checks(then).ok, run_checks(then).render()


def test_the_present_is_untouched_and_a_later_moment_is_the_present() -> None:
    G = corrected_hierarchy()
    before = nx.node_link_data(G, edges="edges")

    now = as_of(G, at(6))

    assert nx.node_link_data(G, edges="edges") == before
    assert nx.utils.graphs_equal(now, G)


def test_earlier_moments_hold_less() -> None:
    G = corrected_hierarchy()
    assert set(as_of(G, at(2.5))) == {"P", "root", "strategy", "spawn"}
    assert set(as_of(G, at(0))) == {"P", "root"}  # what happened at the moment itself is in
    assert len(as_of(G, at(-1))) == 0


def test_a_naive_moment_is_refused() -> None:
    with pytest.raises(ValueError, match="aware"):
        as_of(corrected_hierarchy(), datetime(2026, 6, 1))
