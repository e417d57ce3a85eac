"""docs/correction.md's Python example, run on a plan whose corrected decision spawned a child plan.
(Its command synopsis is test_docs_synopses.py's; its worked example, test_docs_demonstration.py's.)"""

from __future__ import annotations

from decisiontrail.access import LOCAL
from decisiontrail.domain import DecisionType, Phase
from decisiontrail.services import Trail, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from docs_examples import example
from factories import decision as a_decision


def test_the_python_example_corrects_a_decision_and_its_downstream(store: Trail) -> None:
    plan, root = instantiate_plan(store, "Add rate limiting", principal=LOCAL)
    strategy = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.STRATEGY_CHOICE, root.decision_id), principal=LOCAL
    )
    spawn = recording_service.record(
        store, a_decision(plan.plan_id, DecisionType.SUBPLAN_SPAWN, strategy.decision_id), principal=LOCAL
    )
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    child, child_root = instantiate_plan(store, "quotas", spawned_by_decision_id=spawn.decision_id, principal=LOCAL)
    code = example(
        "docs/correction.md",
        "from decisiontrail.access import LOCAL  # the caller: every use-case takes one (a token's principal in the API)",
    )
    names = {"store": store, "decision_id": strategy.decision_id}

    exec(compile(code, "docs/correction.md", "exec"), names)

    impact, result = names["impact"], names["result"]
    assert result.correction.is_correction and result.correction.corrects_decision_id == strategy.decision_id
    assert (
        set(result.invalidated) == set(impact.decision_ids) == {strategy.decision_id, spawn.decision_id, child_root.decision_id}
    )
    assert result.invalidated_plans == (child.plan_id,) and reading.get_plan(store, child.plan_id, LOCAL).is_invalidated
    assert result.attempt.corrected_decision_id == strategy.decision_id and result.attempt.attempt_number == 1
    assert result.replay_frontier == result.attempt.replay_frontier
    assert reading.get_decision(store, strategy.decision_id, LOCAL).superseded_by == result.correction.decision_id
