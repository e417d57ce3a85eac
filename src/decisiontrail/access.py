"""Who may do what: bearer tokens, stored hashed, each with a role."""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from decisiontrail.exceptions import ValidationFailed
from decisiontrail.settings import Environment


class Role(StrEnum):
    ACTOR = "actor"  # records decisions and plans, reads
    REVIEWER = "reviewer"  # resolves reviews and corrects decisions, reads
    ANALYST = "analyst"  # reads
    ADMIN = "admin"  # everything


class Action(StrEnum):
    READ = "read"
    RECORD = "record"
    REVIEW = "review"
    CORRECT = "correct"
    CONFIGURE = "configure"  # the global and project invariant sets; the store's own jobs (dump, restore, prune)


ALLOWED: dict[Role, frozenset[Action]] = {
    Role.ACTOR: frozenset({Action.READ, Action.RECORD}),
    Role.REVIEWER: frozenset({Action.READ, Action.REVIEW, Action.CORRECT}),
    Role.ANALYST: frozenset({Action.READ}),
    Role.ADMIN: frozenset(Action),
}


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role
    project: str | None = None  # when set, every plan outside this project is as if it did not exist

    def may(self, action: Action) -> bool:
        return action in ALLOWED[self.role]

    @property
    def owner_scope(self) -> str | None:
        """The owner whose plans alone this principal sees: its own name for an actor, else None (any owner)."""
        return self.name if self.role is Role.ACTOR else None

    @property
    def limited(self) -> bool:
        """Whether some plans are hidden from this principal (its role or its project)."""
        return self.owner_scope is not None or self.project is not None

    def sees(self, owner: str | None, project: str | None = None) -> bool:
        """Actors see the plans they instantiated; every other role sees every plan; and a
        principal with a project sees only that project's plans."""
        return (self.owner_scope is None or owner == self.owner_scope) and (self.project is None or project == self.project)


LOCAL = Principal(name="local", role=Role.ADMIN)
"""Who a request is when no tokens are configured (the server then binds to loopback only)."""


def operator(login: str | None = None) -> Principal:
    """The command line's caller: ``cli:<login>`` (the operating system's login name by default),
    with the database's own rights, since it holds the database's credentials."""
    if login is None:
        try:
            login = getpass.getuser()
        except (KeyError, OSError):  # no name for this uid (a bare container)
            login = f"uid{os.getuid()}"
    return Principal(name=f"cli:{login}", role=Role.ADMIN)


def process(name: str) -> Principal:
    """The service acting on its own, ``process:<name>``: the plan runtime and its workers, the
    Invariant Reconciliation Actor, the demonstration, a job. It has the database's own rights, as
    the command line has, and a name, so what it does is recorded as its doing; no use-case is
    ever called for nobody (``None``), and each judges the principal it is given."""
    return Principal(name=f"process:{name}", role=Role.ADMIN)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenEntry:
    name: str
    role: Role
    sha256: str
    project: str | None = None


class TokenRegistry:
    """The configured tokens, by hash; a presented token is compared in constant time."""

    def __init__(self, entries: Iterable[TokenEntry] = ()) -> None:
        self._entries = tuple(entries)

    @property
    def enabled(self) -> bool:
        return bool(self._entries)

    def authenticate(self, token: str) -> Principal | None:
        presented = token_hash(token)
        found = None
        for entry in self._entries:  # no early exit: every check costs the same
            if hmac.compare_digest(presented, entry.sha256):
                found = Principal(entry.name, entry.role, entry.project)
        return found

    @classmethod
    def load(cls, path: Path) -> TokenRegistry:
        """Read a token file: a JSON list of ``{"name", "role", "sha256"}`` and optionally
        ``"project"`` (no plain tokens)."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ValidationFailed(
                f"DECISIONTRAIL_TOKENS_FILE: cannot read {path}: {e}", field="DECISIONTRAIL_TOKENS_FILE"
            ) from e
        return cls.parse(text, "DECISIONTRAIL_TOKENS_FILE")

    @classmethod
    def parse(cls, text: str, source: str) -> TokenRegistry:
        """Tokens from JSON: a list of ``{"name", "role", "sha256"}``, each with an optional
        ``"project"`` it is limited to (no plain tokens)."""
        try:
            raw = json.loads(text)
            return cls(TokenEntry(e["name"], Role(e["role"]), e["sha256"], _project(e.get("project"))) for e in raw)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValidationFailed(f"{source}: cannot read tokens: {e}", field=source) from e

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TokenRegistry:
        """``DECISIONTRAIL_TOKENS_FILE`` names a token file, or ``DECISIONTRAIL_TOKENS`` holds the
        same JSON; with neither there are no tokens."""
        read = Environment.read(env)
        if read.tokens:
            return cls.parse(read.tokens, "DECISIONTRAIL_TOKENS")
        return cls.load(read.tokens_file) if read.tokens_file else cls()


def _project(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"project: a non-blank string or absent, not {value!r}")
    return value


def issue_token(path: Path, name: str, role: Role, project: str | None = None) -> str:
    """Create a token for ``name`` with ``role`` (limited to ``project`` when given), add its
    hash to the file, return the token (shown once)."""
    if project is not None and not project.strip():
        raise ValidationFailed("project: must not be blank", field="project")
    token = "dt_" + secrets.token_urlsafe(32)
    entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    entry = {"name": name, "role": role.value, "sha256": token_hash(token)}
    if project is not None:
        entry["project"] = project
    entries.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    os.chmod(path, 0o600)
    return token
