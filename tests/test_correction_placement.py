"""Where a correction hangs (issue 46): on the branch it corrects, so only what it rests on invalidates it.

A plan with two branches, A and B, each a strategy_choice under the prompt with an
implementation_choice under it; B's recorded after A's. An append correction of A's
implementation hung under the plan's latest decision, B's, so correcting B later superseded
the correction of A too. It hangs under the corrected decision's parent now, in both modes: a
correction of B leaves it current, a correction of A's strategy (an ancestor) supersedes it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from decisiontrail.domain import Decision, DecisionType, Phase, Plan
from decisiontrail.domain.vocabulary import LoadScope
from decisiontrail.services import Trail, analysis, reading
from decisiontrail.services import recording as recording_service
from decisiontrail.services.correction import correct
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.access import LOCAL
from factories import decision
from test_api import INSTANTIATE, ok, record

STRATEGY, IMPLEMENTATION = DecisionType.STRATEGY_CHOICE, DecisionType.IMPLEMENTATION_CHOICE


def _add(store: Trail, plan: Plan, decision_type: DecisionType, parent: Decision, name: str) -> Decision:
    return recording_service.record(
        store, decision(plan.plan_id, decision_type, parent.decision_id, question=f"{name}?"), principal=LOCAL
    )


@pytest.fixture
def branches(store: Trail) -> dict[str, Decision]:
    """An executing plan: root -> strategy_a -> impl_a, root -> strategy_b -> impl_b, B recorded last."""
    plan, root = instantiate_plan(store, "two branches", principal=LOCAL)
    strategy_a = _add(store, plan, STRATEGY, root, "strategy a")
    strategy_b = _add(store, plan, STRATEGY, root, "strategy b")
    advance_phase(store, plan.plan_id, Phase.EXECUTE, principal=LOCAL)
    impl_a = _add(store, plan, IMPLEMENTATION, strategy_a, "impl a")
    impl_b = _add(store, plan, IMPLEMENTATION, strategy_b, "impl b")
    return {"root": root, "strategy_a": strategy_a, "strategy_b": strategy_b, "impl_a": impl_a, "impl_b": impl_b}


def _superseded_by(store: Trail, decision_id: str) -> str | None:
    return reading.get_decision(store, decision_id, principal=LOCAL).superseded_by


@pytest.mark.parametrize("later", ["impl_b", "strategy_b"])
def test_an_appended_correction_stays_current_when_another_branch_is_corrected(
    store: Trail, branches: dict[str, Decision], later: str
) -> None:
    b = branches
    fix_a = correct(store, b["impl_a"].decision_id, "append", "Use a queue", "too slow", principal=LOCAL).correction

    fix_b = correct(store, b[later].decision_id, "revert", "Another way", "wrong", principal=LOCAL).correction

    assert _superseded_by(store, fix_a.decision_id) is None
    assert _superseded_by(store, b[later].decision_id) == fix_b.decision_id
    assert fix_a.parent_decision_id == b["strategy_a"].decision_id
    assert fix_a.phase is Phase.EXECUTE  # append keeps the plan's phase

    # What it rests on still invalidates it: the strategy it hangs under.
    fix_strategy = correct(store, b["strategy_a"].decision_id, "revert", "A third way", "wrong too", principal=LOCAL).correction

    assert _superseded_by(store, fix_a.decision_id) == fix_strategy.decision_id
    assert _superseded_by(store, fix_b.decision_id) is None
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok


def test_append_and_revert_hang_the_correction_in_the_same_place(store: Trail, branches: dict[str, Decision]) -> None:
    b = branches

    appended = correct(store, b["impl_a"].decision_id, "append", "g", "r", principal=LOCAL).correction
    reverted = correct(store, b["impl_b"].decision_id, "revert", "g", "r", principal=LOCAL).correction

    assert appended.parent_decision_id == b["impl_a"].parent_decision_id
    assert reverted.parent_decision_id == b["impl_b"].parent_decision_id


def test_an_appended_correction_under_the_prompt_returns_an_executing_plan_to_strategize(
    store: Trail, branches: dict[str, Decision]
) -> None:
    # The branch of a decision hanging under the prompt ends at the prompt. A decision made in
    # Execute may not hang there (ADR-007: it must be constrained by a Strategize decision, and a
    # violation reverts the phase), so the correction is a Strategize decision and the plan
    # strategizes again, as a revert of that decision would.
    b = branches
    plan_id = b["root"].plan_id

    fix_a = correct(store, b["strategy_a"].decision_id, "append", "Use a queue", "too slow", principal=LOCAL).correction

    assert fix_a.parent_decision_id == b["root"].decision_id
    assert fix_a.phase is Phase.STRATEGIZE
    assert reading.get_plan(store, plan_id, principal=LOCAL).phase is Phase.STRATEGIZE
    assert analysis.check(store, LoadScope.ALL, principal=LOCAL).ok

    correct(store, b["strategy_b"].decision_id, "append", "Another way", "wrong", principal=LOCAL)

    assert _superseded_by(store, fix_a.decision_id) is None


def test_an_appended_correction_in_a_strategizing_plan_keeps_its_phase(store: Trail) -> None:
    plan, root = instantiate_plan(store, "strategizing", principal=LOCAL)
    strategy = _add(store, plan, STRATEGY, root, "strategy")
    _add(store, plan, STRATEGY, root, "later strategy")

    fix = correct(store, strategy.decision_id, "append", "g", "r", principal=LOCAL).correction

    assert (fix.parent_decision_id, fix.phase) == (root.decision_id, Phase.STRATEGIZE)
    assert reading.get_plan(store, plan.plan_id, principal=LOCAL).phase is Phase.STRATEGIZE


# -- over HTTP ------------------------------------------------------------------------------

CORRECT = """
mutation($input: CorrectDecisionInput!) {
  correctDecision(input: $input) { correction { id parent { id } phase status } invalidated { id } }
}"""

READ = "query($id: ID!) { decision(id: $id) { status supersededBy { id } } }"


def _correct(api: httpx.Client, decision_id: str, mode: str) -> dict[str, Any]:
    payload: dict[str, Any] = ok(api, CORRECT, input={"decisionId": decision_id, "mode": mode, "guidance": f"fix {mode}"})
    return payload["correctDecision"]


def _status(api: httpx.Client, decision_id: str) -> str:
    status: str = ok(api, READ, id=decision_id)["decision"]["status"]
    return status


def test_over_http_a_correction_of_another_branch_leaves_an_appended_correction_current(api: httpx.Client) -> None:
    plan = ok(api, INSTANTIATE, input={"description": "two branches"})["instantiatePlan"]
    root = plan["rootDecision"]["id"]

    def add(decision_type: str, parent: str, name: str) -> str:
        found = record(api, plan["id"], decision_type, question=f"{name}?", context=name, parentDecisionId=parent)
        decision_id: str = found["decision"]["id"]
        return decision_id

    strategy_a, strategy_b = add("STRATEGY_CHOICE", root, "strategy a"), add("STRATEGY_CHOICE", root, "strategy b")
    ok(api, "mutation($p: ID!) { advancePhase(planId: $p, phase: EXECUTE) { id } }", p=plan["id"])
    impl_a = add("IMPLEMENTATION_CHOICE", strategy_a, "impl a")
    impl_b = add("IMPLEMENTATION_CHOICE", strategy_b, "impl b")
    add("TOOL_INVOCATION", impl_b, "tool b")  # the plan's latest decision, on branch B

    fix_a = _correct(api, impl_a, "APPEND")["correction"]
    _correct(api, impl_b, "REVERT")

    assert _status(api, fix_a["id"]) == "CURRENT"
    assert fix_a["parent"] == {"id": strategy_a} and (fix_a["phase"], fix_a["status"]) == ("EXECUTE", "CURRENT")

    by_ancestor = _correct(api, strategy_a, "REVERT")

    assert fix_a["id"] in {d["id"] for d in by_ancestor["invalidated"]}
    assert ok(api, READ, id=fix_a["id"])["decision"] == {
        "status": "SUPERSEDED",
        "supersededBy": {"id": by_ancestor["correction"]["id"]},
    }
