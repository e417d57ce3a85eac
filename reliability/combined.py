"""Two faults at once, each aimed at the moment it hurts most, under the load.

- ``correction_crash``: Neo4j killed (SIGKILL) just after a correction's COMMIT reached it, while
  another plan's replay is running in the service's runtime. The correction's client cannot tell
  whether it was made; the replay loses its database mid-turn.
- ``otlp_service_kill``: the service killed (SIGKILL) twice during an OTLP import: once while its
  transaction runs (nothing of it may stay), once just after its COMMIT reached Neo4j (made, the
  answer lost). The exporter sends the same request again each time, as OTLP exporters do.
- ``lost_batch``: answers lost on both sides of the service while the load records batches: the
  HTTP answer of every third ``recordDecisions`` dropped on its way to the client (the client
  sends it again with the same idempotency key), and Neo4j's answer to recordings' COMMITs lost
  on their way to the service (its driver waits, gives the connection up, the request is
  answered UNAVAILABLE and sent again).

The faults are placed by ``reliability.proxy``: the service reaches Neo4j (and, in ``lost_batch``,
the load reaches the service) through a proxy that recognises the statement by its text and the
Bolt COMMIT by its bytes. After each scenario every acknowledged write is held against the
database (``load.verify``: stored once, nothing half-written, every check rule clean), and what
the scenario did itself is checked apart: each correction made once and its replay run once, each
trace imported once and whole.
"""

from __future__ import annotations

from collections import Counter
import json
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from decisiontrail.cypher import query
from decisiontrail.domain.ids import new_ulid
from decisiontrail.domain.traces.steps import recorded_id
from decisiontrail.graphdb import Graph
from decisiontrail.otlp import Encoding, decode
from decisiontrail.services import Trail
from bench.spans import otlp_export
from reliability import load
from reliability.balanced import (
    ATTEMPTS,
    CORRECT,
    GUIDANCE,
    RUN,
    _environment,
    _post,
    _replay_of,
    _run_when,
    _strategy,
    _verify_replays,
)
from reliability.faults import Service, _finish_load, _first_success, _graph, _kill_if_running, _own_neo4j, judge_windows
from reliability.outcome import Outcome
from reliability.proxy import LoseAnswers, Proxy, Trap, deafen

Progress = Callable[[str], None]

RECOVERY_BOUND = 120.0
"""Seconds within which the service must answer again after Neo4j's return (recovering its store
from the transaction log after a kill, while the load's retries and the runtime's claims arrive)."""


def _say(message: str) -> None:
    print(f"[combined] {message}", file=sys.stderr, flush=True)


def _marker(statement: str) -> bytes:
    """What a statement's text is recognised by on the wire: its first line (the driver sends the text as it is)."""
    return query(statement).splitlines()[0].encode()


def _port(uri: str) -> int:
    port = urlsplit(uri).port
    assert port is not None, uri
    return port


@contextmanager
def _through_proxy(scratch_dir: Path, progress: Progress, tap: Trap | None = None) -> Iterator[tuple[Any, Proxy, Graph]]:
    """A Neo4j of the scenario's own, a proxy in front of it (what the service is given), and a
    graph straight on it (what the scenario verifies with)."""
    with ExitStack() as stack:
        neo4j = stack.enter_context(_own_neo4j(scratch_dir, progress, heap_mb=512, pagecache_mb=64))
        assert neo4j.uri is not None
        proxy = stack.enter_context(Proxy("127.0.0.1", _port(neo4j.uri), tap=tap))
        graph = stack.enter_context(_graph(neo4j.uri))
        yield neo4j, proxy, graph


def _error_code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors") or []
    return str((errors[0].get("extensions") or {}).get("code") or "UNEXPECTED") if errors else None


def correct_surely(url: str, decision_id: str, timeout: float = 300.0) -> dict[str, Any]:
    """Correct ``decision_id`` (REVERT, with the guidance the runtime's replay then chooses) and
    make sure it is made once. A correction has no idempotency key: after an answer lost or
    UNAVAILABLE, whether it was made is read back (once the service answers again) before it is
    sent again. Returns the attempt's id, how many times it was sent, what each unanswered try
    met, and whether the read-back found it made (the commit went through before the fault)."""
    answers: list[str] = []
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < deadline:
            try:
                body = client.post(
                    "/graphql",
                    json={
                        "query": CORRECT,
                        "variables": {"input": {"decisionId": decision_id, "mode": "REVERT", "guidance": GUIDANCE}},
                    },
                ).json()
            except (httpx.HTTPError, ValueError) as e:
                answers.append(type(e).__name__)
            else:
                code = _error_code(body)
                if code is None:
                    attempt = body["data"]["correctDecision"]["attempt"]["attemptId"]
                    return {"attempt": str(attempt), "sent": len(answers) + 1, "unanswered": answers, "found_made": False}
                if code not in ("UNAVAILABLE", "TIMEOUT"):
                    raise RuntimeError(f"correctDecision({decision_id}) answered {body['errors']}")
                answers.append(code)
            made = _read_back(client, decision_id, deadline)
            if made:
                return {"attempt": made[0]["attemptId"], "sent": len(answers), "unanswered": answers, "found_made": True}
        raise RuntimeError(f"the correction of {decision_id} was not made within {timeout:.0f} s: {answers}")


def _read_back(client: httpx.Client, decision_id: str, deadline: float) -> list[dict[str, Any]]:
    """The decision's correction attempts, read once the service answers reads again."""
    while time.monotonic() < deadline:
        try:
            return list(_post(client, ATTEMPTS, timeout=10, id=decision_id)["decision"]["corrections"])
        except RuntimeError:  # UNAVAILABLE while Neo4j is down, or no answer: ask again
            time.sleep(0.5)
    raise RuntimeError(f"the corrections of {decision_id} could not be read back")


def correction_crash(
    scratch_dir: Path,
    *,
    seconds: float = 30.0,
    clients: int = 4,
    down_seconds: float = 3.0,
    seed: int = 0,
    progress: Progress = _say,
) -> Outcome:
    """Two plans run by the service's runtime and corrected under a load: the first correction's
    replay is running when the second correction's COMMIT reaches Neo4j, and Neo4j is killed at
    that instant, down ``down_seconds``, then started again. Required: the service answers again
    by itself; the second correction is made exactly once (read back before it is sent again)
    and wholly (nothing half superseded: ``verify``, check --all); each replay is REPLAYED and
    ran once (one generation, the guidance chosen once) though the first lost its database
    mid-turn; the load's acknowledged writes stored once; its UNAVAILABLE answers only inside the
    fault's window."""
    outcome = Outcome(
        "correction_crash",
        f"Neo4j killed (SIGKILL) at a correction's COMMIT while another plan's replay runs, under a load of {clients} clients",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "correction-crash.jsonl"
    journal.unlink(missing_ok=True)
    grace = 60.0
    killed_at: list[float] = []
    with ExitStack() as stack:
        trap = Trap(_marker("correction/begin_correction"), lambda link: None)
        neo4j, proxy, graph = stack.enter_context(_through_proxy(scratch_dir, progress, trap))

        def kill(link: object) -> None:
            killed_at.append(time.time())
            neo4j.kill()

        trap.then = kill
        # A turn that met Neo4j gone is taken up again once its claim lapses: the lease is the
        # default's (30 s), which heartbeats keep while a Neo4j just recovered answers slowly (with
        # 3 s and 10 s, slow heartbeats let claims lapse until the run was given up). Each scripted
        # turn takes a moment, so that the first replay is under way when Neo4j dies.
        stack.enter_context(_environment(DECISIONTRAIL_RUNTIME_WORKERS="2", DECISIONTRAIL_SCRIPTED_PACE="0.3"))
        service = Service(f"bolt://127.0.0.1:{proxy.port}", graph.database, scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        pid = service.pid
        generator = load.spawn(service.url, journal, seconds=seconds + 300, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        client = stack.enter_context(httpx.Client(base_url=service.url, timeout=60))
        plan_ids = [_post(client, RUN, input={"description": f"Rate limits, crash test {i}"})["runPlan"]["id"] for i in (1, 2)]
        strategies = [_strategy(_run_when(client, p, lambda s: s == "SUCCEEDED", "the run")) for p in plan_ids]
        time.sleep(seconds / 3)

        first = correct_surely(service.url, strategies[0])
        running = _run_when(client, plan_ids[0], lambda s: s == "RUNNING", "the first correction's replay")
        progress(f"plan {plan_ids[0]}'s replay is running (generation {running['run']['generation']}); correcting the other")
        replay_running = _run_status(graph, plan_ids[0])
        trap.arm()
        began = time.time()
        second: dict[str, Any] = {}
        sender = threading.Thread(target=lambda: second.update(correct_surely(service.url, strategies[1])), daemon=True)
        sender.start()
        deadline = time.monotonic() + 60
        while not killed_at and time.monotonic() < deadline:
            time.sleep(0.01)
        outcome.require(bool(killed_at), "the second correction's COMMIT never reached Neo4j through the proxy")
        progress(f"Neo4j killed at the correction's COMMIT; starting it again in {down_seconds:.0f} s")
        time.sleep(down_seconds)
        neo4j.start()
        recovery = _first_success(service.url, timeout=RECOVERY_BOUND)
        windows = [(began, time.time())]
        outcome.require(
            recovery is not None and service.alive and service.pid == pid,
            f"the service did not answer again by itself within {RECOVERY_BOUND:.0f} s of Neo4j's return",
        )
        sender.join(300)
        outcome.require(bool(second), "the second correction was not made")
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))
        _finish_load(generator, outcome, grace)

        replayed = [_replay_of(client, s) for s in strategies]
        settled = [
            _run_when(client, p, lambda s: s in ("SUCCEEDED", "FAILED", "CANCELLED"), "the end of the replay's run")
            for p in plan_ids
        ]
        attempts = [str(first["attempt"]), str(second.get("attempt"))]
        made = [_post(client, ATTEMPTS, id=s)["decision"]["corrections"] for s in strategies]
        outcome.require(
            [len(m) for m in made] == [1, 1],
            f"the corrected decisions have {[len(m) for m in made]} correction attempts, not 1 each",
        )
        events = load.read_journal(journal)
        silent = load.silent_in_log(service.log_path)
        # Neo4j recovering its store after the kill may answer slowly: a TIMEOUT then is an answer
        # (nothing written, sent again), excused inside the fault's window like an UNAVAILABLE.
        load.verify(events, graph, outcome, expected_codes={"UNAVAILABLE", "TIMEOUT"})
        _verify_replays(outcome, Trail.on(graph), plan_ids, attempts, replayed, settled)
    judge_windows(outcome, events, windows, silent, codes=("UNAVAILABLE", "TIMEOUT"))
    outcome.require(
        outcome.figures.get("unresolved_writes", 0) == 0,
        f"{outcome.figures.get('unresolved_writes')} write(s) never got an answer",
    )
    outcome.figures.update(
        {
            "faults_injected": 1,
            "faults_survived": 1 if outcome.passed else 0,
            "the other plan's replay when the correction was sent": replay_running,
            "correction made before the kill (found on reading back)": second.get("found_made"),
            "correction sent": second.get("sent"),
            "correction's unanswered tries": second.get("unanswered"),
            "recovery_seconds": [round(recovery, 2)] if recovery is not None else [],
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


def _run_status(graph: Graph, plan_id: str) -> str | None:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (r:PlanRun {plan_id: $id}) RETURN r.status AS status", id=plan_id).single()
    return None if record is None else str(record["status"])


# -- the service killed during an OTLP import ----------------------------------------------------


def export_until_answered(url: str, body: bytes, timeout: float = 300.0) -> dict[str, Any]:
    """POST the export until the service answers it 200, as an OTLP exporter retries; what each try met."""
    tries: list[str] = []
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < deadline:
            try:
                response = client.post("/v1/traces", content=body, headers={"content-type": "application/json"})
            except httpx.HTTPError as e:
                tries.append(type(e).__name__)
            else:
                if response.status_code == 200:
                    return {"tries": tries, "answer": response.json()}
                tries.append(f"HTTP {response.status_code}")
            time.sleep(0.5)
    raise RuntimeError(f"the export was not answered 200 within {timeout:.0f} s: {tries}")


def imported_whole(graph: Graph, body: bytes) -> dict[str, Any]:
    """Per trace of the export: how many of what its spans become (plans and decisions, by their
    derived ids) are stored, of how many; and whether its trace is marked imported. One statement,
    so that every trace is read at the same moment."""
    expected: dict[str, list[str]] = {}
    for span in decode(body, Encoding.JSON):
        made = recorded_id(span)
        if made is not None:
            expected.setdefault(span.trace_id, []).append(made)
    with graph.driver.session(database=graph.database) as session:
        rows = session.run(
            "UNWIND $traces AS trace "
            "OPTIONAL MATCH (t:Trace {trace_id: trace.id}) "
            "CALL (trace) { UNWIND trace.ids AS id OPTIONAL MATCH (d:Decision {decision_id: id}) "
            "OPTIONAL MATCH (p:Plan {plan_id: id}) RETURN count(d) + count(p) AS stored } "
            "RETURN trace.id AS trace_id, size(trace.ids) AS expected, stored, t.imported_at IS NOT NULL AS imported",
            traces=[{"id": trace_id, "ids": ids} for trace_id, ids in expected.items()],
        ).data()
    return {r["trace_id"]: {"expected": r["expected"], "stored": r["stored"], "imported": r["imported"]} for r in rows}


def settled(graph: Graph, body: bytes, *, within: float = 10.0) -> tuple[dict[str, Any], int]:
    """``imported_whole`` once it reads the same twice 0.2 s apart (within ``within`` seconds): with
    the service killed just after its COMMIT reached Neo4j, the commit may still be being applied,
    and a read statement is read-committed, record by record (it can see part of a transaction
    whose commit lands while it runs). Nothing writes once the service is dead, so what is read
    then is what the import left. Also how many reads that took."""
    deadline = time.monotonic() + within
    last, reads = imported_whole(graph, body), 1
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now, reads = imported_whole(graph, body), reads + 1
        if now == last:
            break
        last = now
    return last, reads


def otlp_service_kill(
    scratch_dir: Path,
    *,
    seconds: float = 30.0,
    clients: int = 4,
    traces: int = 20,
    decisions: int = 40,
    seed: int = 0,
    progress: Progress = _say,
) -> Outcome:
    """Exports of ``traces`` traces of ``decisions`` decisions each, under a load; the service
    SIGKILLed while the first export's import runs (its transaction open in Neo4j), and while the
    second's COMMIT reaches Neo4j; started again each time, the exporter sends again. Required:
    every trace imported once and whole (all its plans and decisions, marked imported), a trace
    never half there between the faults, the load's acknowledged writes stored once, check --all
    clean."""
    outcome = Outcome(
        "otlp_service_kill",
        f"the service killed (SIGKILL) during OTLP imports of {traces} traces x {decisions + 1} spans: once "
        f"mid-transaction, once at its COMMIT; under a load of {clients} clients",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "otlp-service-kill.jsonl"
    journal.unlink(missing_ok=True)
    grace = 60.0
    moments: dict[str, Any] = {}
    with ExitStack() as stack:
        trap = Trap(_marker("trace/lock_traces"), lambda link: None)
        neo4j, proxy, graph = stack.enter_context(_through_proxy(scratch_dir, progress, trap))
        service = Service(f"bolt://127.0.0.1:{proxy.port}", graph.database, scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        generator = load.spawn(service.url, journal, seconds=seconds + 300, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        killed = threading.Event()

        def kill(link: object) -> None:
            service.kill()
            killed.set()

        trap.then = kill
        for at in ("statement", "commit"):
            time.sleep(seconds / 3)
            body = otlp_export(traces, decisions, tag=f"{seed}-{at}")
            trap.at = at
            killed.clear()
            trap.arm()
            answered: dict[str, Any] = {}
            exporter = threading.Thread(
                target=lambda b=body, into=answered: into.update(export_until_answered(service.url, b)), daemon=True
            )
            exporter.start()
            outcome.require(killed.wait(120), f"the service was not killed at the import's {at}")
            between, reads = settled(graph, body)  # the service dead: what its import left
            half = {t: f for t, f in between.items() if f["stored"] not in (0, f["expected"])}
            outcome.require(not half, f"killed at the import's {at}: traces half imported: {half}")
            down = service.start()
            progress(f"the service killed at the import's {at}; back after {down:.1f} s")
            exporter.join(300)
            after = imported_whole(graph, body)
            stored_whole = sum(1 for f in after.values() if f["stored"] == f["expected"] and f["imported"])
            outcome.require(
                stored_whole == traces, f"killed at the import's {at}: {stored_whole} of {traces} traces imported whole: {after}"
            )
            moments[at] = {
                "traces stored whole when the service died": sum(1 for f in between.values() if f["stored"] == f["expected"]),
                "reads until the store settled": reads,
                "exporter's tries before the answer": dict(Counter(answered.get("tries") or [])),
                "answer": answered.get("answer"),
                "service_down_seconds": round(down, 1),
                "traces imported whole": stored_whole,
            }
        time.sleep(seconds / 3)
        _finish_load(generator, outcome, grace)
        events = load.read_journal(journal)
        silent = load.silent_in_log(service.log_path)
        outcome.figures["connections given up silent (answers lost on the way)"] = silent
        load.verify(events, graph, outcome, expected_codes={"UNREACHABLE"}, explained={"UNAVAILABLE": silent})
    outcome.require(
        outcome.figures.get("unresolved_writes", 0) == 0,
        f"{outcome.figures.get('unresolved_writes')} write(s) never got an answer",
    )
    outcome.figures.update(
        {
            "faults_injected": 2,
            "faults_survived": 2 if outcome.passed else 0,
            "killed mid-import": moments.get("statement"),
            "killed at the import's commit": moments.get("commit"),
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


# -- answers lost on both sides during batches ---------------------------------------------------


class Batcher:
    """One more load client, in this process, that records nothing but batches (``recordDecisions``
    of 2 to 5 decisions, each with its idempotency key, sent again until answered) into a plan of
    its own, into a journal of its own that ``load.verify`` reads with the load's."""

    def __init__(self, url: str, journal: Path, seed: int) -> None:
        self.journal = load.Journal(journal)
        self.client = load.Client(
            99, load.Api(url, None, timeout=90.0), self.journal, load.Stop(grace=60.0), new_ulid(), random.Random(seed)
        )
        self._thread = threading.Thread(target=self._run, name="batcher", daemon=True)
        self.batches = 0

    def _run(self) -> None:
        plan = self.client.instantiate("batches")
        while plan is not None and not self.client.stop.stopping:
            self.client.record_batch(plan)
            self.batches += 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """No new batch; one under way is sent until answered (the load's grace)."""
        self.client.stop.start(0)
        self._thread.join(120)
        self.client.api.close()
        self.journal.close()


def lost_batch(
    scratch_dir: Path,
    *,
    seconds: float = 30.0,
    clients: int = 4,
    every: int = 2,
    commits: int = 2,
    seed: int = 0,
    progress: Progress = _say,
) -> Outcome:
    """The load through a proxy that, in the middle third of the run, drops the HTTP answer of
    every ``every``-th ``recordDecisions`` (the connection closed, the client sends the batch again
    with its idempotency key), while the service's proxy to Neo4j loses the answers to
    ``commits`` recordings' COMMITs (the connection goes silent; the driver gives it up after its
    receive timeout, the request is UNAVAILABLE and sent again). Required: every acknowledged
    decision stored once, nothing half-written, check --all clean; UNAVAILABLE answers no more
    than the connections the service logged given up silent."""
    outcome = Outcome(
        "lost_batch",
        f"answers lost both ways during batches: every {every}th recordDecisions answer dropped before the client, "
        f"{commits} recordings' COMMIT answers lost before the service; a load of {clients} clients",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal, batches = scratch_dir / "lost-batch.jsonl", scratch_dir / "lost-batch-batches.jsonl"
    journal.unlink(missing_ok=True)
    batches.unlink(missing_ok=True)
    grace = 60.0
    with ExitStack() as stack:
        silence = Trap(_marker("decision/create_decisions"), deafen, times=commits)
        neo4j, proxy, graph = stack.enter_context(_through_proxy(scratch_dir, progress, silence))
        service = Service(f"bolt://127.0.0.1:{proxy.port}", graph.database, scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        dropping = LoseAnswers(b"recordDecisions", every=every)
        front = stack.enter_context(Proxy("127.0.0.1", service.port, tap=dropping))
        generator = load.spawn(
            f"http://127.0.0.1:{front.port}", journal, seconds=seconds + 120, clients=clients, seed=seed, grace=grace
        )
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        batcher = Batcher(f"http://127.0.0.1:{front.port}", batches, seed)
        batcher.start()
        time.sleep(seconds / 3)
        progress("losing answers both ways")
        dropping.active.set()
        silence.arm()
        # A third of the run, and on a slow machine until each fault has struck (within a bound).
        window_ends, bound = time.monotonic() + seconds / 3, time.monotonic() + 120
        while time.monotonic() < bound and (time.monotonic() < window_ends or not (dropping.lost >= 2 and silence.sprung)):
            time.sleep(0.2)
        dropping.active.clear()
        silence.armed.clear()
        progress(f"{dropping.lost} batch answer(s) dropped, {silence.sprung} COMMIT answer(s) lost; the load goes on")
        time.sleep(seconds / 3)
        batcher.stop()
        _finish_load(generator, outcome, grace)
        events = load.read_journal(journal) + load.read_journal(batches)
        silent = load.silent_in_log(service.log_path)
        outcome.figures["connections given up silent (answers lost on the way)"] = silent
        load.verify(events, graph, outcome, expected_codes={"UNREACHABLE"}, explained={"UNAVAILABLE": silent})
    outcome.figures["batches recorded by the batcher"] = batcher.batches
    outcome.require(dropping.lost > 0, "no recordDecisions answer was dropped: the fault was not injected")
    outcome.require(silence.sprung > 0, "no COMMIT answer was lost: the fault was not injected")
    outcome.require(
        outcome.figures.get("unresolved_writes", 0) == 0,
        f"{outcome.figures.get('unresolved_writes')} write(s) never got an answer",
    )
    retried = sum(1 for e in events if e["type"] == "retried")
    outcome.figures.update(
        {
            "faults_injected": 2,
            "faults_survived": 2 if outcome.passed else 0,
            "batch answers dropped before the client": dropping.lost,
            "commit answers lost before the service": silence.sprung,
            "in_flight_retried": retried,
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


SCENARIOS: dict[str, Callable[..., Outcome]] = {
    "correction_crash": correction_crash,
    "otlp_service_kill": otlp_service_kill,
    "lost_batch": lost_batch,
}


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m reliability.combined", description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--dir", type=Path, default=Path("build/reliability-combined"))
    args = parser.parse_args(argv)
    outcome = SCENARIOS[args.scenario](args.dir / args.scenario, seconds=args.seconds, clients=args.clients)
    print(json.dumps(outcome.as_json(), indent=2))
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
