"""Per-caller rate limits: a token bucket for each caller, which its requests draw on."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

MAX_BUCKETS = 10_000
"""Buckets kept before the full ones are forgotten (a full bucket is as good as a new one)."""


class RateLimits:
    """``rate`` requests a second on average for each caller, ``burst`` of them at once.

    A caller's bucket holds up to ``burst`` tokens and gains ``rate`` a second; a request takes one,
    and one that finds none is refused, told how long until one is there:

    >>> now = [0.0]
    >>> limits = RateLimits(rate=1.0, burst=2, clock=lambda: now[0])
    >>> [limits.spend("alice"), limits.spend("alice"), limits.spend("alice"), limits.spend("bob")]
    [0.0, 0.0, 1.0, 0.0]
    >>> now[0] = 0.5
    >>> limits.spend("alice")
    0.5
    >>> now[0] = 1.0
    >>> limits.spend("alice")
    0.0
    """

    def __init__(self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs a positive rate and a burst of at least one request")
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # caller: (tokens, when they were counted)

    def spend(self, caller: str) -> float:
        """Take one request from ``caller``'s bucket: 0 when it may go ahead, else the seconds until it may."""
        now = self.clock()
        tokens, counted = self._buckets.get(caller, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - counted) * self.rate)
        if tokens >= 1.0:
            self._buckets[caller] = (tokens - 1.0, now)
            if len(self._buckets) > MAX_BUCKETS:
                self._forget_full(now)
            return 0.0
        self._buckets[caller] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        full = [c for c, (tokens, counted) in self._buckets.items() if tokens + (now - counted) * self.rate >= self.burst]
        for caller in full:
            del self._buckets[caller]


def retry_after(wait: float) -> int:
    """``Retry-After``'s whole seconds for a wait: rounded up, at least one.

    >>> retry_after(0.2), retry_after(1.0), retry_after(2.5)
    (1, 1, 3)
    """
    return max(1, math.ceil(wait))
