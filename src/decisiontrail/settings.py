"""Where decisiontrail finds Neo4j: an existing server named by NEO4J_URI, or its own embedded one."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datetime import timedelta

from pydantic import AliasChoices, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from decisiontrail.domain.retention import TRACE_WAIT, parse_age
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
    tx_memory_mb: int = 256
    """The embedded server's ``db.memory.transaction.max``: the most heap one transaction may hold (0: no
    limit of its own). A transaction past it is rolled back and answered ``TOO_LARGE``, instead of
    filling the heap that every other transaction shares."""
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
        """Read the settings from the environment, or from ``env`` alone when given (the variables
        are listed in docs/embedded-neo4j.md); a bad value is refused naming its variable."""
        read = Environment.read(env)
        defaults = cls()
        home = {k: v for k, v in (os.environ if env is None else env).items() if k in ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")}
        data_root = read.data_dir or _xdg(home, "XDG_DATA_HOME", ".local/share")
        return cls(
            uri=read.neo4j_uri,
            user=read.neo4j_user,
            password=read.neo4j_password,
            database=read.neo4j_database or defaults.database,
            data_dir=data_root / "neo4j",
            checkpoints=data_root / "checkpoints.sqlite",
            cache_dir=read.cache_dir or _xdg(home, "XDG_CACHE_HOME", ".cache"),
            bolt_port=read.bolt_port,
            heap_mb=read.heap_mb,
            pagecache_mb=read.pagecache_mb,
            tx_memory_mb=read.tx_memory_mb,
            query_timeout=read.query_timeout or None,
            transaction_timeout=read.transaction_timeout or defaults.transaction_timeout,
        )


@dataclass(frozen=True)
class RuntimeSettings:
    """How the plan runtime runs (docs/actors.md): its actors' chat model and, in a serving process,
    how many worker threads drive runs."""

    chat_model: str = "scripted"
    workers: int = 2
    lease: float = 30.0
    """Seconds a claim holds without a heartbeat (heartbeats come three times a lease)."""
    scripted_pace: float = 0.0
    time_limit: float = 900.0
    """Seconds one turn of a run (from its claim until it waits, finishes or fails) may take."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeSettings:
        read = Environment.read(env)
        return cls(
            chat_model=read.chat_model.strip(),
            workers=read.runtime_workers,
            lease=read.run_lease,
            scripted_pace=read.scripted_pace,
            time_limit=read.run_time_limit,
        )


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServeSettings:
    """How ``serve`` uses the machine (docs/deployment.md#the-cores-of-one-machine): how many worker
    processes serve its port, each with its own connections to Neo4j."""

    workers: int = field(default_factory=available_cores)
    """One a core by default; 1 serves from the ``serve`` process itself."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ServeSettings:
        """``DECISIONTRAIL_SERVE_WORKERS``, or one worker a core."""
        workers = Environment.read(env).serve_workers
        return cls() if workers is None else cls(workers=workers)


@dataclass(frozen=True)
class RetentionSettings:
    """What ``prune`` keeps unless told otherwise (docs/checks.md#retention)."""

    trace_wait: timedelta = TRACE_WAIT
    """How long spans wait for their trace's root span: a trace that received nothing for this long
    expires at the next prune (``prune --spans-older-than`` for one prune)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RetentionSettings:
        """``DECISIONTRAIL_TRACE_WAIT``, an age as ``prune --older-than`` takes one (``7d``, ``12h``);
        a value that is not one is refused naming the variable."""
        text = Environment.read(env).trace_wait
        return cls(trace_wait=TRACE_WAIT if text is None else parse_age(text, name="DECISIONTRAIL_TRACE_WAIT"))


ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""The JWT signatures an issuer's public keys can check; a shared secret (HS256) or none never is."""


@dataclass(frozen=True)
class OidcSettings:
    """An OpenID Connect issuer whose JWTs are bearer tokens (docs/security.md): their signature
    checked against the issuer's JWKS, their ``iss`` and ``aud`` checked, the caller's name, role and
    project read from the claims named here."""

    issuer: str
    audience: tuple[str, ...]
    jwks_url: str | None = None
    """None: the ``jwks_uri`` of the issuer's ``/.well-known/openid-configuration``."""
    name_claim: str = "sub"
    role_claim: str = "roles"
    project_claim: str | None = None
    """None: a JWT is limited to no project."""
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway: float = 30.0
    """Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``."""
    jwks_refresh: float = 10.0
    """The fewest seconds between two fetches of the JWKS: a flood of unknown key ids fetches it once."""
    jwks_max_age: float = 300.0
    """Seconds fetched keys are trusted before they are fetched again (a retired key goes with them)."""


@dataclass(frozen=True)
class AccessSettings:
    """Who may call the service beside its static tokens, how soon a changed token file counts, and
    how often each caller may call (docs/security.md)."""

    oidc: OidcSettings | None = None
    tokens_reload: float = 2.0
    """Seconds between looks at the token file for a change (0: only on SIGHUP)."""
    rate_limit: float = 0.0
    """Requests a second each caller may make, on average (0: no limit)."""
    rate_burst: int = 100
    """Requests a caller may make at once before its rate applies."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AccessSettings:
        read = Environment.read(env)
        oidc = None
        if read.oidc_issuer is not None:
            if not read.oidc_audience:
                raise ValidationFailed(
                    "DECISIONTRAIL_OIDC_AUDIENCE: required with DECISIONTRAIL_OIDC_ISSUER (the audience the service's tokens name)",
                    field="DECISIONTRAIL_OIDC_AUDIENCE",
                )
            algorithms = tuple(a.strip() for a in read.oidc_algorithms.split(",") if a.strip())
            refused = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
            if refused or not algorithms:
                raise ValidationFailed(
                    f"DECISIONTRAIL_OIDC_ALGORITHMS: {', '.join(refused) or 'none given'}; allowed are {', '.join(ASYMMETRIC_ALGORITHMS)}",
                    field="DECISIONTRAIL_OIDC_ALGORITHMS",
                )
            for name, url in (
                ("DECISIONTRAIL_OIDC_ISSUER", read.oidc_issuer),
                ("DECISIONTRAIL_OIDC_JWKS_URL", read.oidc_jwks_url),
            ):
                if url is not None and not url.startswith(("https://", "http://")):
                    raise ValidationFailed(f"{name}: an http(s) URL, not {url!r}", field=name)
            oidc = OidcSettings(
                issuer=read.oidc_issuer,
                audience=tuple(a.strip() for a in read.oidc_audience.split(",") if a.strip()),
                jwks_url=read.oidc_jwks_url,
                name_claim=read.oidc_name_claim,
                role_claim=read.oidc_role_claim,
                project_claim=read.oidc_project_claim,
                algorithms=algorithms,
                leeway=read.oidc_leeway,
                jwks_refresh=read.oidc_jwks_refresh,
                jwks_max_age=read.oidc_jwks_max_age,
            )
        return cls(oidc=oidc, tokens_reload=read.tokens_reload, rate_limit=read.rate_limit, rate_burst=read.rate_burst)


class Environment(BaseSettings):
    """The environment variables decisiontrail reads, validated (pydantic-settings); an empty one counts as unset."""

    model_config = SettingsConfigDict(case_sensitive=True, env_ignore_empty=True, extra="ignore")

    neo4j_uri: str | None = Field(None, validation_alias="NEO4J_URI")
    neo4j_user: str | None = Field(None, validation_alias=AliasChoices("NEO4J_USER", "NEO4J_USERNAME"))
    neo4j_password: str | None = Field(None, validation_alias="NEO4J_PASSWORD")
    neo4j_database: str | None = Field(None, validation_alias="NEO4J_DATABASE")
    data_dir: Path | None = Field(None, validation_alias="DECISIONTRAIL_DATA_DIR")
    cache_dir: Path | None = Field(None, validation_alias="DECISIONTRAIL_CACHE_DIR")
    bolt_port: int = Field(7687, ge=0, le=65535, validation_alias="DECISIONTRAIL_NEO4J_PORT")
    heap_mb: int = Field(1024, ge=256, le=65536, validation_alias="DECISIONTRAIL_NEO4J_HEAP_MB")
    pagecache_mb: int = Field(256, ge=16, le=65536, validation_alias="DECISIONTRAIL_NEO4J_PAGECACHE_MB")
    tx_memory_mb: int = Field(256, ge=0, le=65536, validation_alias="DECISIONTRAIL_NEO4J_TX_MEMORY_MB")
    """0 is no limit per transaction."""
    query_timeout: float = Field(30.0, ge=0, le=86_400, validation_alias="DECISIONTRAIL_QUERY_TIMEOUT")
    """Seconds; 0 is no limit."""
    transaction_timeout: float = Field(600.0, ge=0, le=86_400, validation_alias="DECISIONTRAIL_NEO4J_TRANSACTION_TIMEOUT")
    chat_model: str = Field("scripted", min_length=1, validation_alias="DECISIONTRAIL_CHAT_MODEL")
    """The runtime actors' model: ``scripted`` or an ``init_chat_model`` name (``provider:model``)."""
    runtime_workers: int = Field(2, ge=0, le=64, validation_alias="DECISIONTRAIL_RUNTIME_WORKERS")
    run_lease: float = Field(30.0, ge=1, le=3600, validation_alias="DECISIONTRAIL_RUN_LEASE")
    """Seconds a worker's claim on a run holds without a heartbeat: how soon a dead worker's runs are taken over."""
    run_time_limit: float = Field(900.0, ge=0.1, le=86_400, validation_alias="DECISIONTRAIL_RUN_TIME_LIMIT")
    """Seconds one turn of a run may take (a replay included): past it the run fails, and its replay's attempt."""
    scripted_pace: float = Field(0.0, ge=0, le=60, validation_alias="DECISIONTRAIL_SCRIPTED_PACE")
    """Seconds the scripted model takes per turn (0: at once), to watch a run, or to stop a service in the middle of one."""
    """Threads of a serving process that drive plan runs; 0 runs none there (another process does)."""
    serve_workers: int | None = Field(None, ge=1, le=1024, validation_alias="DECISIONTRAIL_SERVE_WORKERS")
    """Processes ``serve`` serves its port with; unset: one a core."""
    tokens: str | None = Field(None, validation_alias="DECISIONTRAIL_TOKENS")
    tokens_file: Path | None = Field(None, validation_alias="DECISIONTRAIL_TOKENS_FILE")
    tokens_reload: float = Field(2.0, ge=0, le=3600, validation_alias="DECISIONTRAIL_TOKENS_RELOAD")
    """Seconds between looks at the token file for a change; 0: read again only on SIGHUP."""
    oidc_issuer: str | None = Field(None, validation_alias="DECISIONTRAIL_OIDC_ISSUER")
    oidc_audience: str | None = Field(None, validation_alias="DECISIONTRAIL_OIDC_AUDIENCE")
    """One audience, or several separated by commas: a token naming any of them is for this service."""
    oidc_jwks_url: str | None = Field(None, validation_alias="DECISIONTRAIL_OIDC_JWKS_URL")
    oidc_name_claim: str = Field("sub", min_length=1, validation_alias="DECISIONTRAIL_OIDC_NAME_CLAIM")
    oidc_role_claim: str = Field("roles", min_length=1, validation_alias="DECISIONTRAIL_OIDC_ROLE_CLAIM")
    oidc_project_claim: str | None = Field(None, validation_alias="DECISIONTRAIL_OIDC_PROJECT_CLAIM")
    oidc_algorithms: str = Field(",".join(ASYMMETRIC_ALGORITHMS), validation_alias="DECISIONTRAIL_OIDC_ALGORITHMS")
    oidc_leeway: float = Field(30.0, ge=0, le=300, validation_alias="DECISIONTRAIL_OIDC_LEEWAY")
    oidc_jwks_refresh: float = Field(10.0, ge=0, le=86_400, validation_alias="DECISIONTRAIL_OIDC_JWKS_REFRESH")
    oidc_jwks_max_age: float = Field(300.0, ge=1, le=86_400, validation_alias="DECISIONTRAIL_OIDC_JWKS_MAX_AGE")
    rate_limit: float = Field(0.0, ge=0, le=100_000, validation_alias="DECISIONTRAIL_RATE_LIMIT")
    """Requests a second per caller; 0 is no limit."""
    rate_burst: int = Field(100, ge=1, le=100_000, validation_alias="DECISIONTRAIL_RATE_BURST")
    trace_wait: str | None = Field(None, validation_alias="DECISIONTRAIL_TRACE_WAIT")
    """How long spans wait for their trace's root before a prune expires them: an age, ``7d``, ``12h``
    (read by ``RetentionSettings``, which names the variable when it is not one)."""

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None) -> Environment:
        """The process's environment, or ``env`` alone when given."""
        try:
            if env is None:
                return cls()
            return cls.model_validate({k: v for k, v in env.items() if v})
        except ValidationError as e:
            raise _refusal(e) from None


def _refusal(error: ValidationError) -> ValidationFailed:
    """The first problem, in the words of the variable it is about."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else "environment"
    raw: Any = problem.get("input")
    context = problem.get("ctx") or {}
    field_name = next((f for f, info in Environment.model_fields.items() if name in _aliases(info.validation_alias)), "")
    info = Environment.model_fields.get(field_name)
    bounds = {type(m).__name__: m for m in (info.metadata if info else [])}
    low = getattr(bounds.get("Ge"), "ge", None)
    high = getattr(bounds.get("Le"), "le", None)
    unit = _UNITS.get(name) or ("a whole number" if info is not None and info.annotation is int else "a number of seconds")
    if problem["type"] in ("int_parsing", "float_parsing", "int_from_float"):
        message = f"{name} must be {unit}, got {raw!r}"
    elif low is not None and high is not None and problem["type"] in ("greater_than_equal", "less_than_equal"):
        zero = f" ({_ZERO.get(name, 'no limit')})" if unit != "a whole number" and low == 0 and _ZERO.get(name) != "" else ""
        seconds = " seconds" if zero and unit == "a number of seconds" else ""
        message = f"{name} must be between {low:g}{zero} and {high:g}{seconds}, got {raw}"
    else:
        message = f"{name}: {problem['msg']}" + (f" ({context})" if context else "")
    return ValidationFailed(message, field=name)


_UNITS = {"DECISIONTRAIL_RATE_LIMIT": "a number of requests a second", "DECISIONTRAIL_SERVE_WORKERS": "a whole number"}
"""The variables whose number is not a whole number or seconds."""

_ZERO = {
    "DECISIONTRAIL_TOKENS_RELOAD": "on SIGHUP only",
    "DECISIONTRAIL_OIDC_LEEWAY": "",
    "DECISIONTRAIL_OIDC_JWKS_REFRESH": "no bound",
}
"""What 0 means for the variables where it is not "no limit" ("": nothing to say)."""


def _aliases(alias: object) -> list[str]:
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [str(alias)]
