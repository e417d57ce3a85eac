"""The scenarios: each measures our path and its baseline on the same database in the same run.

This module holds what they share: their sizes (``Sizes``, ``QUICK``, ``FULL``, the batch sizes and
the concurrent clients), the GraphQL text more than one of them sends (``IMPACT``: the walks and
the deep correction), the anchor the recording, correction and walk rows are judged against
(``HTTP_ANCHOR``) and the pair of rows each of them makes with it (``anchored_rows``). The scenarios themselves: ``bench.recording``, ``bench.corrections``,
``bench.walks`` and ``bench.tree`` (and ``bench.offline_rows``, ``bench.events``,
``bench.explorer`` and ``bench.runtime``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bench.harness import Row, Stats, judged


@dataclass(frozen=True)
class Sizes:
    """How big each scenario runs: ``make bench`` is quick, ``make bench-full`` the whole range."""

    name: str
    records: int  # single recordDecision calls, sequential and concurrent
    batches: int  # recordDecisions batches of each size in BATCHES
    corrections: tuple[int, ...]  # downstream sizes
    correction_repeat: int  # runs each way at downstreams up to 100 (a p95 needs 20); 5 at 10k, 2 at 100k
    queries: int  # lineage, impact and tree queries
    events: int  # corrections announced to the live-event subscribers
    offline: tuple[int, ...]  # decisions loaded, checked and exported
    offline_by_group: tuple[int, ...] = ()  # decisions checked and exported group by group only (too many to load whole)
    deep_levels: int = 1000  # levels of plans under the deep correction
    deep_repeat: int = 5  # its runs (a warm-up first)
    offline_repeat: int = (
        1  # runs each way of every group-by-group row at the ``offline`` sizes (a warm-up first when more than 1)
    )

    def up_to(self, largest: int) -> Sizes:
        """These sizes without the workloads and corrections larger than ``largest`` decisions.

        >>> FULL.up_to(1_000_000).offline, FULL.up_to(1_000_000).offline_by_group, FULL.up_to(10_000).corrections
        ((100000, 1000000), (), (1, 100, 10000))
        """
        return replace(
            self,
            corrections=tuple(n for n in self.corrections if n <= largest),
            offline=tuple(n for n in self.offline if n <= largest),
            offline_by_group=tuple(n for n in self.offline_by_group if n <= largest),
        )


QUICK = Sizes(
    "quick",
    records=200,
    batches=20,
    corrections=(1, 100, 10_000),
    correction_repeat=20,
    queries=30,
    events=20,
    offline=(10_000,),
    offline_repeat=5,  # a run is a few seconds at 10,000, and one run moved by half between runs
)
FULL = Sizes(
    "full",
    records=1000,
    batches=100,
    corrections=(1, 100, 10_000, 100_000),
    correction_repeat=30,
    queries=100,
    events=50,
    offline=(100_000, 1_000_000),
    offline_by_group=(10_000_000,),
)
BATCHES = (100, 1000)  # recordDecisions batch sizes
CLIENTS = 16

IMPACT = """query($id: ID!) { impact(decisionId: $id) { decisions { id } plans { id } } }"""
HTTP_ANCHOR = "the same statement behind a minimal HTTP endpoint (Starlette, the driver, rows as JSON)"


def anchored_rows(
    scenario: str,
    case: str,
    ours: Stats,
    anchored: Stats,
    raw: Stats,
    *,
    hits: dict[str, int],
    breakdown: dict[str, Any],
    anchor: str = HTTP_ANCHOR,
    driver: str = "the same statement through the driver",
    between: Sequence[Row] = (),
) -> list[Row]:
    """The same runs of ours twice: against ``anchored``, the same statement behind the minimal HTTP
    endpoint (at most 1.2x, judged by the ratio's interval), with the db hits and where ours' time
    went; then, after the rows ``between`` (the peer's, where it answers), against ``raw``, the
    statement through the driver (no target: the engine's own limit, without HTTP)."""
    met, interval = judged(ours, anchored, 1.2)
    return [
        Row(
            scenario,
            case,
            ours,
            anchored,
            anchor,
            target="<= 1.2x",
            met=met,
            interval=interval,
            extra={"db_hits": hits, "breakdown": breakdown},
        ),
        *between,
        Row(
            scenario,
            f"{case}: against the driver",
            ours,
            raw,
            driver,
            note=f"ours: the same runs as the row{'s' if between else ''} above; the engine's own limit, no HTTP",
            extra={"db_hits": hits},
        ),
    ]
