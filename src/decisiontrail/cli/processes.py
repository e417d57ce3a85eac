"""`serve`'s worker processes: the parent that supervises them on one port, and the app each builds."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from uvicorn import Config
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess

from decisiontrail.settings import Neo4jSettings

if TYPE_CHECKING:
    from socket import socket

    from starlette.applications import Starlette

__all__ = ["OPTIONS_VARIABLE", "WorkerOptions", "WorkerProcesses", "serve", "worker_app"]

log = logging.getLogger("decisiontrail")

OPTIONS_VARIABLE = "_DECISIONTRAIL_SERVE_WORKER"
"""The environment variable through which `serve` hands its options to its worker processes (JSON):
each worker is a new interpreter (uvicorn spawns them), which inherits the environment and nothing else."""

LIFESPAN_STOP = 10
"""Seconds a stopping worker is given, past its requests' grace, for its lifespan's own shutdown (the
runtime's workers, the relay, the driver) before it is killed."""

PR_SET_PDEATHSIG = 1
"""Linux's prctl(2) option: the signal a process is sent when the thread that started it ends."""


@dataclass(frozen=True)
class WorkerOptions:
    """What `serve` was told that each worker's app needs to know."""

    parent: int
    """The supervising process: a worker ends with it."""
    max_in_flight: int | None
    max_websockets: int | None
    server_timing: bool
    log_level: int

    def to_environment(self) -> None:
        os.environ[OPTIONS_VARIABLE] = json.dumps(asdict(self))

    @classmethod
    def from_environment(cls) -> WorkerOptions:
        return cls(**json.loads(os.environ[OPTIONS_VARIABLE]))


def serve(options: WorkerOptions, *, workers: int, host: str, port: int, access_log: bool, grace: float) -> int:
    """Serve ``host:port`` from ``workers`` processes, each building its app with ``worker_app``, until
    SIGTERM or SIGINT; the exit status (uvicorn's STARTUP_FAILURE when a worker could not start)."""
    options.to_environment()
    config = Config(
        f"{__name__}:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        access_log=access_log,
        timeout_graceful_shutdown=int(grace),
        ws_per_message_deflate=False,  # as one process serves (serving._serve_here)
    )
    supervisor = WorkerProcesses(config, sockets=[config.bind_socket()], stop_within=grace + LIFESPAN_STOP)
    supervisor.run()
    if any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes):
        log.error("a worker process could not start (its log says why): stopped")
        return STARTUP_FAILURE
    return 0


class WorkerProcesses(Multiprocess):
    """uvicorn's supervisor, which binds the port once, starts the workers on it and replaces one that
    dies; here SIGHUP is passed to each worker (each reads its token file again, as one process does,
    rather than being replaced) and stopping has a bound: a worker that outlives it is killed."""

    def __init__(self, config: Config, sockets: list[socket], *, stop_within: float) -> None:
        super().__init__(config, sockets)
        self.stop_within = stop_within

    def handle_hup(self) -> None:
        log.info("SIGHUP: passed to each worker process")
        for process in self.processes:
            if process.pid is not None and process.exitcode is None:
                os.kill(process.pid, signal.SIGHUP)

    def join_all(self) -> None:
        deadline = time.monotonic() + self.stop_within
        for process in self.processes:
            process.process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                log.warning("worker process %s did not stop within %.0f s: killed", process.pid, self.stop_within)
                process.kill()
                process.process.join()


def worker_app() -> Starlette:
    """The app of one worker process, which uvicorn calls there: Neo4j as the environment names it (the
    parent's embedded server, when it started one), `serve`'s options from ``OPTIONS_VARIABLE``."""
    from decisiontrail.app import MAX_IN_FLIGHT, MAX_WEBSOCKETS, create_app

    options = WorkerOptions.from_environment()
    end_with(options.parent)
    # SIGHUP reaches a worker from its parent: the token file, when there is one, then catches it
    # (read again); without one it must not end the worker, whose parent would only start another.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    logging.basicConfig(level=options.log_level, format="decisiontrail: %(message)s", stream=sys.stderr)
    return create_app(
        Neo4jSettings.from_env(),
        max_in_flight=options.max_in_flight or MAX_IN_FLIGHT,
        max_websockets=options.max_websockets if options.max_websockets is not None else MAX_WEBSOCKETS,
        server_timing=options.server_timing,
    )


def end_with(parent: int) -> None:
    """Have this process killed when ``parent``, which supervises it, dies: killing the service's
    process kills the service, rather than leaving workers nobody supervises serving its port (and
    holding their runs' claims). On Linux the kernel does it at once; elsewhere a thread looks each second."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) was refused")
    else:
        threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before this process could ask
        os._exit(1)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(1)
