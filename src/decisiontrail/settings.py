"""Where decisiontrail finds Neo4j: an existing server named by NEO4J_URI, or its own embedded one."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from decisiontrail.exceptions import ValidationFailed

NEO4J_VERSION = "5.26.30"
"""The Neo4j Community release the embedded launcher is built against (5.26 LTS, Java 17)."""


def _xdg(env: Mapping[str, str], variable: str, fallback: str) -> Path:
    base = env.get(variable) or str(Path(env.get("HOME") or Path.home()) / fallback)
    return Path(base) / "decisiontrail"


@dataclass(frozen=True)
class Neo4jSettings:
    """How to reach Neo4j.

    With ``uri`` unset, decisiontrail builds and starts an embedded Neo4j Community on
    loopback, keeping its store in ``data_dir``. With ``uri`` set (``bolt://``, ``neo4j://``
    for a cluster, or their ``+s`` variants), it uses that server and starts nothing.
    """

    uri: str | None = None
    user: str | None = None
    password: str | None = None
    database: str = "neo4j"
    data_dir: Path = field(default_factory=lambda: _xdg(os.environ, "XDG_DATA_HOME", ".local/share") / "neo4j")
    checkpoints: Path = field(default_factory=lambda: _xdg(os.environ, "XDG_DATA_HOME", ".local/share") / "checkpoints.sqlite")
    cache_dir: Path = field(default_factory=lambda: _xdg(os.environ, "XDG_CACHE_HOME", ".cache"))
    bolt_port: int = 7687
    heap_mb: int = 1024
    pagecache_mb: int = 256
    startup_timeout: float = 180.0
    neo4j_version: str = NEO4J_VERSION
    query_timeout: float | None = 30.0
    """Seconds one transaction of the service may run before Neo4j stops it (None: the server's default)."""
    transaction_timeout: float = 600.0
    """The embedded server's own limit for any transaction (``db.transaction.timeout``): the backstop for
    clients that set none. Offline work (loads, exports, prunes) runs in statements well under it."""
    shutdown_timeout: float = 5.0
    """Seconds the embedded server waits for running transactions when asked to stop, before ending them."""

    @property
    def embedded(self) -> bool:
        return self.uri is None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Neo4jSettings:
        """Read the settings from the environment (variables are listed in docs/embedded-neo4j.md)."""
        env = os.environ if env is None else env
        defaults = cls()
        data_root = (
            Path(env["DECISIONTRAIL_DATA_DIR"])
            if env.get("DECISIONTRAIL_DATA_DIR")
            else _xdg(env, "XDG_DATA_HOME", ".local/share")
        )
        return cls(
            uri=env.get("NEO4J_URI") or None,
            user=env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or None,
            password=env.get("NEO4J_PASSWORD") or None,
            database=env.get("NEO4J_DATABASE") or defaults.database,
            data_dir=data_root / "neo4j",
            checkpoints=data_root / "checkpoints.sqlite",
            cache_dir=Path(env["DECISIONTRAIL_CACHE_DIR"])
            if env.get("DECISIONTRAIL_CACHE_DIR")
            else _xdg(env, "XDG_CACHE_HOME", ".cache"),
            bolt_port=_int(env, "DECISIONTRAIL_NEO4J_PORT", defaults.bolt_port, low=0, high=65535),
            heap_mb=_int(env, "DECISIONTRAIL_NEO4J_HEAP_MB", defaults.heap_mb, low=256, high=65536),
            pagecache_mb=_int(env, "DECISIONTRAIL_NEO4J_PAGECACHE_MB", defaults.pagecache_mb, low=16, high=65536),
            query_timeout=_seconds(env, "DECISIONTRAIL_QUERY_TIMEOUT", defaults.query_timeout),
            transaction_timeout=_seconds(env, "DECISIONTRAIL_NEO4J_TRANSACTION_TIMEOUT", defaults.transaction_timeout)
            or defaults.transaction_timeout,
        )


def _seconds(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    """A duration in seconds; 0 means no limit (None)."""
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a number of seconds, got {raw!r}", field=name) from None
    if not 0 <= value <= 86_400:
        raise ValidationFailed(f"{name} must be between 0 (no limit) and 86400 seconds, got {value:g}", field=name)
    return value or None


def _int(env: Mapping[str, str], name: str, default: int, *, low: int, high: int) -> int:
    raw = env.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a whole number, got {raw!r}", field=name) from None
    if not low <= value <= high:
        raise ValidationFailed(f"{name} must be between {low} and {high}, got {value}", field=name)
    return value
