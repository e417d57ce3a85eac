"""The service served by uvicorn in a thread of this process, for the harness and the tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette

from decisiontrail.graphdb.embedded import free_port


@contextmanager
def served(app: Starlette, *, timeout_keep_alive: int = 5) -> Iterator[str]:
    """Serve ``app`` on a free loopback port until the block ends; yields its base URL. An idle
    connection is closed after ``timeout_keep_alive`` seconds (uvicorn's default)."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=timeout_keep_alive)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        if thread.is_alive():  # its background work would go on writing under whoever comes next
            raise RuntimeError("the API did not stop within 30 s")
