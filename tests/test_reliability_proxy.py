"""The fault proxy of the combined scenarios (reliability/proxy.py), against a small echo server:
it forwards, delays, drops an answer with its connection, swallows one, and springs its trap at a
statement or its COMMIT, recognised by their bytes however the reads split them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from reliability.proxy import COMMIT, Link, LoseAnswers, Proxy, Trap, deafen


@pytest.fixture
def echo() -> Iterator[int]:
    """A server answering every read with ``ok:`` and what it read."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(b"ok:" + data)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def _client(proxy: Proxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _ask(sock: socket.socket, data: bytes) -> bytes:
    sock.sendall(data)
    return sock.recv(65536)


def test_it_forwards_and_delays_answers(echo: int) -> None:
    with Proxy("127.0.0.1", echo) as proxy, _client(proxy) as sock:
        assert _ask(sock, b"hello") == b"ok:hello"
        proxy.delay = 0.3
        start = time.monotonic()
        assert _ask(sock, b"again") == b"ok:again"
        assert time.monotonic() - start >= 0.3


def test_lose_answers_drops_every_nth_marked_answer_and_closes_its_connection(echo: int) -> None:
    tap = LoseAnswers(b"batch", every=2)
    with Proxy("127.0.0.1", echo, tap=tap) as proxy:
        with _client(proxy) as sock:
            assert _ask(sock, b"batch 1") == b"ok:batch 1"  # not active yet
        tap.active.set()
        with _client(proxy) as sock:
            assert _ask(sock, b"batch 2") == b"ok:batch 2"  # the first seen while active
            assert _ask(sock, b"single") == b"ok:single"  # not marked
            assert _ask(sock, b"batch 3") == b""  # the second: dropped, the connection closed
        assert (tap.seen, tap.lost) == (2, 1)


def test_a_trap_springs_after_the_commit_of_a_marked_transaction_once(echo: int) -> None:
    sprung: list[int] = []
    trap = Trap(b"begin_correction", lambda link: sprung.append(link.number), times=1)
    with Proxy("127.0.0.1", echo, tap=trap) as proxy, _client(proxy) as sock:
        _ask(sock, b"RUN other" + COMMIT)
        trap.arm()
        _ask(sock, b"RUN other statement")
        _ask(sock, COMMIT)  # a commit, but of an unmarked transaction
        assert sprung == []
        _ask(sock, b"RUN begin_corr")
        _ask(sock, b"ection ...")  # the marker split between two reads
        assert sprung == []
        _ask(sock, COMMIT[:3])
        _ask(sock, COMMIT[3:])  # and the COMMIT too
        assert sprung == [1]
        _ask(sock, b"RUN begin_correction" + COMMIT)
        assert sprung == [1]  # disarmed after ``times``
        assert not trap.armed.is_set()


def test_a_trap_at_the_statement_springs_before_any_commit(echo: int) -> None:
    sprung: list[Link] = []
    trap = Trap(b"lock_traces", sprung.append, at="statement")
    trap.arm()
    with Proxy("127.0.0.1", echo, tap=trap) as proxy, _client(proxy) as sock:
        _ask(sock, b"RUN lock_traces")
        assert len(sprung) == 1
    with pytest.raises(ValueError, match="at:"):
        Trap(b"x", sprung.append, at="rollback")


def test_a_deafened_link_swallows_what_the_server_sends_and_stays_open(echo: int) -> None:
    trap = Trap(b"create_decisions", deafen, times=1)
    trap.arm()
    with Proxy("127.0.0.1", echo, tap=trap) as proxy, _client(proxy) as deaf, _client(proxy) as other:
        deaf.settimeout(0.5)
        _ask(deaf, b"RUN create_decisions")
        deaf.sendall(COMMIT)
        with pytest.raises(TimeoutError):
            deaf.recv(65536)  # no answer, and no close either
        assert _ask(other, b"hello") == b"ok:hello"  # other connections are untouched
