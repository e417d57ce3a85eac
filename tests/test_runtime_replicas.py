"""The runtime's durable work across service processes (issue 45): two `decisiontrail serve` processes on
one Neo4j each replay a correction in exactly one of them, and a service killed in the middle of a
replay finishes it once after a restart. Real processes, real SIGKILL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, analysis, reading
from decisiontrail.access import LOCAL
from reliability.faults import Service
from test_api import ok
from test_runtime_api import ATTEMPT, CORRECT, PLAN, RUN, plan_when, until

GUIDANCE = "Use Redis counters shared by every replica"


def _service(graph: Graph, tmp_path: Path, name: str) -> Service:
    return Service(graph.uri, graph.database, tmp_path / f"{name}.log")


@pytest.fixture
def runtime_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Services whose claims lapse after 3 s without a heartbeat (30 s by default)."""
    monkeypatch.setenv("DECISIONTRAIL_RUN_LEASE", "3")
    monkeypatch.setenv("DECISIONTRAIL_RUNTIME_WORKERS", "2")


@pytest.fixture
def two_services(store: Trail, graph: Graph, tmp_path: Path, runtime_env: None) -> Iterator[tuple[Service, Service]]:
    first, second = _service(graph, tmp_path, "first"), _service(graph, tmp_path, "second")
    try:
        first.start()
        second.start()
        yield first, second
    finally:
        first.stop()
        second.stop()


def _strategy(plan: dict[str, object]) -> str:
    nodes = plan["decisions"]["nodes"]  # type: ignore[index]
    return next(d["id"] for d in nodes if d["decisionType"] == "STRATEGY_CHOICE")  # type: ignore[no-any-return]


def _replayed(api: httpx.Client, decision_id: str) -> dict[str, object]:
    def reported() -> dict[str, object] | None:
        (attempt,) = ok(api, ATTEMPT, id=decision_id)["decision"]["corrections"]
        return attempt if attempt["replayOutcome"] != "PENDING" else None

    found: dict[str, object] = until(reported, timeout=120, what="the replay")
    return found


def _chosen_everywhere(store: Trail, plan_id: str) -> list[str]:
    """Every strategy_choice the plan ever recorded, superseded ones too."""
    return [
        d.chosen_option
        for d in reading.list_decisions(store, plan_id, principal=LOCAL)
        if d.decision_type.value == "strategy_choice"
    ]


def test_two_service_processes_each_replay_a_correction_exactly_once(two_services: tuple[Service, Service], store: Trail) -> None:
    first, second = two_services
    with httpx.Client(base_url=first.url, timeout=30) as a, httpx.Client(base_url=second.url, timeout=30) as b:
        started = [ok(a if i % 2 else b, RUN, input={"description": f"Rate limits for service {i}"})["runPlan"] for i in range(4)]
        plans = [plan_when(a, p["id"], "SUCCEEDED") for p in started]
        corrected = [
            ok(b if i % 2 else a, CORRECT, input={"decisionId": _strategy(p), "mode": "REVERT", "guidance": GUIDANCE})
            for i, p in enumerate(plans)
        ]
        attempts = [_replayed(a, _strategy(p)) for p in plans]
        settled = [plan_when(b, p["id"], "SUCCEEDED") for p in plans]

    assert [c["correctDecision"]["attempt"]["attemptId"] for c in corrected] == [x["attemptId"] for x in attempts]
    assert {x["replayOutcome"] for x in attempts} == {"REPLAYED"}
    for plan in settled:
        # Replayed once: one strategy choice with the guidance, ever; one replay generation.
        assert _chosen_everywhere(store, plan["id"]).count(GUIDANCE) == 1
        assert plan["run"]["generation"] == 1 and plan["phase"] == "APPLY"
    workers = {str(x["replayDetail"]).rsplit("worker ", 1)[-1] for x in attempts}
    assert workers and all(w.count(":") == 2 for w in workers), workers  # each names the one worker that ran it
    assert analysis.check_all(store, principal=LOCAL).ok


def test_a_service_killed_during_a_replay_finishes_it_once_after_a_restart(
    store: Trail, graph: Graph, tmp_path: Path, runtime_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DECISIONTRAIL_SCRIPTED_PACE", "0.5")  # each scripted turn takes half a second
    service = _service(graph, tmp_path, "service")
    try:
        service.start()
        with httpx.Client(base_url=service.url, timeout=30) as api:
            plan = plan_when(api, ok(api, RUN, input={"description": "Rate limits"})["runPlan"]["id"], "SUCCEEDED")
            strategy = _strategy(plan)
            ok(api, CORRECT, input={"decisionId": strategy, "mode": "REVERT", "guidance": GUIDANCE})

            # Killed once the replay has re-decided the strategy, before it has finished the plan.
            until(lambda: GUIDANCE in _chosen_everywhere(store, plan["id"]), what="the replayed strategy")
            assert ok(api, PLAN, id=plan["id"])["plan"]["run"]["status"] == "RUNNING"
            service.kill()

        monkeypatch.setenv("DECISIONTRAIL_SCRIPTED_PACE", "0")
        service.start()
        with httpx.Client(base_url=service.url, timeout=30) as api:
            attempt = _replayed(api, strategy)
            after = plan_when(api, plan["id"], "SUCCEEDED")
    finally:
        service.stop()

    assert attempt["replayOutcome"] == "REPLAYED", attempt["replayDetail"]
    assert _chosen_everywhere(store, plan["id"]).count(GUIDANCE) == 1  # resumed, not run again
    assert after["phase"] == "APPLY" and after["run"]["generation"] == 1
    live = [c for c in after["childPlans"] if c["invalidatedAt"] is None]
    assert len(after["childPlans"]) == 2 and len(live) == 1  # the replay's child; the first one invalidated
    assert live[0]["phase"] == "APPLY" and live[0]["run"]["status"] == "SUCCEEDED"
    assert analysis.check_all(store, principal=LOCAL).ok
