"""Nothing waits forever: spans whose trace's root never came expire at a prune, and a trace's
marker goes with the last plan it was imported as (services.retention, services.importing)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from decisiontrail.access import LOCAL
from decisiontrail.cli import main
from decisiontrail.domain import Phase
from decisiontrail.domain.decision import utc_now
from decisiontrail.domain.retention import TRACE_WAIT, PruneResult, RetentionPolicy
from decisiontrail.domain.traces import Span
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import Graph, retention
from decisiontrail.services import Trail
from decisiontrail.services.correction import correct
from decisiontrail.services.importing import ImportReport, import_spans
from decisiontrail.services.lifecycle import advance_phase, instantiate_plan
from decisiontrail.services.retention import prune
from decisiontrail.settings import RetentionSettings
from factories import to_execute

POLICY = RetentionPolicy(older_than=timedelta(days=30))
"""History kept 30 days; spans wait the default week for their root."""

T0 = 1_764_547_200_000_000_000  # 2025-12-01T00:00:00Z in ns
MS = 1_000_000
ROOT, CHILD, CHOICE = "b000000000000001", "b000000000000002", "b000000000000003"


def _trace(n: int) -> str:
    return f"{n:032x}"


def _span(trace_id: str, span_id: str, start: int, parent: str | None = None, **attributes: Any) -> Span:
    return Span(
        trace_id,
        span_id,
        span_id,
        T0 + start * MS,
        T0 + (start + 100) * MS,
        parent,
        attributes={k.replace("__", "."): v for k, v in attributes.items()},
    )


def _agent(trace_id: str, span_id: str = ROOT, parent: str | None = None, start: int = 0) -> Span:
    return _span(trace_id, span_id, start, parent, openinference__span__kind="AGENT", input__value=f"task {span_id}")


def _choice(trace_id: str, parent: str = ROOT) -> Span:
    return _span(
        trace_id,
        CHOICE,
        300,
        parent,
        openinference__span__kind="DECISION",
        decisiontrail__decision__type="implementation_choice",
        decisiontrail__decision__question="Which format?",
        decisiontrail__decision__chosen_option="bullet points",
    )


def _send(store: Trail, *spans: Span) -> ImportReport:
    return import_spans(store, list(spans), principal=LOCAL)


def _kept(graph: Graph) -> dict[str, Any]:
    """The traces' markers and kept spans as stored: trace id -> (imported, span count)."""
    records, _, _ = graph.driver.execute_query(
        "MATCH (t:Trace) RETURN t.trace_id AS trace_id, t.imported_at IS NOT NULL AS imported, "
        "COUNT { MATCH (s:Span {trace_id: t.trace_id}) } AS spans",
        database_=graph.database,
        routing_="r",
    )
    return {r["trace_id"]: (r["imported"], r["spans"]) for r in records}


def _orphan_spans(graph: Graph) -> int:
    records, _, _ = graph.driver.execute_query(
        "MATCH (s:Span) WHERE NOT EXISTS { MATCH (:Trace {trace_id: s.trace_id}) } RETURN count(s) AS n",
        database_=graph.database,
        routing_="r",
    )
    return int(records[0]["n"])


def _plan_exists(graph: Graph, plan_id: str) -> bool:
    records, _, _ = graph.driver.execute_query(
        "RETURN EXISTS { MATCH (:Plan {plan_id: $id}) } AS found", id=plan_id, database_=graph.database, routing_="r"
    )
    return bool(records[0]["found"])


# -- spans waiting for a root that never comes ---------------------------------------------------


def test_a_trace_waiting_longer_than_the_wait_expires_and_a_younger_one_stays(store: Trail, graph: Graph) -> None:
    old, young = _trace(1), _trace(2)
    assert _send(store, _agent(old, CHILD, parent=ROOT), _choice(old, parent=CHILD)).waiting == 2
    between = utc_now()
    assert _send(store, _agent(young, CHILD, parent=ROOT)).waiting == 1

    # A week after ``between``: the old trace has waited longer than that, the young one not quite.
    done = prune(store, POLICY, dry_run=False, now=between + TRACE_WAIT, principal=LOCAL)

    assert done.expired_trace_ids == (old,) and done.expired_spans == 2
    assert done.spans_cutoff == between
    assert _kept(graph) == {young: (False, 1)}
    assert "expired 1 trace(s) whose root span never came" in done.render()


def test_a_span_received_since_the_cutoff_keeps_its_whole_trace_waiting(store: Trail, graph: Graph) -> None:
    trace = _trace(3)
    _send(store, _agent(trace, CHILD, parent=ROOT))
    between = utc_now()
    _send(store, _choice(trace, parent=CHILD))  # a later span of the same trace: it is still coming in

    done = prune(store, POLICY, dry_run=False, now=between + TRACE_WAIT, principal=LOCAL)

    assert done.expired_trace_ids == ()
    assert _kept(graph) == {trace: (False, 2)}


def test_an_imported_trace_is_never_expired(store: Trail, graph: Graph) -> None:
    whole, completed = _trace(4), _trace(5)
    imported = _send(store, _agent(whole), _choice(whole))
    _send(store, _choice(completed))  # waits, then its root comes
    _send(store, _agent(completed))

    done = prune(store, POLICY, dry_run=False, now=utc_now() + timedelta(days=365), principal=LOCAL)

    assert done.expired_trace_ids == () and done.expired_spans == 0 and done.empty
    assert _kept(graph) == {whole: (True, 0), completed: (True, 0)}
    assert all(_plan_exists(graph, p) for p in imported.plan_ids)
    # Sent again, it is still told from a new trace: nothing is recorded twice.
    assert _send(store, _agent(whole), _choice(whole)).already_imported == 2


def test_the_dry_run_counts_what_expires_and_writes_nothing(store: Trail, graph: Graph) -> None:
    traces = [_trace(6), _trace(7), _trace(8)]
    for trace in traces:
        _send(store, _agent(trace, CHILD, parent=ROOT), _choice(trace, parent=CHILD))
    before = _kept(graph)
    now = utc_now() + timedelta(days=8)

    dry = prune(store, POLICY, dry_run=True, now=now, principal=LOCAL)

    assert _kept(graph) == before
    assert dry.dry_run and dry.expired_trace_ids == tuple(traces) and dry.expired_spans == 6
    assert "dry run: would expire 3 trace(s)" in dry.render()

    messages: list[str] = []
    done = prune(store, POLICY, dry_run=False, now=now, progress=messages.append, batch_size=2, principal=LOCAL)

    assert done.model_dump(exclude={"dry_run"}) == dry.model_dump(exclude={"dry_run"})
    assert ["expired 2/3 trace(s)", "expired 3/3 trace(s)"] == [m for m in messages if m.startswith("expired")]
    assert _kept(graph) == {} and _orphan_spans(graph) == 0


def test_a_late_span_of_an_expired_trace_is_kept_again_as_a_new_wait(store: Trail, graph: Graph) -> None:
    trace = _trace(9)
    _send(store, _agent(trace, CHILD, parent=ROOT))
    prune(store, POLICY, dry_run=False, now=utc_now() + timedelta(days=8), principal=LOCAL)
    assert _kept(graph) == {}

    late = _send(store, _choice(trace, parent=CHILD))

    assert late.waiting == 1 and late.traces == ()
    assert _kept(graph) == {trace: (False, 1)}
    # Its root coming at last imports what is kept since (the expired span is gone for good).
    assert _send(store, _agent(trace)).traces == (trace,)
    assert _kept(graph) == {trace: (True, 0)}


def test_a_trace_judged_again_under_its_lock_stays_when_it_was_imported_meanwhile(store: Trail, graph: Graph) -> None:
    # The prune reads, then deletes in batches: a root arriving in between keeps its trace.
    trace = _trace(10)
    _send(store, _choice(trace))
    cutoff = utc_now() + timedelta(days=1)
    found = store.database.read(retention.find_prunable, cutoff, cutoff, False)
    assert found.expired_trace_ids == (trace,)
    _send(store, _agent(trace))

    row = store.database.write(retention.expire_traces, found.expired_trace_ids, cutoff)

    assert row == {"expired_ids": [], "expired_spans": 0}
    assert _kept(graph) == {trace: (True, 0)}


# -- a trace's marker goes with its plans -------------------------------------------------------


def _nested(trace_id: str) -> list[Span]:
    """An agent that hands its task to a sub-agent: a plan with a child plan, spawned by a decision."""
    return [_agent(trace_id), _agent(trace_id, CHILD, parent=ROOT, start=100), _choice(trace_id, parent=CHILD)]


def _strategy_of(graph: Graph, plan_id: str) -> str:
    records, _, _ = graph.driver.execute_query(
        "MATCH (d:Decision {plan_id: $plan_id, decision_type: 'strategy_choice'}) WHERE d.superseded_at IS NULL "
        "RETURN d.decision_id AS id",
        plan_id=plan_id,
        database_=graph.database,
        routing_="r",
    )
    (record,) = records
    return str(record["id"])


def test_a_pruned_child_plan_leaves_the_marker_while_its_trace_keeps_a_plan(store: Trail, graph: Graph) -> None:
    trace = _trace(11)
    imported = _send(store, *_nested(trace))
    top, child = imported.plan_ids
    correct(store, _strategy_of(graph, top), "revert", "Do it alone", "no sub-agent needed", principal=LOCAL)
    to_execute(store, top)
    advance_phase(store, top, Phase.APPLY, principal=LOCAL)

    done = prune(store, POLICY, dry_run=False, now=utc_now() + timedelta(days=40), principal=LOCAL)

    assert done.plan_ids == (child,) and done.traces == 0
    assert _kept(graph) == {trace: (True, 0)}
    # Sent again, the trace records nothing: its child plan is not brought back, and nothing is refused.
    again = _send(store, *_nested(trace))
    assert again.traces == () and again.plan_ids == ()
    assert not _plan_exists(graph, child)


def test_the_marker_goes_with_the_last_plan_its_trace_was_imported_as(store: Trail, graph: Graph) -> None:
    trace = _trace(12)
    (plan_id,) = _send(store, _agent(trace), _choice(trace)).plan_ids
    # Retention prunes only child plans, and a trace's own top plans are no one's child: the graph is
    # bent here to the shape a prune deletes whole, the imported plan invalidated under an applied one.
    host, _ = instantiate_plan(store, "hosts the imported plan", principal=LOCAL)
    to_execute(store, host.plan_id)
    advance_phase(store, host.plan_id, Phase.APPLY, principal=LOCAL)
    graph.driver.execute_query(
        "MATCH (plan:Plan {plan_id: $plan_id}), (host:Plan {plan_id: $host}) "
        "CREATE (plan)-[:CHILD_OF]->(host) SET plan.invalidated_at = datetime() "
        "WITH plan MATCH (d:Decision)-[:IN_PLAN]->(plan) SET d.superseded_at = datetime()",
        plan_id=plan_id,
        host=host.plan_id,
        database_=graph.database,
    )
    now = utc_now() + timedelta(days=40)

    dry = prune(store, POLICY, dry_run=True, now=now, principal=LOCAL)
    assert dry.plan_ids == (plan_id,) and dry.traces == 1 and trace in _kept(graph)
    done = prune(store, POLICY, dry_run=False, now=now, principal=LOCAL)

    assert done.plan_ids == (plan_id,) and done.traces == 1
    assert "the marker of 1 trace(s)" in done.render()
    assert _kept(graph) == {}
    # Forgotten with its plans, the trace sent again is a new trace: imported afresh.
    again = _send(store, _agent(trace), _choice(trace))
    assert again.traces == (trace,) and again.plan_ids == (plan_id,)


def test_deleting_a_traces_last_plan_takes_spans_of_it_still_kept(store: Trail, graph: Graph) -> None:
    trace = _trace(13)
    (plan_id,) = _send(store, _agent(trace)).plan_ids
    graph.driver.execute_query(  # a span kept for the trace, as a store of an older version may hold
        "CREATE (:Span {key: $trace + ':x', trace_id: $trace, span_id: 'x', is_root: false, body: '{}'})",
        trace=trace,
        database_=graph.database,
    )

    row = store.database.write(retention.delete_plans, [plan_id])

    assert row["deleted_traces"] == 1
    assert _kept(graph) == {} and _orphan_spans(graph) == 0


# -- the setting and the command -----------------------------------------------------------------


def test_the_trace_wait_is_a_setting_with_a_default_of_a_week() -> None:
    assert RetentionSettings.from_env({}).trace_wait == TRACE_WAIT == timedelta(days=7)
    assert RetentionSettings.from_env({"DECISIONTRAIL_TRACE_WAIT": "12h"}).trace_wait == timedelta(hours=12)
    assert RetentionSettings.from_env({"DECISIONTRAIL_TRACE_WAIT": "3"}).trace_wait == timedelta(days=3)


@pytest.mark.parametrize("text", ["soon", "-1d", "7 days", "1y"])
def test_an_unreadable_trace_wait_is_refused_naming_the_setting(text: str) -> None:
    with pytest.raises(ValidationFailed, match=r"^DECISIONTRAIL_TRACE_WAIT: .* is not an age") as refused:
        RetentionSettings.from_env({"DECISIONTRAIL_TRACE_WAIT": text})
    assert refused.value.field == "DECISIONTRAIL_TRACE_WAIT"


def test_a_negative_trace_wait_is_refused_by_name() -> None:
    with pytest.raises(ValidationFailed, match="trace_wait: a retention age cannot be negative"):
        RetentionPolicy(older_than=timedelta(days=1), trace_wait=timedelta(days=-1))


def test_a_result_without_a_spans_cutoff_says_nothing_of_traces() -> None:
    result = PruneResult(cutoff=datetime.fromisoformat("2026-05-01T00:00:00+00:00"), dry_run=True)
    assert result.render() == "nothing to prune: no superseded history of applied plans from before 2026-05-01T00:00:00+00:00"


@pytest.fixture
def cli_env(store: Trail, graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("NEO4J_URI", graph.uri)
    monkeypatch.setenv("NEO4J_DATABASE", graph.database)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DECISIONTRAIL_TRACE_WAIT", raising=False)
    yield


def test_prune_from_the_cli_expires_by_the_option_else_the_setting(
    store: Trail, graph: Graph, cli_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(14)
    _send(store, _choice(trace))

    assert main(["-q", "prune", "--older-than", "30d"]) == 0  # the default week: it waits
    assert "nothing to expire" in capsys.readouterr().out
    assert main(["-q", "prune", "--older-than", "30d", "--spans-older-than", "0", "--dry-run", "--format", "json"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert (dry["dry_run"], dry["expired_trace_ids"], dry["expired_spans"]) == (True, [trace], 1)
    assert _kept(graph) == {trace: (False, 1)}

    monkeypatch.setenv("DECISIONTRAIL_TRACE_WAIT", "0m")
    assert main(["-q", "prune", "--older-than", "30d"]) == 0

    assert "expired 1 trace(s) whose root span never came" in capsys.readouterr().out
    assert _kept(graph) == {}


def test_prune_from_the_cli_refuses_an_unreadable_wait_by_name(
    cli_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-q", "prune", "--older-than", "30d", "--spans-older-than", "a while"]) == 2
    assert "--spans-older-than: 'a while' is not an age" in capsys.readouterr().err
    monkeypatch.setenv("DECISIONTRAIL_TRACE_WAIT", "a while")
    assert main(["-q", "prune", "--older-than", "30d"]) == 2
    assert "DECISIONTRAIL_TRACE_WAIT: 'a while' is not an age" in capsys.readouterr().err
