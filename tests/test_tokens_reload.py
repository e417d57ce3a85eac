"""Static tokens read again without a restart, over real HTTP and WebSocket: when the token file changes (the
app's lifespan watches it, however the app is started), on SIGHUP (in this process, and sent to
`decisiontrail serve`), and a revoked token's open subscriptions closed at once (web/tokens.py, web/auth.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from decisiontrail.access import Role, issue_token, token_hash
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.services import Trail
from decisiontrail.web.tokens import WATCHER_THREAD, TokenFile
from serving import served
from subscribing import closed, code, graphql, new_plan, still_open, subscribed, waker

READ = "{ plans { totalCount } }"
WRITE = 'mutation { instantiatePlan(input: {description: "x"}) { id } }'


@pytest.fixture
def tokens(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "tokens.json"
    return {
        "admin": issue_token(path, "admin", Role.ADMIN),
        "leaver": issue_token(path, "leaver", Role.REVIEWER),
        "demoted": issue_token(path, "demoted", Role.ADMIN),
        "_file": str(path),
    }


def _rewrite(tokens: dict[str, str], change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """The token file rewritten in place, as an operator's edit would: its entries as ``change`` makes them."""
    path = Path(tokens["_file"])
    path.write_text(json.dumps(change(json.loads(path.read_text()))), encoding="utf-8")


def _without(tokens: dict[str, str], name: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda entries: [e for e in entries if e["sha256"] != token_hash(tokens[name])]


def _until(check: Callable[[], bool], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def token_file(tokens: dict[str, str]) -> TokenFile:
    return TokenFile(Path(tokens["_file"]), reload_every=0.1)


@pytest.fixture
def base_url(store: Trail, graph: Graph, token_file: TokenFile) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=token_file)) as url:  # the app watches its token file itself
        yield url


def _watchers() -> int:
    return sum(thread.name == WATCHER_THREAD for thread in threading.enumerate())


def test_an_app_from_create_app_reads_its_token_file_again_while_it_runs(
    store: Trail, graph: Graph, tokens: dict[str, str], token_file: TokenFile
) -> None:
    handler = signal.getsignal(signal.SIGHUP)
    before = _watchers()
    with served(create_app(graph=graph, tokens=token_file)) as base_url:
        watching = _watchers() - before
        accepted = graphql(base_url, tokens["leaver"], READ)
        _rewrite(tokens, _without(tokens, "leaver"))
        refused = _until(lambda: code(graphql(base_url, tokens["leaver"], READ)) == "UNAUTHENTICATED")
        during = signal.getsignal(signal.SIGHUP)

    assert watching == 1
    assert code(accepted) is None
    assert refused, "the token removed from the file was still accepted"
    assert _watchers() == before  # the watch ended with the app
    assert during is handler  # served off the main thread: SIGHUP's handler left alone (it cannot be set there)


def test_a_token_removed_from_the_file_is_refused_and_its_subscriptions_closed_at_once(
    base_url: str, tokens: dict[str, str]
) -> None:
    plan_id, root_id = new_plan(base_url, tokens["admin"])
    wake = waker(base_url, tokens["admin"], plan_id, root_id)
    with (
        subscribed(base_url, plan_id, header=tokens["leaver"]) as by_header,
        subscribed(base_url, plan_id, init=tokens["leaver"]) as by_init,
        subscribed(base_url, plan_id, header=tokens["demoted"]) as demoted,
        subscribed(base_url, plan_id, init=tokens["admin"]) as kept,
    ):
        assert all(still_open(ws, wake) for ws in (by_header, by_init, demoted, kept))

        def leaver_gone_admin_demoted(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
            kept_entries = _without(tokens, "leaver")(entries)
            return [e | {"role": "analyst"} if e["name"] == "demoted" else e for e in kept_entries]

        _rewrite(tokens, leaver_gone_admin_demoted)
        ends = [closed(ws) for ws in (by_header, by_init, demoted)]

        assert [(e.rcvd.code, e.rcvd.reason) for e in ends if e.rcvd is not None] == [(4403, "the token was revoked")] * 3
        assert still_open(kept, wake)
    assert code(graphql(base_url, tokens["leaver"], READ)) == "UNAUTHENTICATED"
    assert code(graphql(base_url, tokens["demoted"], WRITE)) == "FORBIDDEN"  # an analyst now
    assert code(graphql(base_url, tokens["demoted"], READ)) is None


def test_a_token_added_to_the_file_is_taken_without_a_restart(base_url: str, tokens: dict[str, str]) -> None:
    newcomer = issue_token(Path(tokens["_file"]), "newcomer", Role.ACTOR)

    assert _until(lambda: code(graphql(base_url, newcomer, WRITE)) is None), "the new token was never accepted"
    assert code(graphql(base_url, tokens["admin"], READ)) is None


def test_a_file_that_cannot_be_read_keeps_the_tokens_and_an_emptied_one_accepts_none(
    store: Trail, graph: Graph, tokens: dict[str, str]
) -> None:
    token_file = TokenFile(Path(tokens["_file"]), reload_every=0)  # read again only when this test says
    with served(create_app(graph=graph, tokens=token_file)) as base_url:
        Path(tokens["_file"]).write_text('[{"name": "half-writ', encoding="utf-8")
        assert not token_file.reload()
        kept = graphql(base_url, tokens["admin"], READ)

        Path(tokens["_file"]).write_text("[]", encoding="utf-8")
        assert token_file.reload()
        emptied = graphql(base_url, tokens["admin"], READ)
        anonymous = graphql(base_url, None, READ)

    assert code(kept) is None
    assert code(emptied) == "UNAUTHENTICATED"
    assert code(anonymous) == "UNAUTHENTICATED"  # not trusted as local: authentication stays on


@pytest.fixture
def on_sighup(tokens: dict[str, str]) -> TokenFile:
    assert threading.current_thread() is threading.main_thread(), "SIGHUP is caught on the main thread only"
    return TokenFile(Path(tokens["_file"]), reload_every=0)  # SIGHUP only


def test_sighup_reads_the_file_again_and_closes_a_revoked_tokens_subscriptions(
    store: Trail, graph: Graph, tokens: dict[str, str], on_sighup: TokenFile
) -> None:
    handler = signal.getsignal(signal.SIGHUP)
    # The app is served on a thread of its own, where no handler can be set: the watch begun here, on the
    # main thread, catches SIGHUP, and the app's own watch of the same file joins it.
    with on_sighup.watching(), served(create_app(graph=graph, tokens=on_sighup)) as base_url:
        assert signal.getsignal(signal.SIGHUP) is not handler
        plan_id, root_id = new_plan(base_url, tokens["admin"])
        with subscribed(base_url, plan_id, header=tokens["leaver"]) as ws:
            assert still_open(ws, waker(base_url, tokens["admin"], plan_id, root_id))
            _rewrite(tokens, _without(tokens, "leaver"))
            before_signal = graphql(base_url, tokens["leaver"], READ)

            os.kill(os.getpid(), signal.SIGHUP)
            ended = closed(ws)
        after_signal = graphql(base_url, tokens["leaver"], READ)

    assert code(before_signal) is None  # the file alone is not read again with DECISIONTRAIL_TOKENS_RELOAD=0
    assert ended.rcvd is not None and ended.rcvd.code == 4403
    assert code(after_signal) == "UNAUTHENTICATED"
    assert signal.getsignal(signal.SIGHUP) is handler  # given back when the watch ended


def test_serve_reads_its_token_file_again_on_sighup(store: Trail, graph: Graph, tokens: dict[str, str], tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "NEO4J_URI": graph.uri,
        "DECISIONTRAIL_DATA_DIR": str(tmp_path),
        "DECISIONTRAIL_TOKENS_FILE": tokens["_file"],
        "DECISIONTRAIL_TOKENS_RELOAD": "0",
        "DECISIONTRAIL_RUNTIME_WORKERS": "0",
    }
    env.pop("DECISIONTRAIL_TOKENS", None)
    with open(tmp_path / "serve.log", "wb") as output:
        service = subprocess.Popen(
            [sys.executable, "-m", "decisiontrail", "serve", "--port", str(port)], env=env, stdout=output, stderr=output
        )
    try:
        url = f"http://127.0.0.1:{port}"
        assert _until(lambda: _answers(url), 90), (tmp_path / "serve.log").read_text()
        plan_id, root_id = new_plan(url, tokens["admin"])
        with subscribed(url, plan_id, init=tokens["leaver"]) as ws:
            assert still_open(ws, waker(url, tokens["admin"], plan_id, root_id))
            _rewrite(tokens, _without(tokens, "leaver"))
            before_signal = graphql(url, tokens["leaver"], READ)

            service.send_signal(signal.SIGHUP)
            ended = closed(ws)
        after_signal = graphql(url, tokens["leaver"], READ)

        assert code(before_signal) is None
        assert ended.rcvd is not None and ended.rcvd.code == 4403
        assert code(after_signal) == "UNAUTHENTICATED"
        assert service.poll() is None, "SIGHUP stopped the service"
    finally:
        service.terminate()
        try:
            service.wait(timeout=30)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
