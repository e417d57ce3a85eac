"""Progress of the long commands, on stderr: shown on a terminal, never with -q, never on stdout.

A command's results (a document, a report, ``--json``) are written to stdout alone, so a pipe or a
file gets them whole; what it is doing meanwhile goes to stderr, as tqdm bars, only when stderr
is a terminal someone watches.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm

__all__ = ["groups_of_plans", "on_terminal", "wanted", "working", "written"]


def on_terminal() -> bool:
    """Whether stderr is a terminal (a test stands in for one by replacing this)."""
    return sys.stderr.isatty()


def wanted(quiet: bool) -> bool:
    """Whether to show progress: stderr is a terminal and -q was not given."""
    return not quiet and on_terminal()


@contextmanager
def working(description: str, show: bool) -> Iterator[None]:
    """``description`` and how long the block has run so far: for work that says nothing until it
    is done, such as one transaction."""
    if not show:
        yield
        return
    with tqdm(desc=description, bar_format="{desc}: {elapsed}", file=sys.stderr) as bar, _kept_fresh(bar):
        yield


@contextmanager
def written(description: str, show: bool) -> Iterator[Callable[[str], None]]:
    """A counter of what is written, in bytes (UTF-8), told each piece as it goes out; the time runs
    on while nothing is (the graph loaded before the first piece)."""
    if not show:
        yield lambda piece: None
        return
    with tqdm(desc=description, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr) as bar, _kept_fresh(bar):

        def count(piece: str) -> None:
            bar.update(len(piece.encode("utf-8")))

        yield count


@contextmanager
def groups_of_plans(description: str, show: bool) -> Iterator[Callable[[int, int], None] | None]:
    """What `check --all` and `export --all` hear of their groups of plans, (done, of how many), as a
    bar; None when not shown."""
    if not show:
        yield None
        return
    with tqdm(desc=description, unit="group", file=sys.stderr) as bar, _kept_fresh(bar):

        def heard(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        yield heard


@contextmanager
def _kept_fresh(bar: tqdm[Any], every: float = 0.5) -> Iterator[None]:
    """``bar`` redrawn every ``every`` seconds while the block runs, so its time runs on between updates."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            bar.refresh()

    ticker = threading.Thread(target=tick, name="progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
