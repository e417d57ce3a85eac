"""README.md's quick start, run as far as a test can: what ``make run`` and ``make test`` would do
(``make -n``), and ``decisiontrail serve --demo-if-empty``, ``make run``'s last step, serving the
demonstration on a port of the test's. (The demonstration's output is test_docs_demonstration.py's;
the command list, test_docs_synopses.py's.)"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import httpx

import docs_examples
from docs_examples import BIN, ROOT, Cli, example

cli = docs_examples.cli  # the fixture: the command line on the test's database


def _dry_run(target: str) -> list[str]:
    # As a user types it: not as a sub-make of `make test`, which would say "make[1]: Leaving directory" last.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_make_run_and_make_test_do_what_the_quick_start_says(cli: Cli) -> None:
    quick_start = example("README.md", "make run    # create .venv, install, build and start the embedded Neo4j, serve the API")
    targets = [line.split()[1] for line in quick_start.splitlines()]
    assert targets == ["run", "test"]

    run, test = _dry_run("run"), _dry_run("test")

    assert run[-1] == ".venv/bin/decisiontrail serve --demo-if-empty"
    for step in (".venv/bin/ruff check .", ".venv/bin/mypy"):
        assert step in test, test
    assert "-m pytest" in test[-1], test

    port, log = _free_port(), cli.cwd / "serve.log"
    with log.open("w") as written:
        server = subprocess.Popen(
            [str(BIN / "decisiontrail"), "-q", "serve", "--demo-if-empty", "--port", str(port)],
            cwd=cli.cwd,
            env=cli.subprocess_env(),
            stdout=written,
            stderr=subprocess.STDOUT,
        )
    try:
        # "On an empty database it first records the demonstration", then serves GraphiQL at /graphql
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, log.read_text()
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/graphql", headers={"accept": "text/html"}, timeout=10)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer"
                time.sleep(0.5)
        plans = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": "{ plans { nodes { description } } }"}, timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=60)

    assert page.status_code == 200 and "graphiql" in page.text.lower()
    assert {p["description"] for p in plans.json()["data"]["plans"]["nodes"]} == {
        "Add rate limiting to the public billing API",
        "Add per-client quotas to the billing API gateway",
    }
