"""A TCP proxy for faults on the wire: between the load and the service, or the service and Neo4j.

The service (or the load) is pointed at the proxy's port instead of its peer's. By default the
proxy forwards everything as it comes; a scenario changes that while it runs:

- ``delay``: seconds each read from the server waits before it is forwarded (a slow Neo4j, as
  the service sees it: every answer, hence every round trip of a transaction, comes later);
- a ``Tap`` sees what each connection sends and receives, and may cut a connection in the
  middle of an exchange: after the client's bytes reached the server and before the server's
  answer reached the client (a lost response), or call back just after a Bolt ``COMMIT`` went
  through (to kill Neo4j during a commit).

One thread per direction per connection: the proxy carries a load generator's few dozen
connections, not a production's.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from enum import Enum


class Link:
    """One proxied connection: the client's socket, the server's, and what a tap keeps of it."""

    def __init__(self, number: int, client: socket.socket, server: socket.socket) -> None:
        self.number = number
        self.client = client
        self.server = server
        self.state: dict[str, object] = {}
        self.closed = threading.Event()

    def cut(self) -> None:
        """Close both sides at once: the client sees its connection closed without an answer."""
        self.closed.set()
        for sock in (self.client, self.server):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class Verdict(Enum):
    """What becomes of bytes the server sent."""

    FORWARD = "forward"
    SWALLOW = "swallow"
    """Dropped, the connection left open: the client waits for an answer that never comes."""
    CUT = "cut"
    """Dropped and the connection closed: the client knows at once that its answer is lost."""


class Tap:
    """What a scenario does with the bytes: by default, forward them."""

    def sent(self, link: Link, data: bytes) -> None:
        """Called after ``data`` from the client was forwarded to the server."""

    def answered(self, link: Link, data: bytes) -> Verdict:
        """Called before ``data`` from the server would be forwarded to the client."""
        return Verdict.FORWARD


class Proxy:
    """Forwards ``127.0.0.1:<port>`` to ``host:port``; ``delay`` and ``tap`` may change while it runs."""

    def __init__(self, host: str, port: int, *, delay: float = 0.0, tap: Tap | None = None) -> None:
        self.target = (host, port)
        self.delay = delay
        self.tap = tap or Tap()
        self.links: list[Link] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name=f"proxy-{self.port}", daemon=True).start()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                link = Link(len(self.links) + 1, client, server)
                self.links.append(link)
            threading.Thread(target=self._upstream, args=(link,), daemon=True).start()
            threading.Thread(target=self._downstream, args=(link,), daemon=True).start()

    def _upstream(self, link: Link) -> None:
        try:
            while data := link.client.recv(65536):
                link.server.sendall(data)
                self.tap.sent(link, data)
        except OSError:
            pass
        link.cut()

    def _downstream(self, link: Link) -> None:
        try:
            while data := link.server.recv(65536):
                if self.delay:
                    time.sleep(self.delay)
                verdict = self.tap.answered(link, data)
                if verdict is Verdict.FORWARD:
                    link.client.sendall(data)
                elif verdict is Verdict.CUT:
                    break
        except OSError:
            pass
        link.cut()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            links = list(self.links)
        for link in links:
            link.cut()


COMMIT = b"\x00\x02\xb0\x12\x00\x00"
"""A Bolt COMMIT message as the driver sends it: one chunk of two bytes (a struct of no fields,
signature 0x12) and the chunk's end."""


class Trap(Tap):
    """Watches Bolt: once ``arm()``-ed, on a connection that sends a statement holding ``marker``
    (its text), calls ``then(link)`` just after that statement went to Neo4j (``at="statement"``:
    its transaction open and running) or just after its transaction's COMMIT did (``at="commit"``:
    the commit has reached Neo4j; whether it is made, and whether its answer comes back, is up to
    ``then``: kill Neo4j and the commit is cut off mid-way or made, the client cannot tell which;
    kill the service; make the link ``deaf``). Up to ``times`` transactions, then disarms."""

    def __init__(self, marker: bytes, then: Callable[[Link], None], *, at: str = "commit", times: int = 1) -> None:
        if at not in ("statement", "commit"):
            raise ValueError(f"at: 'statement' or 'commit', not {at!r}")
        self.marker = marker
        self.then = then
        self.at = at
        self.times = times
        self.armed = threading.Event()
        self.sprung = 0
        self._lock = threading.Lock()

    def arm(self) -> None:
        self.armed.set()

    def sent(self, link: Link, data: bytes) -> None:
        if not self.armed.is_set():
            return
        tail = link.state.get("tail", b"")
        seen = (tail if isinstance(tail, bytes) else b"") + data
        if self.marker in seen:
            link.state["marked"] = True
            seen = seen[seen.rindex(self.marker) + len(self.marker) :]
        springs = bool(link.state.get("marked")) and (self.at == "statement" or COMMIT in seen)
        if springs and COMMIT in seen:
            seen = seen[seen.index(COMMIT) + len(COMMIT) :]
        # what a marker or a COMMIT split between two reads needs of this one
        link.state["tail"] = seen[-max(len(self.marker), len(COMMIT)) + 1 :]
        if not springs:
            return
        link.state["marked"] = False
        with self._lock:
            if not self.armed.is_set():
                return
            self.sprung += 1
            if self.sprung >= self.times:
                self.armed.clear()
        self.then(link)

    def answered(self, link: Link, data: bytes) -> Verdict:
        return Verdict.SWALLOW if link.state.get("deaf") else Verdict.FORWARD


def deafen(link: Link) -> None:
    """From now on the link swallows what the server sends, keep-alives too: the client's read
    waits until it gives the connection up (the driver: its receive timeout) with the commit's
    outcome unknown."""
    link.state["deaf"] = True


class LoseAnswers(Tap):
    """Loses the answer to every ``every``-th request whose body holds ``marker``, while ``active``:
    the request reaches the server, which does the work; its answer is dropped and the connection
    closed, so the client knows nothing of it and sends it again."""

    def __init__(self, marker: bytes, every: int = 3) -> None:
        self.marker = marker
        self.every = every
        self.active = threading.Event()
        self.seen = 0
        self.lost = 0
        self._lock = threading.Lock()

    def sent(self, link: Link, data: bytes) -> None:
        if self.active.is_set() and self.marker in data:
            with self._lock:
                self.seen += 1
                if self.seen % self.every == 0:
                    link.state["lose"] = True

    def answered(self, link: Link, data: bytes) -> Verdict:
        if link.state.pop("lose", False):
            with self._lock:
                self.lost += 1
            return Verdict.CUT
        return Verdict.FORWARD
