"""A correction across a deep hierarchy of plans: every level superseded in one transaction, in
memory linear in what it supersedes (ADR-007: one traversal, no more and no less)."""

from __future__ import annotations


from bench.corrections import memory_of_beginning
from bench.workload import WorkloadSpec, load
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, correction
from decisiontrail.access import LOCAL

LEVELS = 1000


def _chain(graph: Graph, levels: int, seed: int) -> str:
    """A chain of ``levels`` plans below a root plan, each spawned by the one above it (a strategy,
    its subplan_spawn, an implementation choice); the root plan's spawning strategy."""
    spec = WorkloadSpec(seed=seed, depth=levels, fan_out=1, decisions_per_plan=5, superseded_share=0.0, depends_on_density=0.0)
    return load(graph, spec).top_decision_id


def test_a_correction_across_a_thousand_levels_of_plans_supersedes_every_level(store: Trail, graph: Graph) -> None:
    # Was refused TOO_LARGE from 200 levels (about 800 decisions) on: past the 256 MiB one
    # transaction may use, where the walks alone take a few MB.
    top = _chain(graph, LEVELS, seed=1)
    expected = correction.preview(store, top, principal=LOCAL)

    result = correction.correct(store, top, "revert", "another way", principal=LOCAL)

    assert len(expected.plan_ids) == LEVELS
    assert set(result.invalidated) == {d.decision_id for d in expected.decisions}
    assert sorted(result.invalidated_plans) == sorted(expected.plan_ids)
    assert correction.preview(store, result.correction.decision_id, principal=LOCAL).plan_ids == ()


def test_the_memory_of_a_correction_grows_with_what_it_supersedes_not_its_square(store: Trail, graph: Graph) -> None:
    # An aggregation inside a subquery is grouped by the lists it imports: summaries of the
    # downstream per plan each kept the downstream whole, memory in levels squared (18 MB at 100
    # levels, 8x the rows at 400: about 64x the memory). Linear, 4x the rows take about 4x.
    small = memory_of_beginning(graph, _chain(graph, LEVELS // 4, seed=2))
    large = memory_of_beginning(graph, _chain(graph, LEVELS, seed=3))

    rows_ratio, memory_ratio = large[1] / small[1], large[0] / small[0]
    assert 3.5 < rows_ratio < 4.5
    assert memory_ratio < 2 * rows_ratio, (small, large)
