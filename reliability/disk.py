"""Neo4j's disk full under load: writes refused with a clear error, nothing half written, recovery once space returns.

Neo4j's store and transaction logs lie on a small tmpfs of the scenario's own; in the middle of
a load a filler file takes every block left, stays a few seconds, and is deleted. Neo4j is run
with its transaction logs not preallocated (its default preallocates them, and a full disk would
not bite until the next rotation), so a commit needs new blocks.

What Neo4j 5.26 does (seen here): the commit that meets the full disk is refused
(``TransactionLogError``: "Could not append transaction ... to log", its debug.log says "No space
left on device"), and the database panics: every transaction after it, reads too, is refused
("needs to be restarted") until Neo4j is restarted, however much space has come back. So the
scenario does what an operator does: frees the space, then restarts Neo4j on the same port; the
same service process must answer again by itself. A clean stop there corrupts the transaction
log (see ``disk_full``): Neo4j is killed instead.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from decisiontrail.exceptions import Unavailable
from decisiontrail.graphdb.embedded import EmbeddedNeo4j, free_port
from decisiontrail.settings import Neo4jSettings
from reliability import load
from reliability.faults import (
    WINDOW_GRACE,
    Probe,
    Progress,
    Service,
    _clock,
    _finish_load,
    _first_success,
    _graph,
    _kill_if_running,
    _say,
    outside_windows,
)
from reliability.outcome import Outcome

DISK_MB = 256
"""The tmpfs under Neo4j's data directory: room for its two databases and the load's transaction
logs (kept up to 256 MB, pruned only at checkpoints), while filling it takes a moment."""

NEO4J_SETTINGS = {"db.tx_log.preallocate": "false", "db.tx_log.rotation.size": "1M"}
"""Transaction logs grown as they are written (and rotated often), so a commit needs new blocks."""

FILLER = "filler"


def disk_full(
    scratch_dir: Path,
    *,
    seconds: float = 30.0,
    clients: int = 4,
    full_seconds: float = 5.0,
    stop_cleanly: bool = False,
    seed: int = 0,
    heap_mb: int = 512,
    pagecache_mb: int = 64,
    progress: Progress = _say,
) -> Outcome:
    """Neo4j's filesystem filled to the last block in the middle of a load, kept full for
    ``full_seconds`` after the first refusal, then freed.

    The load runs ``seconds`` in all (half before the disk fills, half after writes succeed again)
    plus the time the fault takes. Required: the full disk refuses writes (else the fault did not
    bite), and every request in its window is answered UNAVAILABLE, never an error without a code
    (but the refusals the load's races explain, and TIMEOUT for a request in flight while Neo4j
    restarts: it opens Bolt before it has warmed up);
    once the space is back (and Neo4j restarted, if its database stays failed: figure
    ``neo4j_restarted_after_space_returned``) the same service process answers again by itself;
    and everything ``load.verify`` requires: nothing acknowledged lost or duplicated, nothing half
    written, every check clean. The load's UNAVAILABLE answers are excused only inside the fault's
    window, from filling the disk until a write is acknowledged again (``faults.outside_windows``);
    outside, only as many as the service logged silent connections. ``scratch_dir`` holds the
    tmpfs's mount point (under Neo4j's home), the service's log and the journal.

    Neo4j is restarted by SIGKILL: after a clean stop of the panicked database the next start
    refuses its transaction log ("Unreadable bytes are encountered after last readable position",
    a checksum mismatch just past the last commit; every one of four tries here), seemingly because
    the shutdown flushes again the buffer the full disk took only in part. Killed, the log ends in
    the refused commit's partial entry, which recovery drops (every run here). ``stop_cleanly``
    stops it instead, to show that.
    """
    outcome = Outcome(
        "disk_full", f"Neo4j's disk ({DISK_MB} MB tmpfs) full for {full_seconds:.0f} s under a load of {clients} clients"
    )
    started = time.monotonic()
    scratch_dir.mkdir(parents=True, exist_ok=True)
    journal = scratch_dir / "disk-full.jsonl"
    journal.unlink(missing_ok=True)
    home = scratch_dir / "neo4j"
    disk = home / "data"  # what Neo4j writes: its databases and transaction logs
    grace = 60.0
    figures: dict[str, Any] = {}
    with ExitStack() as stack:
        try:
            mount(disk, DISK_MB)
        except RuntimeError as e:
            outcome.require(False, str(e))
            return outcome
        stack.callback(unmount, disk, progress)
        neo4j = EmbeddedNeo4j(
            home,
            cache_dir=Neo4jSettings.from_env().cache_dir,
            bolt_port=free_port(),
            heap_mb=heap_mb,
            pagecache_mb=pagecache_mb,
            extra_settings=NEO4J_SETTINGS,
            progress=progress,
        )
        stack.enter_context(neo4j)
        assert neo4j.uri is not None
        debug_log = home / "logs" / "debug.log"
        debug_from = debug_log.stat().st_size if debug_log.exists() else 0
        service = Service(neo4j.uri, "neo4j", scratch_dir / "serve.log")
        stack.callback(service.stop)
        service.start()
        pid = service.pid
        cap = seconds + full_seconds + 60 + 2 * neo4j.startup_timeout
        generator = load.spawn(service.url, journal, seconds=cap, clients=clients, seed=seed, grace=grace)
        stack.callback(_kill_if_running, generator)
        load.wait_started(journal, generator)
        time.sleep(seconds / 2)

        used_before = _used_mb(disk)
        progress(f"filling Neo4j's disk ({used_before:.1f} of {DISK_MB} MB used) under load")
        probe = Probe(service.url)
        with probe.running():
            began = time.time()
            filled = fill(disk / FILLER)
            full_at = time.time()
            refused_at = _first_refusal(probe, full_at, timeout=30.0)
            bit = refused_at is not None
            outcome.require(bit, "Neo4j's disk was full for 30 s and no request was refused: the fault did not bite")
            progress(
                f"disk full ({filled / 2**20:.1f} MB of filler)"
                + (f"; the first refusal {refused_at - full_at:.2f} s later" if refused_at is not None else "; nothing refused")
                + f"; keeping it full {full_seconds:.0f} s"
            )
            time.sleep(full_seconds)
            (disk / FILLER).unlink()
            space_back = time.time()
            progress("space returned (filler deleted)")
            # Neo4j does not leave a panic by itself; give it the chance all the same.
            by_itself = _first_success(service.url, timeout=5.0)
        restarted = by_itself is None
        neo4j_restart = 0.0
        restarting = (0.0, 0.0)  # wall clock, from Neo4j killed until it is ready again
        if restarted:
            how = "stopping it cleanly" if stop_cleanly else "killing it (a clean stop would corrupt its log)"
            progress(f"Neo4j's database still refuses every transaction: restarting Neo4j, {how}")
            back, restart_began = time.monotonic(), time.time()
            neo4j.stop() if stop_cleanly else neo4j.kill()
            try:
                neo4j.start()
            except Unavailable as e:
                outcome.require(False, f"Neo4j did not start again after the disk was full: {_cause(e.message)}")
                outcome.figures.update(neo4j_restarted_after_space_returned=True, neo4j_stopped_cleanly=stop_cleanly)
                outcome.seconds = time.monotonic() - started
                return outcome
            neo4j_restart = time.monotonic() - back
            restarting = (restart_began, time.time())
        read_again = _first_success(service.url, timeout=60)
        read_at = time.time()
        write_again = _first_ack_after(journal, space_back, generator, timeout=60)
        end = write_again if write_again is not None else time.time()
        window = (began, end)
        recovered = write_again is not None and read_again is not None and service.alive and service.pid == pid
        outcome.require(recovered, "the service did not acknowledge a write again by itself within 60 s of the space's return")
        progress(
            f"writes acknowledged again {end - space_back:.2f} s after the space returned"
            + (f" (Neo4j restarted in {neo4j_restart:.1f} s)" if restarted else " (without a restart)")
        )
        time.sleep(seconds / 2)
        _finish_load(generator, outcome, grace)
        events = load.read_journal(journal)
        # Neo4j opens Bolt while it still warms up after recovery: requests sent then may wait past
        # the service's time limit and be answered TIMEOUT ("it wrote nothing"), which the load
        # retries. That is the restart's doing, not the disk's: excused only in flight during it.
        timeouts = [e for e in load.iter_codes(events, "TIMEOUT") if _in_flight(e, restarting)]
        with _graph(neo4j.uri) as graph:
            # Refused while the disk is full (and while Neo4j restarts): UNAVAILABLE, retried with the
            # same keys. Only inside the fault's window, though (judged below).
            load.verify(events, graph, outcome, expected_codes={"UNAVAILABLE"}, explained={"TIMEOUT": len(timeouts)})
        silent = load.silent_in_log(service.log_path)
        neo4j_said = debug_log.read_bytes()[debug_from:].decode(errors="replace") if debug_log.exists() else ""
        figures.update(
            {
                "disk_used_mb_before_filling": round(used_before, 1),
                "filler_mb": round(filled / 2**20, 1),
                "seconds_to_first_refusal": None if refused_at is None else round(refused_at - full_at, 2),
                "neo4j_log_says_no_space_left": "No space left on device" in neo4j_said,
                "neo4j_panicked": "Database panic" in neo4j_said,
                "neo4j_recovered_by_itself": not restarted,
                "neo4j_restarted_after_space_returned": restarted,
                "neo4j_stopped_cleanly": restarted and stop_cleanly,
                "neo4j_restart_seconds": round(neo4j_restart, 1),
                "probe_answers_while_full": dict(Counter(code for code, _, at in probe.answers if at >= began)),
                "readyz_while_full": sorted(set(probe.readiness)),
            }
        )

    # What the load's races explain (a spawn corrected meanwhile, ...) is refused with or without a full disk.
    raced = [e for e in events if e["type"] == "error" and _race(e) and _in_flight(e, window)]
    in_window = [e for e in events if e["type"] == "error" and not _race(e) and _in_flight(e, window)]
    refused = Counter(e["code"] for e in in_window)
    messages = Counter(e.get("message", "") for e in in_window if e["code"] == "UNAVAILABLE")
    unclear = Counter(e["code"] for e in in_window if e["code"] != "UNAVAILABLE" and e not in timeouts)
    clear = bit and not unclear
    outcome.require(not unclear, f"requests in the fault's window were answered {dict(unclear)}, not UNAVAILABLE")
    outcome.require(
        outcome.figures["unresolved_writes"] == 0, f"{outcome.figures['unresolved_writes']} write(s) never got an answer"
    )
    stray = outside_windows(events, [window])
    unexplained = len(stray) - min(len(stray), silent)
    outcome.require(
        unexplained == 0,
        f"{unexplained} UNAVAILABLE answer(s) outside the fault's window ({_clock(began)}-{_clock(end)}), beyond the "
        f"{silent} silent connection(s) the service logged: "
        + ", ".join(f"{e['op']} at {_clock(e['at'])} after {e['ms']:.0f} ms" for e in stray[:5]),
    )
    outcome.figures.update(
        {
            "faults_injected": 1,
            "faults_survived": int(clear and recovered and outcome.passed),
            **figures,
            "refused_while_full": dict(sorted(refused.items())),
            "error_messages_while_full": dict(messages.most_common()),
            "example_error": next(iter(messages), None),
            "race_refusals_in_window": len(raced),
            "timeouts_while_neo4j_restarted": len(timeouts),
            "seconds_to_read_after_space_returned": round(read_at - space_back, 2) if read_again is not None else None,
            "seconds_to_write_after_space_returned": round(end - space_back, 2),
            "fault_window_seconds": round(end - began, 1),
            "fault_window_grace_seconds": WINDOW_GRACE,
            "unavailable outside a fault's window": len(stray),
            "connections given up silent (answers lost on the way)": silent,
            "service_restarted": service.starts - 1,
        }
    )
    outcome.seconds = time.monotonic() - started
    return outcome


def _in_flight(event: dict[str, Any], span: tuple[float, float]) -> bool:
    """Whether a journalled answer's request was in flight at some moment of ``span`` (``WINDOW_GRACE`` more)."""
    return span[1] > 0 and event["at"] >= span[0] and event["at"] - event["ms"] / 1000 <= span[1] + WINDOW_GRACE


def _race(error: dict[str, Any]) -> bool:
    """Whether a journalled error is a refusal the load's races explain (``load.RACE_REFUSALS``)."""
    return load.refusal(error) in load.RACE_REFUSALS.get(error["op"], frozenset())


def _cause(message: str) -> str:
    """The reasons in a failed start's log tail (its last ``Caused by`` lines)."""
    causes = [line.removeprefix("Caused by: ") for line in message.splitlines() if line.startswith("Caused by:")]
    return " / ".join(causes[-3:]) if causes else message.splitlines()[0]


def mount(directory: Path, size_mb: int) -> None:
    """A tmpfs of ``size_mb`` at ``directory`` (empty, made if missing); RuntimeError saying why not."""
    directory.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(directory):
        raise RuntimeError(f"{directory} is a mount point already (a run before this one left it?); unmount it first")
    if any(directory.iterdir()):
        raise RuntimeError(f"{directory} is not empty; the scenario mounts its own small filesystem there")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "decisiontrail-disk-full", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"could not mount a {size_mb} MB tmpfs at {directory} (the scenario needs root, or CAP_SYS_ADMIN): "
            + (result.stderr.strip() or f"mount exited with {result.returncode}")
        )


def unmount(directory: Path, progress: Progress) -> None:
    """Unmount ``directory``'s tmpfs; lazily (once nothing uses it) if something still holds it."""
    if not os.path.ismount(directory):
        return
    if subprocess.run(["umount", str(directory)], capture_output=True, check=False).returncode != 0:
        progress(f"{directory} is busy; unmounting it lazily")
        subprocess.run(["umount", "-l", str(directory)], check=False)


def fill(path: Path) -> int:
    """Write ``path`` until its filesystem refuses a block (ENOSPC); the bytes written."""
    written = 0
    with path.open("wb", buffering=0) as filler:
        for block in (b"\0" * 2**20, b"\0" * 4096):  # big blocks, then the last small ones
            try:
                while True:
                    written += filler.write(block) or 0
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
    return written


def _used_mb(directory: Path) -> float:
    stats = os.statvfs(directory)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize / 2**20


def _first_refusal(probe: Probe, since: float, timeout: float) -> float | None:
    """When the probe (reading every 0.25 s) was first refused after ``since``, or None within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        refused = [at for code, _, at in list(probe.answers) if code != "OK" and at >= since]
        if refused:
            return min(refused)
        time.sleep(0.1)
    return None


def _first_ack_after(journal: Path, since: float, generator: subprocess.Popen[bytes], timeout: float) -> float | None:
    """When the load's first write answered after ``since`` was acknowledged (wall clock), or None within ``timeout``."""
    deadline = time.monotonic() + timeout
    offset = 0
    with journal.open("rb") as lines:
        while time.monotonic() < deadline and generator.poll() is None:
            lines.seek(offset)
            chunk = lines.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]
            offset += len(complete)
            for line in complete.splitlines():
                event = json.loads(line)
                if event["type"] == "ack" and event["at"] >= since:
                    return float(event["at"])
            time.sleep(0.2)
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m reliability.disk [--seconds N] [--clients N]``: the scenario alone, on a Neo4j of its own."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(
        prog="python -m reliability.disk", description="Neo4j's disk full under load, on a Neo4j of its own."
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds of load, half before the fault, half after")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--full-seconds", type=float, default=5.0, help="seconds the disk stays full after the first refusal")
    parser.add_argument("--stop-cleanly", action="store_true", help="restart Neo4j by a clean stop rather than SIGKILL")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scratch", type=Path, help="keep the store, logs and journal here (default: a temporary directory)")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        scratch = args.scratch or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="decisiontrail-disk-full-")))
        outcome = disk_full(
            scratch,
            seconds=args.seconds,
            clients=args.clients,
            full_seconds=args.full_seconds,
            stop_cleanly=args.stop_cleanly,
            seed=args.seed,
        )
    print(json.dumps(outcome.as_json(), indent=2))
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    sys.exit(main())
