"""An OpenID Connect issuer's JWTs as bearer tokens: verified against its JWKS, read into a principal."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jwt
from starlette.concurrency import run_in_threadpool

from decisiontrail.access import ALLOWED, LOCAL, Principal, Role
from decisiontrail.settings import OidcSettings

log = logging.getLogger(__name__)

FETCH_TIMEOUT = 5.0
"""Seconds a fetch of the issuer's discovery document or JWKS may take (requests wait on it)."""

RESERVED_PREFIXES = ("cli:", "process:")
"""The names of the command line's and the service's own principals (``access.operator``, ``access.process``):
what they do is recorded under them, so no token's subject may take one."""


@dataclass(frozen=True)
class Verified:
    """What a valid JWT says: who is calling, and until when (seconds since the epoch, leeway included)."""

    principal: Principal
    expires: float


class Issuer:
    """The issuer's keys, fetched when first needed and kept ``jwks_max_age`` seconds.

    A token signed with a key id the kept keys do not hold fetches them again, so a rotated key
    is taken without a restart; but never sooner than ``jwks_refresh`` seconds after the last
    fetch, so a flood of made-up key ids costs the issuer one request. Fetches run in a worker
    thread, one at a time; a failed one keeps the keys there were.
    """

    def __init__(self, settings: OidcSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched: float | None = None  # when the keys were last fetched
        self._tried: float | None = None  # when a fetch was last begun
        self._jwks_url = settings.jwks_url
        self._fetching = asyncio.Lock()

    async def verify(self, token: str) -> Verified | None:
        """The caller a JWT names, if the issuer signed it for this service and it is in date; else None."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            return None
        kid = header.get("kid")
        if header.get("alg") not in self.settings.algorithms or not isinstance(kid, str | None):
            return None
        key = await self._key(kid)
        if key is None:
            log.info("refused a JWT: the issuer's keys hold no key %r", kid)
            return None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[key.algorithm_name],
                audience=list(self.settings.audience),
                issuer=self.settings.issuer,
                leeway=self.settings.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidTokenError as e:
            log.info("refused a JWT: %s", e)
            return None
        principal = self.principal(claims)
        if principal is None:
            return None
        return Verified(principal, float(claims["exp"]) + self.settings.leeway)

    def principal(self, claims: Mapping[str, Any]) -> Principal | None:
        """The caller named by verified claims: its name, its one role, and the project it is limited to, if any."""
        name = claim(claims, self.settings.name_claim)
        if not isinstance(name, str) or not name.strip():
            log.info("refused a JWT: no name in its %r claim", self.settings.name_claim)
            return None
        if name == LOCAL.name or name.startswith(RESERVED_PREFIXES):
            log.info("refused a JWT: its name %r is one of the service's own callers", name)
            return None
        role = role_of(values(claim(claims, self.settings.role_claim)))
        if role is None:
            log.info("refused %s's JWT: its %r claim names no one role of %s", name, self.settings.role_claim, list(Role))
            return None
        project = None
        if self.settings.project_claim is not None:
            projects = values(claim(claims, self.settings.project_claim))
            if len(projects) > 1:  # a principal is limited to one project or none
                log.info("refused %s's JWT: its %r claim names %d projects", name, self.settings.project_claim, len(projects))
                return None
            project = projects[0] if projects else None
        return Principal(name, role, project)

    async def _key(self, kid: str | None) -> jwt.PyJWK | None:
        if self._fresh() and kid in self._keys:
            return self._keys[kid]
        async with self._fetching:  # whoever waited here finds what the fetch before it brought
            if not (self._fresh() and kid in self._keys) and self._may_fetch():
                self._tried = self.clock()
                keys = await run_in_threadpool(self._fetch)
                if keys is not None:
                    self._keys, self._fetched = keys, self.clock()
        return self._keys.get(kid)

    def _fresh(self) -> bool:
        return self._fetched is not None and self.clock() - self._fetched < self.settings.jwks_max_age

    def _may_fetch(self) -> bool:
        return self._tried is None or self.clock() - self._tried >= self.settings.jwks_refresh

    def _fetch(self) -> dict[str | None, jwt.PyJWK] | None:
        """The issuer's signing keys by key id (a lone key also under None, for tokens that name none)."""
        try:
            url = self._jwks_url or self._discover()
            found = jwt.PyJWKClient(url, cache_jwk_set=False, timeout=FETCH_TIMEOUT).get_jwk_set()
        except (jwt.PyJWKClientError, jwt.PyJWKSetError, OSError, http.client.HTTPException, ValueError) as e:
            log.warning("cannot fetch the OIDC issuer's keys (keeping the %d held): %s", len(self._keys), e)
            return None
        usable = [k for k in found.keys if k.public_key_use in ("sig", None) and k.algorithm_name in self.settings.algorithms]
        keys: dict[str | None, jwt.PyJWK] = {k.key_id: k for k in usable if k.key_id}
        if len(usable) == 1:
            keys[None] = usable[0]
        log.info("fetched the OIDC issuer's keys: %s", sorted(str(kid) for kid in keys if kid is not None))
        return keys

    def _discover(self) -> str:
        """The JWKS URL the issuer's discovery document names (OpenID Connect Discovery 1.0)."""
        url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as response:
            document = json.load(response)
        if not isinstance(document, dict) or document.get("issuer") != self.settings.issuer:
            raise ValueError(f"{url} is not the discovery document of issuer {self.settings.issuer}")
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ValueError(f"{url} names no jwks_uri")
        self._jwks_url = jwks_uri
        return jwks_uri


def claim(claims: Mapping[str, Any], name: str) -> Any:
    """A claim by its name, or by a dotted path into nested claims when no claim has that name.

    >>> claim({"https://example.com/roles": ["admin"]}, "https://example.com/roles")
    ['admin']
    >>> claim({"realm_access": {"roles": ["reviewer"]}}, "realm_access.roles")
    ['reviewer']
    >>> claim({"sub": "alice"}, "groups") is None
    True
    """
    if name in claims:
        return claims[name]
    found: Any = claims
    for part in name.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def values(found: Any) -> list[str]:
    """A claim's strings: a string is one, a list its strings, anything else none."""
    if isinstance(found, str):
        return [found] if found.strip() else []
    if isinstance(found, list):
        return [v for v in found if isinstance(v, str) and v.strip()]
    return []


def role_of(names: list[str]) -> Role | None:
    """The role among ``names`` that may do all the others may (their names in any case); None if none does.

    >>> role_of(["offline_access", "Reviewer", "analyst"])
    <Role.REVIEWER: 'reviewer'>
    >>> role_of(["actor", "reviewer"]) is None  # neither may do all the other may
    True
    """
    roles = {Role(n.strip().lower()) for n in names if n.strip().lower() in Role._value2member_map_}
    covering = [r for r in roles if all(ALLOWED[other] <= ALLOWED[r] for other in roles)]
    return covering[0] if covering else None
