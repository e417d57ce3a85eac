"""The embedded Neo4j: builds the Java launcher once with Maven, then starts and stops it.

The launcher (``graphdb/launcher/``, shipped in the wheel) runs Neo4j Community in its own
JVM with only Bolt open on loopback. Its build is cached under
``<cache_dir>/neo4j-launcher/<neo4j version>-<source hash>/`` so that only the first start on a
machine pays for Maven.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from types import TracebackType
from typing import IO

import neo4j
from neo4j.exceptions import DriverError, Neo4jError

from decisiontrail.exceptions import Unavailable
from decisiontrail.settings import Neo4jSettings

log = logging.getLogger(__name__)

LAUNCHER_CLASS = "org.decisiontrail.launcher.EmbeddedNeo4j"
MIN_JAVA = 17

Progress = Callable[[str], None]


def require_tool(name: str, purpose: str) -> str:
    """The path of ``name`` on PATH, or Unavailable saying what to install."""
    path = shutil.which(name)
    if path is None:
        hint = {
            "java": "a Java 17 (or 21) JDK, e.g. `apt-get install openjdk-17-jdk-headless`",
            "mvn": "Apache Maven 3.8+, e.g. `apt-get install maven`",
        }[name]
        raise Unavailable(
            f"`{name}` is not on PATH; the embedded Neo4j needs it to {purpose}. Install {hint}, "
            "or set NEO4J_URI to use an existing Neo4j 5.26+ server instead."
        )
    return path


def java_major_version(java: str) -> int:
    """The major version of the JVM at ``java`` (``java -version`` prints it on stderr)."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        raise Unavailable(f"could not read the Java version from `{java} -version`: {out.strip()!r}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def launcher_sources() -> dict[str, bytes]:
    """The launcher's build files by relative path, read from the installed package."""
    root = files("decisiontrail.graphdb") / "launcher"
    sources: dict[str, bytes] = {}
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name == "pom.xml" or entry.name.endswith(".java"):
                sources[prefix + entry.name] = entry.read_bytes()
    if "pom.xml" not in sources:
        raise Unavailable("the decisiontrail package is missing graphdb/launcher/pom.xml; reinstall it")
    return sources


def launcher_dir(cache_dir: Path, neo4j_version: str) -> Path:
    """Where the built launcher for this Neo4j version and these sources lives."""
    digest = hashlib.sha256()
    for path, content in sorted(launcher_sources().items()):
        digest.update(path.encode() + b"\0" + content + b"\0")
    return cache_dir / "neo4j-launcher" / f"{neo4j_version}-{digest.hexdigest()[:12]}"


def build_launcher(cache_dir: Path, neo4j_version: str, progress: Progress = log.info) -> Path:
    """Build the launcher with Maven unless it is cached; return its directory.

    Holds a file lock while building, so concurrent starts build once.
    """
    target = launcher_dir(cache_dir, neo4j_version)
    if _is_built(target):
        return target
    require_tool("java", "run Neo4j")
    mvn = require_tool("mvn", "build its launcher")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(target.with_suffix(".lock")):
        if _is_built(target):
            return target
        progress(f"building the embedded Neo4j {neo4j_version} launcher with Maven (first run only) ...")
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
        try:
            for rel, content in launcher_sources().items():
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                (work / rel).write_bytes(content)
            result = subprocess.run(
                [mvn, "-B", "-q", f"-Dneo4j.version={neo4j_version}", "package"],
                cwd=work,
                capture_output=True,
                text=True,
                check=False,
            )
            if result.returncode != 0:
                tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-30:])
                raise Unavailable(f"Maven could not build the embedded Neo4j launcher:\n{tail}")
            staged = work / "out"
            staged.mkdir()
            (work / "target" / "launcher.jar").rename(staged / "launcher.jar")
            (work / "target" / "lib").rename(staged / "lib")
            staged.rename(target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        progress(f"built the launcher in {time.monotonic() - started:.0f}s: {target}")
    return target


def _is_built(target: Path) -> bool:
    return (target / "launcher.jar").is_file() and (target / "lib").is_dir()


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedNeo4j:
    """One Neo4j Community process on loopback, owned by this Python process.

    Use it as a context manager; ``uri`` is the Bolt URI once started. Bolt port 0 picks a
    free port. The JVM also exits by itself if this process dies, since it watches the pipe
    it was given as stdin.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        cache_dir: Path,
        bolt_port: int = 0,
        heap_mb: int = 1024,
        pagecache_mb: int = 256,
        tx_memory_mb: int = Neo4jSettings.tx_memory_mb,
        neo4j_version: str = Neo4jSettings.neo4j_version,
        startup_timeout: float = 180.0,
        transaction_timeout: float = Neo4jSettings.transaction_timeout,
        shutdown_timeout: float = Neo4jSettings.shutdown_timeout,
        extra_settings: Mapping[str, str] | None = None,
        progress: Progress = log.info,
    ) -> None:
        self.data_dir = data_dir
        self.cache_dir = cache_dir
        self.bolt_port = bolt_port
        self.heap_mb = heap_mb
        self.pagecache_mb = pagecache_mb
        self.tx_memory_mb = tx_memory_mb
        self.neo4j_version = neo4j_version
        self.startup_timeout = startup_timeout
        self.transaction_timeout = transaction_timeout
        self.shutdown_timeout = shutdown_timeout
        self.extra_settings = dict(extra_settings or {})
        """More Neo4j settings by name (``{"db.tx_log.preallocate": "false"}``), over the launcher's
        own; Neo4j validates them, so an unknown name or a bad value stops the start."""
        self.progress = progress
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path = data_dir / "launcher.log"
        self.uri: str | None = None

    @classmethod
    def from_settings(cls, settings: Neo4jSettings, progress: Progress = log.info) -> EmbeddedNeo4j:
        return cls(
            settings.data_dir,
            cache_dir=settings.cache_dir,
            bolt_port=settings.bolt_port,
            heap_mb=settings.heap_mb,
            pagecache_mb=settings.pagecache_mb,
            tx_memory_mb=settings.tx_memory_mb,
            neo4j_version=settings.neo4j_version,
            startup_timeout=settings.startup_timeout,
            transaction_timeout=settings.transaction_timeout,
            shutdown_timeout=settings.shutdown_timeout,
            progress=progress,
        )

    @property
    def pid(self) -> int | None:
        """The JVM's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> str:
        """Build if needed, start the JVM, and return once a driver can connect."""
        if self.running:
            assert self.uri is not None
            return self.uri
        java = require_tool("java", "run Neo4j")
        major = java_major_version(java)
        if major < MIN_JAVA:
            raise Unavailable(f"Neo4j {self.neo4j_version} needs Java {MIN_JAVA} or newer; `{java}` is Java {major}")
        build = build_launcher(self.cache_dir, self.neo4j_version, self.progress)
        port = self.bolt_port or free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            java,
            f"-Xms{min(self.heap_mb, 512)}m",
            f"-Xmx{self.heap_mb}m",
            "-XX:+UseG1GC",
            "-XX:+ExitOnOutOfMemoryError",
            "-cp",
            f"{build / 'launcher.jar'}{os.pathsep}{build / 'lib' / '*'}",
            LAUNCHER_CLASS,
            "--data-dir",
            str(self.data_dir),
            "--bolt-port",
            str(port),
            "--pagecache-mb",
            str(self.pagecache_mb),
            "--tx-max-mb",
            str(self.tx_memory_mb),
            "--tx-memory-mb",
            str(total_transaction_memory_mb(self.heap_mb)),
            "--transaction-timeout-ms",
            str(round(self.transaction_timeout * 1000)),
            "--shutdown-transaction-end-ms",
            str(round(self.shutdown_timeout * 1000)),
            "--exit-on-stdin-eof",
            *(arg for name, value in self.extra_settings.items() for arg in ("--setting", f"{name}={value}")),
        ]
        self.progress(
            f"starting embedded Neo4j {self.neo4j_version} on bolt://127.0.0.1:{port} "
            f"(heap {self.heap_mb} MB, page cache {self.pagecache_mb} MB, data {self.data_dir})"
        )
        started = time.monotonic()
        with open(self._log_path, "wb") as log_file:
            self._process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.uri = f"bolt://127.0.0.1:{port}"
        try:
            self._wait_until_ready(started)
        except BaseException:
            self.stop()
            raise
        self.progress(f"embedded Neo4j ready on {self.uri} after {time.monotonic() - started:.1f}s")
        return self.uri

    def _wait_until_ready(self, started: float) -> None:
        assert self._process is not None and self.uri is not None
        deadline = started + self.startup_timeout
        while "READY " not in self._log_text():
            if self._process.poll() is not None:
                hint = ""
                if "store_lock" in self._log_text():
                    hint = (
                        f"another process is using the data directory {self.data_dir} "
                        "(is another decisiontrail or Neo4j running on it?); "
                    )
                raise Unavailable(
                    f"embedded Neo4j exited with code {self._process.returncode} while starting: "
                    f"{hint}its output ends:\n{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                raise Unavailable(f"embedded Neo4j did not start within {self.startup_timeout:.0f}s:\n{self._log_tail()}")
            time.sleep(0.2)
        with neo4j.GraphDatabase.driver(self.uri, auth=None) as driver:
            while True:
                try:
                    driver.verify_connectivity()
                    return
                except (DriverError, Neo4jError) as e:
                    if time.monotonic() > deadline:
                        raise Unavailable(f"embedded Neo4j at {self.uri} does not accept connections: {e}") from e
                    time.sleep(0.2)

    def stop(self, timeout: float | None = None) -> None:
        """Shut the database down cleanly (SIGTERM), killing it only if it hangs.

        Running transactions get ``shutdown_timeout`` seconds to end before the server ends them;
        the clean shutdown then has ``timeout`` (by default 20 s more) before the JVM is killed.
        """
        timeout = self.shutdown_timeout + 20.0 if timeout is None else timeout
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                log.warning("embedded Neo4j did not stop within %.0fs; killing it", timeout)
                process.kill()
                process.wait()
        _close(process.stdin)
        # 143 is the JVM's exit after running its shutdown hooks on SIGTERM: a clean stop.
        clean = process.returncode in (0, 143)
        self.progress("embedded Neo4j stopped" + ("" if clean else f" (exit code {process.returncode})"))

    def kill(self) -> None:
        """Crash the database (SIGKILL to the JVM): no shutdown, transactions cut off mid-way. The
        next ``start`` recovers the store from its transaction log. For fault tests."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
        _close(process.stdin)
        self.progress(f"embedded Neo4j killed (exit code {process.returncode})")

    def _log_text(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _log_tail(self, lines: int = 40) -> str:
        tail = "\n".join(self._log_text().splitlines()[-lines:])
        debug_log = self.data_dir / "logs" / "debug.log"
        return f"{tail}\n(launcher log: {self._log_path}; Neo4j's own log: {debug_log})"

    def __enter__(self) -> EmbeddedNeo4j:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def _close(stream: IO[bytes] | None) -> None:
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass


def total_transaction_memory_mb(heap_mb: int) -> int:
    """What all transactions together may hold (``db.memory.transaction.total.max``): 1 GB, or 70%
    of a larger heap, so a server given more heap can run a larger correction in one transaction.

    >>> total_transaction_memory_mb(1024), total_transaction_memory_mb(4096)
    (1024, 2867)
    """
    return max(1024, heap_mb * 7 // 10)
