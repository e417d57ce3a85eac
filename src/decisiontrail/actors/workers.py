"""The runtime's workers in a serving process: threads claiming and driving plan runs, and one
keeping their leases (``actors.runtime.Runtime`` does the driving)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from decisiontrail.actors.runtime import Runtime
from decisiontrail.exceptions import DecisionTrailError

log = logging.getLogger(__name__)


class Workers:
    """Worker threads driving runs in a serving process, and one keeping their leases.

    Started with the app (``running()``), stopped with it: a run a stopping worker holds is left
    to its lease, and resumed by the next claim (this process's after a restart, or another's).
    """

    def __init__(self, runtime: Runtime, count: int = 2, poll: float = 0.5, wakeup: threading.Event | None = None) -> None:
        self.runtime = runtime
        self.count = count
        self.poll = poll
        self._stop = threading.Event()
        self._wake = wakeup or threading.Event()
        """Set when a run may have been queued (``Trail.wake_runtime``): a worker looks at once."""
        self._threads: list[threading.Thread] = []

    def wake(self) -> None:
        self._wake.set()

    @contextmanager
    def running(self) -> Iterator[Workers]:
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._work, name=f"decisiontrail-run-{i}", daemon=True) for i in range(self.count)
        ]
        self._threads.append(threading.Thread(target=self._keep_leases, name="decisiontrail-run-leases", daemon=True))
        for thread in self._threads:
            thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._wake.set()
            for thread in self._threads:
                thread.join(timeout=60)
                if thread.is_alive():
                    log.error("runtime thread %s did not stop within 60 s", thread.name)

    @property
    def alive(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                if self.runtime.run_once() is not None:
                    continue
            except DecisionTrailError as e:  # Neo4j unreachable, a wipe under us: try again shortly
                log.warning("runtime worker: %s: %s", e.code, e.message)
            except Exception:
                log.exception("runtime worker: claiming a run failed")
            self._wake.wait(self.poll)
            self._wake.clear()

    def _keep_leases(self) -> None:
        while not self._stop.wait(self.runtime.settings.lease / 3):
            try:
                self.runtime.heartbeat()
            except Exception:
                log.exception("runtime: keeping the leases failed")
