"""The benchmark's peer: the same queries served by @neo4j/graphql on the same Neo4j.

``bench/peer/`` holds a small Node server (``server.mjs``) over @neo4j/graphql 7, pinned in
``package.json`` and ``package-lock.json``: the nested tree through the library's generated
reads, and the lineage and impact walks as its ``@cypher`` fields running our own walk statements
(see :data:`LINEAGE_QUERY`). :func:`install` installs it with npm,
:func:`running_peer` runs it against a Neo4j for the length of a ``with`` block, and
:func:`versions` names what ran, for the report. The peer is read-only: no mutations, no
subscriptions, and none of the library's index or constraint checks.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx

from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb.embedded import free_port

PEER_DIR = Path(__file__).parent / "peer"
MIN_NODE = 20
STARTUP_TIMEOUT = 60.0
READY_LINE = re.compile(r"peer ready on (http://127\.0\.0\.1:\d+)")

NESTED_TREE_QUERY = """\
query PlanTree($planId: ID!) {
  plans(where: { id: { eq: $planId } }) {
    id
    decisions(sort: [{ sequenceNumber: ASC }]) {
      id
      sequenceNumber
      decisionType
      children(sort: [{ sequenceNumber: ASC }]) {
        id
        sequenceNumber
        dependsOn {
          id
        }
      }
    }
  }
}
"""
"""One plan by its plan_id (the answer is ``data.plans[0]``): its decisions in sequence order,
each one's children in sequence order, and each child's dependencies in no particular order (the
peer does not see the ``ordinal`` our API orders them by: compare them as sets).

``sequenceNumber`` is selected because @neo4j/graphql 7.6 sorts a nested list after projecting
it, and leaves an ``@alias``-ed sort field out of that projection unless it is selected: the
``ORDER BY`` then compares nulls and the list comes back unsorted, without an error."""


LINEAGE_QUERY = """\
query Lineage($decisionId: ID!) {
  lineage(decisionId: $decisionId) {
    __typename
    ... on Decision {
      id
    }
    ... on Plan {
      id
    }
  }
}
"""
"""Where a decision comes from, by its decision_id (the answer is ``data.lineage``; read it with
:func:`walk_ids`): the peer's ``@cypher`` field over our ``decision/lineage.cypher``, whose walk it
runs as is, each decision and plan reached projected by the library. Ours answers the same as
``lineage(decisionId:) { decisions { id } plans { id } }``. One list of the union ``Reached``, not
two fields, since each ``@cypher`` field runs its statement: two would walk twice."""

IMPACT_QUERY = """\
query Impact($decisionId: ID!) {
  impact(decisionId: $decisionId) {
    __typename
    ... on Decision {
      id
    }
    ... on Plan {
      id
    }
  }
}
"""
"""What correcting a decision reaches, by its decision_id (the answer is ``data.impact``; read it
with :func:`walk_ids`): the walk of our ``correction/downstream.cypher``, the decision itself
among the decisions, as our ``impact(decisionId:) { decisions { id } plans { id } }`` answers it."""


def walk_ids(reached: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """A walk's answer from the peer (``data.lineage`` or ``data.impact``) as (decision ids, plan ids).

    Each node comes once: a repeated one, or a type other than Decision or Plan, is an error, as
    a wrong answer must not be timed.

    >>> decisions, plans = walk_ids([{"__typename": "Decision", "id": "d1"}, {"__typename": "Plan", "id": "p1"},
    ...                              {"__typename": "Decision", "id": "d2"}])
    >>> sorted(decisions), sorted(plans)
    (['d1', 'd2'], ['p1'])
    >>> walk_ids([])
    (set(), set())
    >>> walk_ids([{"__typename": "Plan", "id": "p1"}, {"__typename": "Plan", "id": "p1"}])
    Traceback (most recent call last):
    ...
    ValueError: the peer's walk answered Plan p1 twice
    >>> walk_ids([{"__typename": "Review", "id": "r1"}])
    Traceback (most recent call last):
    ...
    ValueError: the peer's walk answered a Review (r1), neither a Decision nor a Plan
    """
    found: dict[str, set[str]] = {"Decision": set(), "Plan": set()}
    for node in reached:
        kind, node_id = node["__typename"], node["id"]
        if kind not in found:
            raise ValueError(f"the peer's walk answered a {kind} ({node_id}), neither a Decision nor a Plan")
        if node_id in found[kind]:
            raise ValueError(f"the peer's walk answered {kind} {node_id} twice")
        found[kind].add(node_id)
    return found["Decision"], found["Plan"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Unavailable(
            f"`{name}` is not on PATH; the benchmark's peer (@neo4j/graphql) needs Node.js {MIN_NODE}+ "
            "with npm, e.g. from https://nodejs.org or `apt-get install nodejs npm`."
        )
    return path


def _node_version(node: str) -> str:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    match = re.fullmatch(r"v?(\d+)\.\d+\.\d+.*", out)
    if not match:
        raise Unavailable(f"could not read the Node.js version from `{node} --version`: {out!r}")
    if int(match.group(1)) < MIN_NODE:
        raise Unavailable(f"the benchmark's peer needs Node.js {MIN_NODE}+, `{node}` is {out}")
    return out


def _installed() -> bool:
    modules = PEER_DIR / "node_modules"
    if not (modules / "@neo4j" / "graphql" / "package.json").is_file():
        return False
    built = modules.stat().st_mtime
    inputs = [PEER_DIR / "package.json", PEER_DIR / "package-lock.json"]
    return all(built >= p.stat().st_mtime for p in inputs if p.exists())


def install(progress: Callable[[str], None] = print) -> Path:
    """Install the peer's packages into ``bench/peer/node_modules`` unless they are up to date.

    ``npm ci`` when ``package-lock.json`` is there (reproducible), else ``npm install``.
    Returns ``PEER_DIR``.
    """
    node = _tool("node")
    npm = _tool("npm")
    _node_version(node)
    if _installed():
        return PEER_DIR
    with open(PEER_DIR / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time; the next one finds it done
        if _installed():
            return PEER_DIR
        verb = "ci" if (PEER_DIR / "package-lock.json").exists() else "install"
        progress(f"installing the benchmark's peer: npm {verb} in {PEER_DIR}")
        done = subprocess.run(
            [npm, verb, "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PEER_DIR,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip()
            raise Unavailable(f"`npm {verb}` in {PEER_DIR} failed ({done.returncode}):\n{output[-4000:]}")
        os.utime(PEER_DIR / "node_modules")  # `npm install` with nothing to do leaves it as it was
    return PEER_DIR


def _tail(stream: IO[bytes], limit: int = 4000) -> str:
    # pread leaves the offset alone: the child writes through the same open file.
    fd = stream.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace").strip()[-limit:]


@contextmanager
def running_peer(
    neo4j_uri: str,
    *,
    database: str = "neo4j",
    user: str | None = None,
    password: str | None = None,
    port: int | None = None,
) -> Iterator[str]:
    """Run the peer against the Neo4j at ``neo4j_uri``; yields its base URL (POST ``<url>/graphql``).

    Waits (up to 60 s) for its ready line and for ``/healthz`` (Neo4j reached, a first query
    run); stops it on exit. Call :func:`install` first.
    """
    node = _tool("node")
    if not (PEER_DIR / "node_modules" / "@neo4j" / "graphql").is_dir():
        raise Unavailable(f"the benchmark's peer is not installed: call bench.peer.install() first ({PEER_DIR})")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(PORT=str(port or free_port()), NEO4J_URI=neo4j_uri, NEO4J_DATABASE=database, PEER_WATCH_STDIN="1")
    if user is not None:
        env["NEO4J_USER"] = user
    if password is not None:
        env["NEO4J_PASSWORD"] = password
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen([node, "server.mjs"], cwd=PEER_DIR, env=env, stdin=subprocess.PIPE, stdout=out, stderr=err)
        try:
            url = _wait_ready(process, out, err)
            yield url
        finally:
            _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], out: IO[bytes], err: IO[bytes]) -> str:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    url: str | None = None
    with httpx.Client(timeout=5.0, trust_env=False) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise Unavailable(
                    f"the benchmark's peer exited with {process.returncode} while starting:\n{_tail(err) or _tail(out)}"
                )
            if url is None:
                match = READY_LINE.search(_tail(out))
                url = match.group(1) if match else None
            if url is not None:
                try:
                    if client.get(f"{url}/healthz").status_code == 200:
                        return url
                except httpx.TransportError:
                    pass
            time.sleep(0.1)
    raise Unavailable(f"the benchmark's peer was not ready within {STARTUP_TIMEOUT:.0f} s:\n{_tail(err)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdin is not None:
        process.stdin.close()


def versions() -> dict[str, str]:
    """The Node.js version and the installed @neo4j/graphql, graphql and neo4j-driver versions."""
    found = {"node": _node_version(_tool("node"))}
    for package in ("@neo4j/graphql", "graphql", "neo4j-driver"):
        manifest = PEER_DIR / "node_modules" / package / "package.json"
        try:
            found[package] = str(json.loads(manifest.read_text())["version"])
        except (OSError, ValueError, KeyError):
            found[package] = "not installed"
    return found
