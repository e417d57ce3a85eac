"""Replicas behind a load balancer: docs/deployment.md's recipe on one machine, under load, one replica killed.

Two ``decisiontrail serve`` processes on one Neo4j behind nginx (Debian's package), as the recipe
deploys N of them. Through the balancer only: the load generator's clients (retrying with their
idempotency keys), live subscribers of some of its plans (one staying, one dropping and
reconnecting with its cursor), and plans run by the replicas' runtimes, each then corrected so
that it is replayed. In the middle, one replica is killed (SIGKILL) and started again.

Required: everything ``load.verify`` requires of the load (nothing acknowledged lost or
duplicated, the history checked); every subscriber received its plan's events exactly as the
outbox committed them (reconnected through the balancer, resumed from its cursor); every
correction's replay REPLAYED, and run once (one replayed strategy, one replay generation) though
the replica driving it may have died; and ``check --all`` clean (the harness runs it after).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from decisiontrail.access import LOCAL
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.services import Trail, reading
from reliability import load
from reliability.events import Subscriber, _rows
from reliability.faults import Service, _finish_load, _graph, _kill_if_running, _own_neo4j
from reliability.outcome import Outcome

RUN = "mutation($input: RunPlanInput!) { runPlan(input: $input) { id } }"
PLAN = """query($id: ID!) { plan(id: $id) {
  id phase run { status generation error }
  decisions(filter: {status: CURRENT}) { nodes { id decisionType } }
} }"""
CORRECT = "mutation($input: CorrectDecisionInput!) { correctDecision(input: $input) { attempt { attemptId } } }"
ATTEMPTS = "query($id: ID!) { decision(id: $id) { corrections { attemptId replayOutcome replayDetail } } }"
GUIDANCE = "Use Redis counters shared by every replica"

NGINX_CONF = """\
# The recipe's balancer (docs/deployment.md), written by reliability/balanced.py for one run.
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log {dir}/access.log;
  client_body_temp_path {dir}/client_body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  # WebSockets (subscriptions) pass through; other requests keep their upstream connections alive.
  map $http_upgrade $connection_upgrade {{ default upgrade; '' ''; }}
  upstream decisiontrail {{
{servers}
    keepalive 32;
  }}
  server {{
    listen 127.0.0.1:{port};
    client_max_body_size 16m;
    location / {{
      proxy_pass http://decisiontrail;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_read_timeout 300s;
      # A replica that refuses the connection: the request goes to another. One that took a
      # POST and died answers 502; the client retries it with its idempotency key.
      proxy_next_upstream error timeout;
    }}
  }}
}}
"""


def _say(message: str) -> None:
    print(f"[balanced] {message}", flush=True)


class Balancer:
    """nginx in front of ``upstreams`` (``host:port``), on a port of its own, for one run."""

    def __init__(self, scratch_dir: Path, upstreams: list[str]) -> None:
        self.dir = scratch_dir / "nginx"
        self.upstreams = upstreams
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def config(self) -> str:
        servers = "\n".join(f"    server {u} max_fails=1 fail_timeout=2s;" for u in self.upstreams)
        # As root, nginx hands its workers to `nobody`, who may not write this run's directories.
        user = "user root;\n" if os.geteuid() == 0 else ""
        return NGINX_CONF.format(user=user, dir=self.dir, servers=servers, port=self.port)

    @contextmanager
    def running(self, timeout: float = 30.0) -> Iterator[Balancer]:
        nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
        if nginx is None:
            raise RuntimeError("nginx is not installed: `apt-get install nginx` (Debian's package); the Makefile does it as root")
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "nginx.conf"
        conf.write_text(self.config(), encoding="utf-8")
        with (self.dir / "nginx.out").open("ab") as out:
            self.process = subprocess.Popen(
                [nginx, "-p", str(self.dir), "-c", str(conf), "-g", "daemon off;"], stdout=out, stderr=subprocess.STDOUT
            )
        try:
            deadline = time.monotonic() + timeout
            while not _answers(self.url):
                if self.process.poll() is not None:
                    raise RuntimeError(f"nginx exited with {self.process.returncode}; see {self.dir}/error.log")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nginx did not answer within {timeout:.0f} s; see {self.dir}/error.log")
                time.sleep(0.1)
            yield self
        finally:
            self.process.send_signal(signal.SIGQUIT)  # graceful: the connections it holds are finished
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _post(client: httpx.Client, query: str, timeout: float = 120.0, **variables: Any) -> dict[str, Any]:
    """A read or an idempotent write through the balancer, tried again while a replica is down
    (502, a connection cut); a GraphQL error is an answer and is raised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = client.post("/graphql", json={"query": query, "variables": variables})
            if response.status_code < 500:
                body = response.json()
                if body.get("errors"):
                    raise RuntimeError(f"{query.split('(')[0].strip()} answered {body['errors']}")
                return dict(body["data"])
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no answer through the balancer within {timeout:.0f} s")
        time.sleep(0.2)


def _until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.2)
    return found


def _run_when(client: httpx.Client, plan_id: str, done: Callable[[str], bool], what: str) -> dict[str, Any]:
    """The plan once its run's status is ``done``, read through the balancer."""

    def check() -> dict[str, Any] | None:
        plan: dict[str, Any] = _post(client, PLAN, id=plan_id)["plan"]
        return plan if done(plan["run"]["status"]) else None

    found: dict[str, Any] = _until(check, 180, f"{what} of plan {plan_id}")
    return found


def _replay_of(client: httpx.Client, decision_id: str) -> dict[str, Any]:
    """The correction attempt of ``decision_id`` once its replay has an outcome."""

    def check() -> dict[str, Any] | None:
        ended = [a for a in _post(client, ATTEMPTS, id=decision_id)["decision"]["corrections"] if a["replayOutcome"] != "PENDING"]
        return ended[0] if ended else None

    found: dict[str, Any] = _until(check, 180, f"the replay of the correction of {decision_id}")
    return found


def _strategy(plan: dict[str, Any]) -> str:
    return next(d["id"] for d in plan["decisions"]["nodes"] if d["decisionType"] == "STRATEGY_CHOICE")  # type: ignore[no-any-return]


def _correct(client: httpx.Client, decision_id: str) -> str:
    """Correct the decision through the balancer once: a correction has no idempotency key, so
    after an answer lost on the way, whether it was made is read back before it is sent again."""
    while True:
        try:
            response = client.post(
                "/graphql",
                json={
                    "query": CORRECT,
                    "variables": {"input": {"decisionId": decision_id, "mode": "REVERT", "guidance": GUIDANCE}},
                },
            )
            if response.status_code < 500:
                body = response.json()
                if body.get("errors"):
                    raise RuntimeError(f"correctDecision answered {body['errors']}")
                return str(body["data"]["correctDecision"]["attempt"]["attemptId"])
        except httpx.TransportError:
            pass
        made = _post(client, ATTEMPTS, id=decision_id)["decision"]["corrections"]
        if made:
            return str(made[0]["attemptId"])


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    """The services started inside take these settings (``Service`` copies the environment)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def replicas_behind_nginx(
    scratch_dir: Path,
    *,
    graph: Graph | None = None,
    seconds: float = 30.0,
    clients: int = 4,
    runs: int = 3,
    seed: int = 0,
    heap_mb: int = 512,
    pagecache_mb: int = 64,
    progress: Callable[[str], None] = _say,
) -> Outcome:
    """Two replicas behind nginx on one Neo4j, under load, with subscribers and replays; one killed mid-run."""
    outcome = Outcome(
        "replicas_nginx",
        f"two replicas behind nginx on one Neo4j: a load of {clients} clients, subscribers, {runs} plans run and "
        "replayed, all through the balancer; one replica killed (SIGKILL) mid-run and started again",
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "replicas-nginx.jsonl"
    journal.unlink(missing_ok=True)
    grace = 60.0
    with ExitStack() as stack:
        if graph is None:
            neo4j = stack.enter_context(_own_neo4j(scratch_dir, progress, heap_mb=heap_mb, pagecache_mb=pagecache_mb))
            assert neo4j.uri is not None
            graph = stack.enter_context(_graph(neo4j.uri))
        # Claims of a killed replica lapse in 3 s; each scripted turn takes a moment, so that a
        # replay is under way when the replica driving it dies.
        stack.enter_context(
            _environment(DECISIONTRAIL_RUN_LEASE="3", DECISIONTRAIL_RUNTIME_WORKERS="2", DECISIONTRAIL_SCRIPTED_PACE="0.2")
        )
        services = [Service(graph.uri, graph.database, scratch_dir / f"replica-{i}.log") for i in (1, 2)]
        for service in services:
            stack.callback(service.stop)
            service.start()
        balancer = stack.enter_context(Balancer(scratch_dir, [f"127.0.0.1:{s.port}" for s in services]).running())
        progress(f"nginx on {balancer.url} in front of {', '.join(s.url for s in services)}, on {graph.uri}")

        generator = load.spawn(balancer.url, journal, seconds=seconds + 300, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        loaded = [e["plan_id"] for e in load.read_journal(journal) if e["type"] == "plan"][:2]
        subscribers = [Subscriber(balancer.url, p, reconnect_every=every) for p in loaded for every in (0.0, 1.0)]
        for subscriber in subscribers:
            subscriber.start()
            stack.callback(subscriber.stop)

        client = stack.enter_context(httpx.Client(base_url=balancer.url, timeout=30))
        plan_ids = [
            _post(client, RUN, input={"description": f"Rate limits for replica test {i}"})["runPlan"]["id"] for i in range(runs)
        ]
        # and the runs' own plans, whose events the runtime writes (a replay's among them) from either replica
        watched = [Subscriber(balancer.url, p, reconnect_every=every) for p in plan_ids for every in (0.0, 1.0)]
        for subscriber in watched:
            subscriber.start()
            stack.callback(subscriber.stop)
        subscribers += watched
        ran = [_run_when(client, p, lambda s: s == "SUCCEEDED", "the run") for p in plan_ids]
        strategies = [_strategy(p) for p in ran]
        attempts = [_correct(client, s) for s in strategies]
        progress(f"{runs} plans run and corrected through the balancer; their replays under way")

        time.sleep(1.0)
        killed = services[0]
        progress(f"SIGKILL to replica 1 (pid {killed.pid}) under load, replays in flight")
        killed.kill()
        time.sleep(3.0)
        back_after = killed.start()
        progress(f"replica 1 back after {back_after:.1f} s")
        time.sleep(max(0.0, seconds - (time.monotonic() - started)))
        _finish_load(generator, outcome, grace)

        replayed = [_replay_of(client, s) for s in strategies]
        settled = [
            _run_when(client, p, lambda s: s in ("SUCCEEDED", "FAILED", "CANCELLED"), "the end of the replay's run")
            for p in plan_ids
        ]
        expected = {p: [(r["seq"], r["kind"].upper(), r["decision_id"]) for r in _rows(graph, p)] for p in loaded + plan_ids}
        quiet_by = time.monotonic() + 60
        while time.monotonic() < quiet_by and any(s.cursor < expected[s.plan_id][-1][0] for s in subscribers):
            time.sleep(0.2)
        for subscriber in subscribers:
            subscriber.stop()
        events = load.read_journal(journal)
        silent = sum(load.silent_in_log(s.log_path) for s in services)
        outcome.figures["connections given up silent (answers lost on the way)"] = silent
        load.verify(events, graph, outcome, expected_codes={"UNREACHABLE", "HTTP_5XX"}, explained={"UNAVAILABLE": silent})
        _verify_replays(outcome, Trail.on(graph), plan_ids, attempts, replayed, settled)
    _verify_streams(outcome, subscribers, expected)
    outcome.require(
        outcome.figures.get("unresolved_writes", 0) == 0,
        f"{outcome.figures.get('unresolved_writes')} write(s) never got an answer",
    )
    outcome.figures.update(
        {
            "replicas": len(services),
            "faults_injected": 1,
            "faults_survived": 1 if outcome.passed else 0,
            "replica_down_seconds": round(3.0 + back_after, 1),
            "in_flight_retried": sum(1 for e in events if e["type"] == "retried"),
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


def _verify_replays(
    outcome: Outcome,
    trail: Trail,
    plan_ids: list[str],
    attempts: list[str],
    replayed: list[dict[str, Any]],
    settled: list[dict[str, Any]],
) -> None:
    outcome.require(
        [a["attemptId"] for a in replayed] == attempts, f"the attempts replayed {replayed} are not those corrected {attempts}"
    )
    outcomes = [a["replayOutcome"] for a in replayed]
    outcome.require(set(outcomes) == {"REPLAYED"}, f"replays ended {outcomes}: {[a['replayDetail'] for a in replayed]}")
    once = 0
    for plan_id, plan in zip(plan_ids, settled, strict=True):
        chosen = [
            d.chosen_option
            for d in reading.list_decisions(trail, plan_id, principal=LOCAL)
            if d.decision_type.value == "strategy_choice"
        ]
        ran_once = chosen.count(GUIDANCE) == 1 and plan["run"]["generation"] == 1 and plan["run"]["status"] == "SUCCEEDED"
        once += int(ran_once)
        outcome.require(
            ran_once,
            f"plan {plan_id}: the replay chose the guidance {chosen.count(GUIDANCE)}x, generation "
            f"{plan['run']['generation']}, run {plan['run']['status']} ({plan['run']['error']})",
        )
    outcome.figures.update({"plans run and replayed": len(plan_ids), "replays run once": once})


def _verify_streams(outcome: Outcome, subscribers: list[Subscriber], expected: dict[str, list[Any]]) -> None:
    missed = duplicated = 0
    for s in subscribers:
        want, got = expected[s.plan_id], s.received
        missed += len(set(want) - set(got))
        duplicated += len(got) - len(set(got))
        outcome.require(
            got == want,
            f"a subscriber of plan {s.plan_id} through the balancer received {len(got)} events, not the {len(want)} committed"
            + (f" ({s.errors[-1]})" if s.errors else ""),
        )
    outcome.figures.update(
        {
            "subscribers": len(subscribers),
            "reconnections": sum(max(0, s.connections - 1) for s in subscribers),
            "events_committed": sum(len(e) for e in expected.values()),
            "events_missed": missed,
            "events_duplicated": duplicated,
        }
    )


def main() -> int:
    """``python -m reliability.balanced [seconds]``: the scenario alone, on a Neo4j of its own."""
    import sys
    import tempfile

    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    with tempfile.TemporaryDirectory(prefix="decisiontrail-balanced-") as scratch:
        outcome = replicas_behind_nginx(Path(scratch), seconds=seconds)
    print(json.dumps(outcome.as_json(), indent=2))
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
