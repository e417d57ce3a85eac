"""A load generator's HTTP/1.1: one keep-alive connection per simulated client, each request
written whole, each response read by its ``Content-Length``, and nothing else.

A load generator must cost far less than what it loads, or it measures its own queue. httpx's
asynchronous client spent 0.8-0.9 ms of the processor on each recording and its answer (this
client: 0.11-0.13 ms; 2,000 requests to a trivial server, in the lab); 64 such clients in one
process, on the same two cores as the service and Neo4j, kept their event loop 14-27 ms late at
the median, and every answer waited its turn there: the shed-load scenario's clients saw admitted
requests take several times what the service spent on them (its ``Server-Timing``), and refusals
the service answered in a tenth of a millisecond take a fifth of a second.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any


class WireError(Exception):
    """The connection failed or closed before a whole answer arrived."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One client's keep-alive connection to ``host:port``, opened on first use and again after a failure."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post_json(self, path: str, payload: Any, *, timeout: float) -> Response:
        """POST ``payload`` as JSON; raises TimeoutError after ``timeout`` seconds, WireError when the
        connection fails (either way the connection is closed, and the next request opens another)."""
        body = json.dumps(payload).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode("ascii")
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(head + body)
        except TimeoutError:  # an OSError too: not a failed connection, but the answer is left half read
            self.close()
            raise
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
            self.close()
            raise WireError(f"{type(e).__name__}: {e}") from e
        except BaseException:  # a cancellation leaves the answer half read too
            self.close()
            raise

    async def _exchange(self, request: bytes) -> Response:
        if self._reader is not None and self._reader.at_eof():  # closed by the server while idle (its keep-alive timeout)
            self.close()
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._writer.write(request)
        await self._writer.drain()
        lines = (await self._reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            raise ValueError("a chunked answer: this client reads answers by their Content-Length only")
        body = await self._reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Response(status, headers, body)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
