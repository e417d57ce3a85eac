"""Static tokens read from their file, and read again when it changes or the process is sent SIGHUP."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import Any

from decisiontrail.access import Principal, TokenRegistry
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.settings import AccessSettings, Environment

log = logging.getLogger(__name__)

WATCHER_THREAD = "decisiontrail-token-file"


class TokenFile(TokenRegistry):
    """The tokens of a token file as it now stands.

    While ``watching()`` (the app's lifespan watches it), the file is read again every
    ``reload_every`` seconds (0: never by itself) and at once on SIGHUP; when its tokens changed, each listener is told (from the
    watching thread), so what a removed token opened is closed. A file that cannot be read or
    parsed leaves the tokens as they were, and says why in the log, once. Once the service had
    tokens it never goes back to trusting everyone: a file emptied of tokens accepts none.
    """

    def __init__(self, path: Path, *, reload_every: float = 2.0) -> None:
        super().__init__()
        self.path = path
        self.reload_every = reload_every
        self._current = TokenRegistry.load(path)
        self._read = path.read_bytes()
        self._enabled = self._current.enabled
        self._listeners: list[Callable[[], None]] = []
        self._wake = threading.Event()
        self._watch_lock = threading.Lock()
        self._watchers = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def enabled(self) -> bool:
        return self._enabled

    def authenticate(self, token: str) -> Principal | None:
        return self._current.authenticate(token)

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` each time the file's tokens change."""
        self._listeners.append(listener)

    def reload(self) -> bool:
        """Read the file again; True when it changed and its tokens are now the file's."""
        try:
            read = self.path.read_bytes()
        except OSError as e:
            if self._read != b"":
                log.error("cannot read the token file again, keeping its tokens as they were: %s", e)
                self._read = b""
            return False
        if read == self._read:
            return False
        self._read = read
        try:
            current = TokenRegistry.parse(read.decode("utf-8"), f"the token file {self.path}")
        except (ValidationFailed, UnicodeDecodeError) as e:
            log.error("the token file changed but cannot be read, keeping its tokens as they were: %s", e)
            return False
        self._current = current
        self._enabled = self._enabled or current.enabled
        log.info("read the token file %s again", self.path)
        for listener in self._listeners:
            listener()
        return True

    def reload_soon(self) -> None:
        """Have the watching thread read the file again now (what SIGHUP does)."""
        self._wake.set()

    @contextmanager
    def watching(self) -> Iterator[None]:
        """Read the file again as it changes (every ``reload_every`` seconds) and on SIGHUP, until the block ends.

        Blocks may nest (the app's lifespan watches the file it was given, and so may whoever made
        it): one thread watches while any is open. SIGHUP is caught once some block was entered on
        the main thread (Python's signals go there, and only there can a handler be set); entered
        elsewhere only, the file is read again only as it changes.
        """
        with self._watch_lock:
            self._watchers += 1
            if self._watchers == 1:
                stopping = threading.Event()
                self._stop = stopping
                self._thread = threading.Thread(target=self._watch, args=(stopping,), name=WATCHER_THREAD, daemon=True)
                self._thread.start()
        if not HANGUPS.add(self):
            if self.reload_every:
                log.info("SIGHUP is not caught off the main thread: the token file %s is read again as it changes", self.path)
            else:
                log.warning(
                    "SIGHUP is not caught off the main thread, and DECISIONTRAIL_TOKENS_RELOAD is 0: the token file %s is not read again by itself",
                    self.path,
                )
        try:
            yield
        finally:
            HANGUPS.discard(self)
            with self._watch_lock:  # held while the thread stops, so a new watch never shares the wake-up with it
                self._watchers -= 1
                if self._watchers == 0 and self._thread is not None:
                    self._stop.set()
                    self._wake.set()
                    self._thread.join()
                    self._thread = None

    def _watch(self, stopping: threading.Event) -> None:
        while True:
            self._wake.wait(self.reload_every or None)
            self._wake.clear()
            if stopping.is_set():
                return
            try:
                self.reload()
            except Exception:  # a listener's failure must not end the watch
                log.exception("reading the token file again failed")


class _Hangups:
    """The process's one SIGHUP handler, for every token file being watched: each is read again, and
    a handler that was there before ours still runs. Set when a watch begins on the main thread, and
    the one before given back when the last watch ends there (off it, a handler can be neither set
    nor given back: one left behind reads no file and still runs the one before)."""

    def __init__(self) -> None:
        self._files: list[TokenFile] = []
        self._lock = threading.Lock()
        self._previous: Callable[[int, FrameType | None], Any] | int | signal.Handlers | None = None
        self._installed = False

    def add(self, file: TokenFile) -> bool:
        """Read ``file`` again on SIGHUP; False when no handler could be set, so SIGHUP does not reach it."""
        with self._lock:
            self._files.append(file)
            if not self._installed and threading.current_thread() is threading.main_thread():
                self._previous = signal.signal(signal.SIGHUP, self._caught)
                self._installed = True
            return self._installed

    def discard(self, file: TokenFile) -> None:
        with self._lock:
            with suppress(ValueError):
                self._files.remove(file)
            if self._installed and not self._files and threading.current_thread() is threading.main_thread():
                if signal.getsignal(signal.SIGHUP) == self._caught:  # not one set after ours
                    signal.signal(signal.SIGHUP, self._previous if self._previous is not None else signal.SIG_DFL)
                self._installed = False
                self._previous = None

    def _caught(self, signum: int, frame: FrameType | None) -> None:
        # No lock: the handler runs on the main thread, which may hold it (between bytecodes of add).
        for file in tuple(self._files):
            file.reload_soon()
        if callable(self._previous):
            self._previous(signum, frame)


HANGUPS = _Hangups()


def tokens_from_env(env: Mapping[str, str] | None = None) -> TokenRegistry:
    """The static tokens the environment configures: ``DECISIONTRAIL_TOKENS``' JSON as it is, or
    ``DECISIONTRAIL_TOKENS_FILE``'s file, read again as it changes (``DECISIONTRAIL_TOKENS_RELOAD``);
    with neither, none."""
    read = Environment.read(env)
    if read.tokens or not read.tokens_file:
        return TokenRegistry.from_env(env)
    return TokenFile(read.tokens_file, reload_every=AccessSettings.from_env(env).tokens_reload)
