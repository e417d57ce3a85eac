"""The docs' fenced examples, found by page and first line, and what running one needs: ids put in
for placeholders, GraphQL against a served API, the command line in this process or a real shell.

A test runs an example by asking for it with ``example(page, first_line)``; test_docs_examples.py
reads those calls out of every tests/test_docs_*.py module and fails for a fence of a page in
``PAGES`` that no test asks for and that its page does not mark ``<!-- not run: why -->``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import LOCAL
from decisiontrail.cli import main
from decisiontrail.domain.pages import PlanPage
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail, reading

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIN = ROOT / ".venv" / "bin"

PAGES = (
    "README.md",
    "docs/actors.md",
    "docs/approvals.md",
    "docs/architecture.md",
    "docs/backup.md",
    "docs/benchmarks.md",
    "docs/checkpoints.md",
    "docs/checks.md",
    "docs/correction.md",
    "docs/decision-store.md",
    "docs/deployment.md",
    "docs/embedded-neo4j.md",
    "docs/explorer.md",
    "docs/graphql.md",
    "docs/interop.md",
    "docs/mcp.md",
    "docs/recording.md",
    "docs/reliability.md",
    "docs/security.md",
    "docs/trends.md",
)
"""The pages every fence of which a test runs or the page marks as not run: README.md and every
page of docs/."""

FENCE = re.compile(r"^```([\w.]*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\n\Z")
ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
"""A ULID, or a UUID (a LangGraph checkpoint's id)."""


@dataclass(frozen=True)
class Fence:
    page: str
    line: int
    language: str
    body: str
    not_run: str | None
    """Why the page says this one is not run, or None."""
    anchor: str
    """How a test names it: its first line, or its first lines up to the one no other fence of the
    page begins with, so an edit of them shows."""


def fences(page: str) -> list[Fence]:
    """Every fenced block of ``page`` (a path from the repository's root), in order."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        mark = NOT_RUN.search(before)
        line, language, body = before.count("\n") + 1, match.group(1), match.group(2)
        found.append(Fence(page, line, language, body, mark.group(1) if mark else None, anchor=""))
    bodies = [f.body.splitlines() for f in found]
    for i, fence in enumerate(found):
        n = 1
        while n < len(bodies[i]) and any(other[:n] == bodies[i][:n] for j, other in enumerate(bodies) if j != i):
            n += 1
        found[i] = replace(fence, anchor="\n".join(bodies[i][:n]))
    return found


def example(page: str, first_line: str) -> str:
    """The text of the one fence of ``page`` whose anchor is ``first_line`` (its first line; its
    first lines where another fence begins alike): an example a test runs."""
    matching = [f for f in fences(page) if f.anchor == first_line]
    assert len(matching) == 1, f"{page}: {len(matching)} fences begin {first_line!r}"
    assert matching[0].not_run is None, f"{page}:{matching[0].line} is marked not run, yet a test runs it"
    return matching[0].body


def with_ids(document: str, **ids: str) -> str:
    """``document`` with ``<name>: "01M8..."`` made ``<name>: "<the id given for name>"`` (and a
    list of one, ``<name>: ["01M8..."]``, ``<name>: ["<the id>"]``)."""
    for name, value in ids.items():
        document = document.replace(f'{name}: "01M8..."', f'{name}: "{value}"')
        document = document.replace(f'{name}: ["01M8..."]', f'{name}: ["{value}"]')
    assert '"01M8..."' not in document, document
    return document


def run_graphql(api: httpx.Client, document: str, operation: str | None = None, **variables: Any) -> dict[str, Any]:
    body = api.post("/graphql", json={"query": document, "operationName": operation, "variables": variables}).json()
    assert "errors" not in body, body
    return dict(body["data"])


def plan_ids(store: Trail) -> list[str]:
    """The ids of every plan stored, newest first."""
    return reading.page_plans(store, PlanPage(first=100), LOCAL)[1]


def numbered(text: str) -> str:
    """``text`` with each distinct ULID or UUID made ``<id N>``, numbered in order of first
    appearance, so two texts compare on which ids are the same, not on their values."""
    seen: dict[str, str] = {}
    return ID.sub(lambda m: seen.setdefault(m.group(0), f"<id {len(seen) + 1}>"), text)


def commands(block: str) -> list[list[str]]:
    """The ``decisiontrail`` command lines of ``block`` as argument lists, comments and the leading
    ``$ `` and ``decisiontrail`` dropped, continued lines (and a synopsis's indented lines) joined."""
    joined = re.sub(r"\\\n\s*", " ", block)
    found: list[list[str]] = []
    last = False
    for line in joined.splitlines():
        words = shlex.split(re.sub(r"\s+#\s.*$", "", line.removeprefix("$ ")))
        if words[:1] == ["decisiontrail"]:
            found.append(words[1:])
        elif last and line[:1].isspace() and words:  # a synopsis's options, wrapped
            found[-1].extend(words)
            continue
        last = words[:1] == ["decisiontrail"]
    return found


def _each_subcommand(words: list[str]) -> list[list[str]]:
    """``invariants set|show --global`` as ``invariants set --global`` and ``invariants show --global``."""
    for i, word in enumerate(words):
        if re.fullmatch(r"[a-z]+(\|[a-z]+)+", word):
            return [[*words[:i], one, *words[i + 1 :]] for one in word.split("|")]
        if not re.fullmatch(r"[a-z][a-z-]*", word):
            break
    return [words]


@dataclass(frozen=True)
class Said:
    code: int
    out: str
    err: str


class Cli:
    """``decisiontrail`` on the test's database: in this process (``run``) or as a real shell (``shell``)."""

    def __init__(self, graph: Graph, capsys: pytest.CaptureFixture[str], cwd: Path) -> None:
        self.graph, self.capsys, self.cwd = graph, capsys, cwd

    def run(self, *argv: str) -> Said:
        self.capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as done:  # --help, and what argparse refuses
            code = done.code if isinstance(done.code, int) else 2
        said = self.capsys.readouterr()
        return Said(code, said.out, said.err)

    def holds(self, synopsis: str) -> None:
        """Every command line of ``synopsis`` names a command whose --help lists each option the line
        shows, and each choice it shows for an option (``--format text|json``)."""
        lines = commands(synopsis)
        assert lines, synopsis
        for said_words in lines:
            for words in _each_subcommand(said_words):
                self._holds(words)

    def _holds(self, words: list[str]) -> None:
        path = []
        for word in words:
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            path.append(word)
        said = self.run(*path, "--help")
        assert said.code == 0, (words, said.err)
        helped = re.sub(r"\s+", " ", said.out)
        line = " ".join(words)
        for option in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", line):
            assert re.search(rf"(?<![\w-]){option}\b", helped), f"decisiontrail {' '.join(path)}: no {option} in its --help"
        for option, choices in re.findall(r"(--[a-z-]+)[ =]([a-z0-9._]+(?:\|[a-z0-9._]+)+)", line):
            for choice in (c for c in choices.split("|") if c.strip(".")):
                assert choice in helped, f"decisiontrail {' '.join(path)} {option}: no {choice} in its --help"

    def shell(self, script: str, **env: str) -> Said:
        """``script`` run by bash in the test's directory, with .venv/bin first on PATH."""
        done = subprocess.run(
            ["bash", "-eu", "-c", script],  # no pipefail: the pages' `| head -1` is for an ordinary shell
            cwd=self.cwd,
            env=self.subprocess_env(**env),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return Said(done.returncode, done.stdout, done.stderr)

    @contextmanager
    def serving(self, script: str, **env: str) -> Iterator[str]:
        """``script`` (its last line a ``decisiontrail serve`` command, ``--port`` left out) run by bash
        in the background as the test's directory, on a free port, until ``/healthz`` answers: the
        service's address. Stopped, with whatever the script started, when the ``with`` ends."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        log = self.cwd / f"serve-{port}.log"
        with log.open("w") as written:
            server = subprocess.Popen(
                ["bash", "-eu", "-c", f"{script.rstrip()} --port {port}"],
                cwd=self.cwd,
                env=self.subprocess_env(**env),
                stdout=written,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so bash and serve stop together
            )
        try:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, log.read_text(encoding="utf-8")
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the service did not answer: " + log.read_text(encoding="utf-8")
                time.sleep(0.3)
            yield f"http://127.0.0.1:{port}"
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)

    def subprocess_env(self, **env: str) -> dict[str, str]:
        """This process's environment, .venv/bin first on PATH, on the test's database."""
        return os.environ | {"PATH": f"{BIN}:{os.environ['PATH']}", **self.env(), **env}

    def env(self) -> dict[str, str]:
        return {"NEO4J_URI": self.graph.uri, "NEO4J_DATABASE": self.graph.database}


@pytest.fixture
def cli(
    graph: Graph, store: object, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Cli]:
    """The command line on the test's (emptied) database, run in a directory of the test's own."""
    on = Cli(graph, capsys, tmp_path)
    for name in ("docs", ".venv"):  # the pages' paths are from the repository's root
        (tmp_path / name).symlink_to(ROOT / name)
    for name, value in on.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DECISIONTRAIL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    yield on
