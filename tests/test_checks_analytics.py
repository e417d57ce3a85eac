"""Analytics on tiny literal graphs whose numbers can be worked out by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decisiontrail.analytics import (
    Analytics,
    analyze,
    blast_radius,
    confidence_histogram,
    confidence_summary,
    correction_summary,
    decision_counts,
    most_critical,
    plan_summaries,
    render_text,
    review_summary,
    tree_shape,
)
from decisiontrail.checks.closure import downstream
from decisiontrail.checks.model import add_attempt, add_decision, add_edge, add_plan, add_review, decision_graph
from decisiontrail.exceptions import ValidationFailed

LATER = datetime(2026, 1, 2, tzinfo=UTC)


def plan(G: nx.MultiDiGraph[str], plan_id: str = "P", **props: object) -> str:
    """A plan with its root prompt_definition ``<plan>-R`` at sequence 0."""
    add_plan(G, plan_id, **props)
    add_decision(G, f"{plan_id}-R", plan_id=plan_id, decision_type="prompt_definition", sequence_number=0)
    return f"{plan_id}-R"


def corrected_plan() -> nx.MultiDiGraph[str]:
    """D corrected twice along one chain (D <- C1 <- C2), E once (E <- C3); three attempts."""
    G = decision_graph()
    root = plan(G)
    add_decision(G, "D", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent=root, superseded_at=LATER)
    add_decision(G, "E", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent=root, superseded_at=LATER)
    for n, original in ((3, "D"), (4, "C1"), (5, "E")):
        add_decision(
            G,
            f"C{n - 2}",
            plan_id="P",
            decision_type="user_intervention",
            sequence_number=n,
            parent=root,
            is_correction=True,
            superseded_at=LATER if n == 3 else None,
        )
        add_edge(G, f"C{n - 2}", original, "CORRECTS")
    for attempt, corrected, chain, outcome in (
        ("A1", "D", "D", "replayed"),
        ("A2", "C1", "D", "failed"),
        ("A3", "E", "E", "replayed"),
    ):
        add_attempt(G, attempt, original_decision_id=chain, replay_outcome=outcome)
        add_edge(G, attempt, corrected, "ATTEMPT_ON")
    return G


# Counts


def test_counts_split_current_and_superseded_and_key_types_and_phases_in_enum_order() -> None:
    G = decision_graph()
    root = plan(G)
    add_decision(G, "U", plan_id="P", decision_type="user_intervention", sequence_number=1, parent=root)
    add_decision(G, "T", plan_id="P", decision_type="tool_invocation", sequence_number=2, parent=root)
    add_decision(G, "S1", plan_id="P", decision_type="strategy_choice", sequence_number=3, parent=root, superseded_at=LATER)
    add_decision(G, "S2", plan_id="P", decision_type="strategy_choice", sequence_number=4, parent=root)
    add_decision(G, "I", plan_id="P", decision_type="implementation_choice", sequence_number=5, parent="S2")

    counts = decision_counts(G)

    assert (counts.total, counts.current, counts.superseded) == (6, 5, 1)
    assert list(counts.by_type.items()) == [
        ("prompt_definition", 1),
        ("strategy_choice", 2),
        ("implementation_choice", 1),
        ("tool_invocation", 1),
        ("user_intervention", 1),
    ]
    assert list(counts.by_phase.items()) == [("strategize", 4), ("execute", 2)]


# Confidence


def test_confidence_summarises_current_scores_and_counts_unscored_apart() -> None:
    G = decision_graph()
    root = plan(G)  # the root has no score
    for n, score in enumerate([0.2, 0.4, 0.9, 1.0], start=1):
        add_decision(
            G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent=root, confidence_score=score
        )
    add_decision(
        G,
        "OLD",
        plan_id="P",
        decision_type="strategy_choice",
        sequence_number=5,
        parent=root,
        confidence_score=0.05,
        superseded_at=LATER,
    )

    s = confidence_summary(G)

    assert (s.scored, s.unscored) == (4, 1)
    assert (s.minimum, s.maximum, s.median) == (0.2, 1.0, 0.65)
    assert s.mean == pytest.approx(0.625)
    assert [b.count for b in s.histogram] == [0, 0, 1, 0, 1, 0, 0, 0, 0, 2]


def test_histogram_buckets_are_closed_below_and_the_last_holds_one() -> None:
    buckets = confidence_histogram([0.0, 0.099, 0.1, 0.3, 0.7, 0.9, 1.0])

    assert [(b.low, b.high) for b in buckets][:2] == [(0.0, 0.1), (0.1, 0.2)]
    assert [b.count for b in buckets] == [2, 1, 0, 1, 0, 0, 0, 1, 0, 2]


@given(st.lists(st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)), max_size=30))
def test_histogram_holds_every_scored_current_decision_in_its_bucket(scores: list[float | None]) -> None:
    G = decision_graph()
    for n, score in enumerate(scores):
        add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, confidence_score=score)

    s = confidence_summary(G)

    assert sum(b.count for b in s.histogram) == s.scored == sum(x is not None for x in scores)
    assert s.scored + s.unscored == len(scores)
    expected = [0] * 10
    for score in (x for x in scores if x is not None):
        expected[max(i for i in range(10) if i / 10 <= score)] += 1
    assert [b.count for b in s.histogram] == expected


# Corrections


def test_corrections_count_chains_by_their_first_decision_and_rate_corrected_over_recorded() -> None:
    s = correction_summary(corrected_plan())

    assert (s.corrections, s.corrected, s.attempts) == (3, 3, 3)  # D, C1 and E were corrected
    assert s.rate == 0.5  # of the six recorded: P-R, D, E, C1, C2, C3
    assert s.replay_outcomes == {"replayed": 2, "failed": 1}
    assert [(m.decision_id, m.corrections, m.decision_type) for m in s.most_corrected] == [
        ("D", 2, "strategy_choice"),
        ("E", 1, "strategy_choice"),
    ]
    assert s.most_corrected[0].question == "strategy_choice 1?"


def test_without_attempt_nodes_the_corrects_edges_are_counted() -> None:
    G = corrected_plan()
    G.remove_nodes_from(["A1", "A2", "A3"])

    s = correction_summary(G, top=1)

    assert s.attempts == 0
    assert [(m.decision_id, m.corrections) for m in s.most_corrected] == [("D", 2)]


def test_attempts_are_counted_where_they_and_the_corrects_edges_differ() -> None:
    G = corrected_plan()
    add_attempt(G, "A4", original_decision_id="E", replay_outcome="pending")  # its correction not recorded yet

    s = correction_summary(G)

    assert [(m.decision_id, m.corrections) for m in s.most_corrected] == [("D", 2), ("E", 2)]
    assert s.replay_outcomes == {"pending": 1, "replayed": 2, "failed": 1}


def test_attempts_on_a_chain_outside_the_scope_are_not_counted() -> None:
    G = corrected_plan()
    add_decision(G, "X", plan_id="OTHER", decision_type="strategy_choice", sequence_number=1, boundary=True)
    add_attempt(G, "A4", original_decision_id="X")
    add_attempt(G, "A5", original_decision_id="D", boundary=True)

    s = correction_summary(G)

    assert [(m.decision_id, m.corrections) for m in s.most_corrected] == [("D", 2), ("E", 1)]
    assert s.attempts == 4  # A4 is in scope; only the chain it names is not


# Shape


def test_depth_and_fan_out_describe_the_current_tree() -> None:
    G = decision_graph()
    root = plan(G)
    add_decision(G, "S1", plan_id="P", decision_type="strategy_choice", sequence_number=1, parent=root)
    add_decision(G, "S2", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent=root)
    for n in (1, 2, 3):
        add_decision(G, f"I{n}", plan_id="P", decision_type="implementation_choice", sequence_number=2 + n, parent="S1")
    add_decision(G, "T", plan_id="P", decision_type="tool_invocation", sequence_number=6, parent="I1")
    # Superseded: neither a child of S2 nor a deeper level.
    add_decision(G, "X", plan_id="P", decision_type="tool_invocation", sequence_number=7, parent="T", superseded_at=LATER)
    add_decision(G, "Y", plan_id="P", decision_type="implementation_choice", sequence_number=8, parent="S2", superseded_at=LATER)

    s = tree_shape(G)

    assert s.decision_depth == 3  # P-R, S1, I1, T
    assert (s.max_fan_out, s.widest_decision_id) == (3, "S1")
    assert s.mean_fan_out == pytest.approx((2 + 3 + 1) / 3)  # P-R, S1 and I1 have children
    assert s.hierarchy_depth == 0


def test_hierarchy_depth_counts_nested_active_plans() -> None:
    G = decision_graph()
    for p, parent in (("P", None), ("Q", "P"), ("Q2", "Q")):
        plan(G, p)
        if parent:
            add_edge(G, p, parent, "CHILD_OF")
    add_plan(G, "Q3", invalidated_at=LATER)
    add_edge(G, "Q3", "Q2", "CHILD_OF")

    assert tree_shape(G).hierarchy_depth == 2
    assert [(p.plan_id, p.level) for p in plan_summaries(G)] == [("P", 0), ("Q", 1), ("Q2", 2), ("Q3", 3)]


# Blast radius


def spawning_hierarchy() -> nx.MultiDiGraph[str]:
    """P: root R, S under R, I under S, T under R depending on S; Q spawned by S with root Q-R."""
    G = decision_graph()
    root = plan(G)
    add_decision(G, "S", plan_id="P", decision_type="subplan_spawn", sequence_number=1, parent=root, question="Split the work?")
    add_decision(G, "I", plan_id="P", decision_type="strategy_choice", sequence_number=2, parent="S")
    add_decision(G, "T", plan_id="P", decision_type="strategy_choice", sequence_number=3, parent=root)
    add_edge(G, "T", "S", "DEPENDS_ON")
    plan(G, "Q", description="the child")
    add_edge(G, "Q", "P", "CHILD_OF")
    add_edge(G, "Q", "S", "SPAWNED_BY")
    add_decision(G, "Q-S", plan_id="Q", decision_type="strategy_choice", sequence_number=1, parent="Q-R", superseded_at=LATER)
    return G


def test_blast_radius_is_the_decision_and_its_downstream_across_plans() -> None:
    G = spawning_hierarchy()

    radius = blast_radius(G)

    # What correcting each would invalidate: itself (a correction supersedes it too) and its downstream.
    assert radius == {"P-R": 5, "S": 4, "I": 1, "T": 1, "Q-R": 1}  # superseded Q-S neither counted nor listed
    assert radius == {d: 1 + len(downstream(G, d)) for d in radius}


def test_most_critical_sorts_by_radius_then_sequence() -> None:
    G = spawning_hierarchy()

    critical = most_critical(G, blast_radius(G), top=3)

    assert [(c.decision_id, c.blast_radius) for c in critical] == [("P-R", 5), ("S", 4), ("Q-R", 1)]
    assert (critical[1].decision_type, critical[1].plan_id, critical[1].question) == ("subplan_spawn", "P", "Split the work?")


# Reviews


def test_reviews_by_status_and_resolution_and_rate_over_actor_proposals() -> None:
    G = decision_graph()
    root = plan(G)
    for n in (1, 2, 3):
        add_decision(G, f"S{n}", plan_id="P", decision_type="strategy_choice", sequence_number=n, parent=root)
    add_decision(G, "U", plan_id="P", decision_type="user_intervention", sequence_number=4, parent=root)
    add_review(G, "V1", plan_id="P", status="approved")
    add_edge(G, "V1", "S1", "RESOLVED_AS")
    add_review(G, "V2", plan_id="P", status="custom", resolved_option="my own")
    add_edge(G, "V2", "S2", "RESOLVED_AS")
    add_review(G, "V3", plan_id="P", status="pending")

    s = review_summary(G)

    assert (s.total, s.pending) == (3, 1)
    assert list(s.by_status.items()) == [("pending", 1), ("approved", 1), ("custom", 1)]
    assert s.by_resolution == {"approve": 1, "custom": 1}
    assert s.rate == pytest.approx(3 / 4)  # S1, S2, S3 and the pending proposal; P-R and U are the system's


# Scope


def test_boundary_nodes_are_never_counted() -> None:
    G = spawning_hierarchy()
    before = analyze(G)
    add_plan(G, "B", boundary=True)
    add_decision(
        G,
        "BX",
        plan_id="B",
        decision_type="strategy_choice",
        sequence_number=1,
        boundary=True,
        confidence_score=0.5,
        is_correction=True,
    )
    add_decision(G, "BY", plan_id="B", decision_type="strategy_choice", sequence_number=2, parent="BX", boundary=True)
    add_edge(G, "BX", "S", "DEPENDS_ON")
    add_review(G, "BV", plan_id="B", status="approved", boundary=True)
    add_attempt(G, "BA", original_decision_id="S", boundary=True)

    after = analyze(G)

    assert after == before


def test_a_hierarchy_is_broken_down_plan_by_plan() -> None:
    G = spawning_hierarchy()
    add_review(G, "V", plan_id="Q", status="pending")

    summaries = analyze(G).plans

    assert [(p.plan_id, p.parent_plan_id, p.level, p.status, p.phase) for p in summaries] == [
        ("P", None, 0, "active", "strategize"),
        ("Q", "P", 1, "active", "strategize"),
    ]
    assert [(p.decisions, p.current, p.superseded, p.depth, p.reviews) for p in summaries] == [
        (4, 4, 0, 2, 0),
        (2, 1, 1, 0, 1),
    ]
    assert summaries[1].description == "the child"


def test_parents_come_before_children_whatever_the_graph_order() -> None:
    G = decision_graph()
    plan(G, "Q")
    plan(G, "P")
    add_edge(G, "Q", "P", "CHILD_OF")

    assert [p.plan_id for p in plan_summaries(G)] == ["P", "Q"]


def test_a_child_plan_loaded_alone_sits_at_level_zero_under_a_boundary_parent() -> None:
    G = decision_graph()
    add_plan(G, "P", boundary=True)
    plan(G, "Q")
    add_edge(G, "Q", "P", "CHILD_OF")

    (summary,) = plan_summaries(G)

    assert (summary.plan_id, summary.parent_plan_id, summary.level) == ("Q", "P", 0)


def test_an_empty_graph_gives_zeros_and_nones() -> None:
    a = analyze(decision_graph())

    assert (a.decisions.total, a.decisions.by_type, a.confidence.scored, a.confidence.mean) == (0, {}, 0, None)
    assert (a.corrections.rate, a.reviews.rate, a.shape.decision_depth, a.shape.max_fan_out) == (None,) * 4
    assert (a.most_critical, a.plans) == ((), ())
    assert "Decisions: 0 recorded" in render_text(a)


def test_a_plan_without_decisions_has_no_depth() -> None:
    G = decision_graph()
    add_plan(G, "P")

    assert [(p.decisions, p.depth) for p in analyze(G).plans] == [(0, None)]


# Entry points


def test_top_limits_the_lists_and_must_not_be_negative() -> None:
    G = corrected_plan()

    assert len(analyze(G, top=1).corrections.most_corrected) == 1
    assert analyze(G, top=0).most_critical == ()
    with pytest.raises(ValidationFailed) as error:
        analyze(G, top=-1)
    assert error.value.field == "top"


def test_analytics_dump_to_json_and_back() -> None:
    a = analyze(corrected_plan())

    dumped = json.loads(json.dumps(a.model_dump(mode="json")))

    assert Analytics.model_validate(dumped) == a
    assert dumped["corrections"]["most_corrected"][0]["decision_id"] == "D"


def test_render_text_reports_the_numbers() -> None:
    text = render_text(analyze(corrected_plan(), top=1))

    assert "Decisions: 6 recorded (3 current, 3 superseded)" in text
    assert "3 of 6 decisions corrected (50.0%)" in text
    assert "2x  D  strategy_choice" in text
    assert "  E  strategy_choice" not in text  # top=1
