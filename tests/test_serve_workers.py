"""`decisiontrail serve --workers N`: N processes serving one port on the session's Neo4j, any of them
answering any request, events crossing between them, and the service stopped or killed as one
(cli/processes.py). Which process holds a connection is read from /proc (Linux)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.cli import main
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.services import Trail
from decisiontrail.settings import ServeSettings, available_cores
from subscribing import subscribed

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads which process holds a connection from /proc")

GUIDANCE = "mutation($input: AddGuidanceInput!) { addGuidance(input: $input) { id } }"
DECISIONS = "query($id: ID!) { plan(id: $id) { decisions(first: 100) { nodes { id } } } }"
PLAN = 'mutation { instantiatePlan(input: {description: "served twice"}) { id rootDecision { id } } }'


@dataclass
class Service:
    """``serve --workers 2`` started by a test: the supervising process, its port, its log."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> list[int]:
        """The worker processes it runs now (multiprocessing's resource tracker is a child too, but no worker)."""
        return [pid for pid in _children(self.process.pid) if b"spawn_main" in _cmdline(pid)]


@pytest.fixture
def service(store: Trail, graph: Graph, tmp_path: Path) -> Iterator[Service]:
    port = free_port()
    env = {
        **os.environ,
        "NEO4J_URI": graph.uri,
        "NEO4J_DATABASE": graph.database,
        "DECISIONTRAIL_DATA_DIR": str(tmp_path),
        "DECISIONTRAIL_RUNTIME_WORKERS": "0",
    }
    for name in ("DECISIONTRAIL_TOKENS_FILE", "DECISIONTRAIL_TOKENS", "DECISIONTRAIL_SERVE_WORKERS"):
        env.pop(name, None)
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "decisiontrail", "serve", "--workers", "2", "--port", str(port)],
            env=env,
            stdout=output,
            stderr=output,
            preexec_fn=_few_open_files,  # started as under a common default, 512 below the hard limit
        )
    started = Service(process, port, log)
    try:
        # Both workers have finished starting (a request answered proves only one).
        assert _until(lambda: log.read_text().count("Application startup complete") == 2, 180), log.read_text()
        yield started
    finally:
        workers = started.workers()
        if process.poll() is None:
            process.kill()
            process.wait()
        _until(lambda: not any(_alive(pid) for pid in workers), 10)


def test_two_workers_answer_on_one_port_and_share_the_trail_and_its_events(service: Service) -> None:
    workers = service.workers()
    assert len(workers) == 2, workers
    first, second = workers
    # Each may hold as many sockets as the system allows it (a subscriber holds one).
    assert all(len(set(_open_files_limit(pid))) == 1 for pid in workers), [_open_files_limit(pid) for pid in workers]
    for worker in workers:  # each accepts connections and answers
        assert _get(service, worker, "/readyz") == (200, {"status": "ready"})
        assert _get(service, worker, "/healthz")[0] == 200

    plan = _post(service, first, PLAN)["instantiatePlan"]
    plan_id, root_id = plan["id"], plan["rootDecision"]["id"]
    guidance = {"planId": plan_id, "parentDecisionId": root_id, "guidance": "through the first worker"}
    recorded = _post(service, first, GUIDANCE, input=guidance)["addGuidance"]["id"]
    read = _post(service, second, DECISIONS, id=plan_id)["plan"]["decisions"]["nodes"]
    assert {root_id, recorded} == {node["id"] for node in read}

    with subscribed(service.url, plan_id) as ws:
        subscriber = _holder(service, ws.socket.getsockname()[1])
        other = second if subscriber == first else first
        caused: list[str] = []

        def cause() -> None:  # again until the subscription, which may not have begun yet, is told of one
            answer = _post(service, other, GUIDANCE, input={**guidance, "guidance": "through the other worker"})
            caused.append(answer["addGuidance"]["id"])

        event = _next_event(ws, cause)
    assert event["decisionEvents"]["decisionId"] in caused


def test_sigterm_stops_every_process_and_frees_the_port(service: Service) -> None:
    workers = service.workers()
    assert len(workers) == 2

    service.process.send_signal(signal.SIGTERM)

    assert service.process.wait(timeout=60) == 0
    assert _until(lambda: not any(_alive(pid) for pid in workers), 10)
    assert not _accepts(service.port)


def test_a_dead_worker_is_replaced_and_killing_serve_kills_every_worker(service: Service) -> None:
    dead, survivor = service.workers()
    os.kill(dead, signal.SIGKILL)
    assert _until(lambda: len(set(service.workers()) - {dead, survivor}) == 1, 30), service.log.read_text()
    (replacement,) = set(service.workers()) - {dead, survivor}
    assert _until(lambda: service.log.read_text().count("Application startup complete") == 3, 120), service.log.read_text()
    assert _get(service, replacement, "/readyz")[0] == 200

    service.process.send_signal(signal.SIGKILL)
    service.process.wait()

    assert _until(lambda: not _alive(survivor) and not _alive(replacement), 5), "a worker outlived its killed parent"
    assert not _accepts(service.port)


def test_help_describes_workers_and_their_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])

    out = " ".join(capsys.readouterr().out.split())
    assert "--workers N" in out and "DECISIONTRAIL_SERVE_WORKERS" in out
    assert f"one a core: {available_cores()} here" in out


def test_workers_default_to_the_cores_unless_the_environment_says() -> None:
    assert ServeSettings.from_env({}).workers == available_cores() >= 1
    assert ServeSettings.from_env({"DECISIONTRAIL_SERVE_WORKERS": "3"}).workers == 3
    with pytest.raises(ValidationFailed, match="DECISIONTRAIL_SERVE_WORKERS must be between 1 and 1024, got 0"):
        ServeSettings.from_env({"DECISIONTRAIL_SERVE_WORKERS": "0"})


@contextmanager
def _connection_to(service: Service, worker: int, attempts: int = 200) -> Iterator[http.client.HTTPConnection]:
    """A new connection that ``worker`` accepted (the kernel hands each to whichever worker takes it first)."""
    for _ in range(attempts):
        with closing(http.client.HTTPConnection("127.0.0.1", service.port, timeout=30)) as connection:
            connection.connect()
            assert connection.sock is not None
            if _holder(service, connection.sock.getsockname()[1]) == worker:
                yield connection
                return
    raise AssertionError(f"worker {worker} accepted none of {attempts} connections")


def _holder(service: Service, client_port: int) -> int:
    """The worker holding the service's end of the connection from ``client_port``."""
    found: list[int] = []

    def held() -> bool:
        inode = _socket_inode(service.port, client_port)
        found[:] = [pid for pid in service.workers() if inode is not None and _holds(pid, inode)]
        return bool(found)

    assert _until(held, 10), f"no worker accepted the connection from port {client_port}"
    return found[0]


def _socket_inode(server_port: int, client_port: int) -> str | None:
    """The inode of the server's socket of a loopback TCP connection, from /proc/net/tcp."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, inode = fields[1], fields[2], fields[9]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
            return inode
    return None


def _holds(pid: int, inode: str) -> bool:
    try:
        return any(os.readlink(fd) == f"socket:[{inode}]" for fd in Path(f"/proc/{pid}/fd").iterdir())
    except (FileNotFoundError, ProcessLookupError):
        return False


def _get(service: Service, worker: int, path: str) -> tuple[int, Any]:
    with _connection_to(service, worker) as connection:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read())


def _post(service: Service, worker: int, document: str, **variables: Any) -> dict[str, Any]:
    """A GraphQL request answered by ``worker``: its data."""
    body = json.dumps({"query": document, "variables": variables})
    with _connection_to(service, worker) as connection:
        connection.request("POST", "/graphql", body=body, headers={"Content-Type": "application/json"})
        answer = json.loads(connection.getresponse().read())
    assert not answer.get("errors"), answer
    data: dict[str, Any] = answer["data"]
    return data


def _next_event(ws: Any, cause: Callable[[], None], seconds: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        cause()
        try:
            message = json.loads(ws.recv(timeout=1))
        except TimeoutError:
            continue
        assert message["type"] == "next", message
        payload: dict[str, Any] = message["payload"]["data"]
        return payload
    raise AssertionError(f"no event within {seconds} s")


def _children(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(child) for child in children.read_text().split()]
    except FileNotFoundError:
        return []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by whoever adopted it, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def _accepts(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _open_files_limit(pid: int) -> tuple[str, ...]:
    """A process's soft and hard limits of open files, as /proc says them."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return tuple(line.split()[3:5])
    raise AssertionError(f"no open-files limit for {pid}")


def _few_open_files() -> None:
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
