"""OIDC/JWT bearer tokens over real HTTP and WebSocket: an issuer served here publishes a JWKS of keys made
here, its tokens are signed with PyJWT, and the service checks them against it (web/oidc.py)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.exceptions import ValidationFailed
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from decisiontrail.settings import AccessSettings
from serving import served
from subscribing import closed, code, first_answer, graphql, new_plan, refusal_code, still_open, subscribed, waker

AUDIENCE = "decisiontrail"


class Key:
    """A signing key of the issuer's: its private half signs, its public half is what the JWKS publishes."""

    def __init__(self, kid: str, algorithm: str) -> None:
        self.kid = kid
        self.algorithm = algorithm
        self.private: Any = (
            rsa.generate_private_key(public_exponent=65537, key_size=2048)
            if algorithm.startswith("RS")
            else ec.generate_private_key(ec.SECP256R1())
        )

    def jwk(self) -> dict[str, Any]:
        kind = jwt.algorithms.RSAAlgorithm if self.algorithm.startswith("RS") else jwt.algorithms.ECAlgorithm
        public: dict[str, Any] = kind.to_jwk(self.private.public_key(), as_dict=True)
        return {**public, "kid": self.kid, "alg": self.algorithm, "use": "sig"}


@pytest.fixture(scope="module")
def keys() -> dict[str, Key]:
    return {
        "rsa": Key("rsa-1", "RS256"),
        "ec": Key("ec-1", "ES256"),
        "rotated": Key("rsa-2", "RS256"),
        "stray": Key("stray", "RS256"),  # never published
    }


class Issuer:
    """An OpenID provider as far as the service sees one: a discovery document and a JWKS, each
    request counted, and tokens it signs."""

    def __init__(self, published: list[Key]) -> None:
        self.published = published
        self.requests: Counter[str] = Counter()
        self.url = ""

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            self.requests["discovery"] += 1
            return JSONResponse({"issuer": self.url, "jwks_uri": f"{self.url}/keys"})

        async def jwks(request: Request) -> JSONResponse:
            self.requests["jwks"] += 1
            return JSONResponse({"keys": [key.jwk() for key in self.published]})

        return Starlette(routes=[Route("/.well-known/openid-configuration", discovery), Route("/keys", jwks)])

    def token(
        self,
        key: Key,
        *,
        sub: str = "ada",
        roles: object = ("admin",),
        kid: str | None = None,
        expires_in: float = 600,
        **claims: Any,
    ) -> str:
        now = time.time()
        body = {"iss": self.url, "aud": AUDIENCE, "sub": sub, "roles": list(roles) if isinstance(roles, tuple) else roles}
        body |= {"iat": int(now), "exp": int(now + expires_in)} | claims
        return jwt.encode(body, key.private, algorithm=key.algorithm, headers={"kid": kid or key.kid})


@pytest.fixture
def jwks_refresh() -> str:
    """DECISIONTRAIL_OIDC_JWKS_REFRESH for the test's service (a test parametrized with it sets its own)."""
    return "0"


@pytest.fixture
def issuer(keys: dict[str, Key], monkeypatch: pytest.MonkeyPatch, jwks_refresh: str) -> Iterator[Issuer]:
    fake = Issuer([keys["rsa"], keys["ec"]])
    with served(fake.app()) as url:
        fake.url = url
        monkeypatch.setenv("DECISIONTRAIL_OIDC_ISSUER", url)  # its JWKS found by discovery
        monkeypatch.setenv("DECISIONTRAIL_OIDC_AUDIENCE", f"another-service,{AUDIENCE}")
        monkeypatch.setenv("DECISIONTRAIL_OIDC_PROJECT_CLAIM", "projects")
        monkeypatch.setenv("DECISIONTRAIL_OIDC_LEEWAY", "0")
        monkeypatch.setenv("DECISIONTRAIL_OIDC_JWKS_REFRESH", jwks_refresh)
        yield fake


@pytest.fixture
def static_token(tmp_path: Path) -> tuple[str, TokenRegistry]:
    path = tmp_path / "tokens.json"
    token = issue_token(path, "static-admin", Role.ADMIN)
    return token, TokenRegistry.load(path)


@pytest.fixture
def base_url(store: Trail, graph: Graph, issuer: Issuer, static_token: tuple[str, TokenRegistry]) -> Iterator[str]:
    with served(create_app(graph=graph, tokens=static_token[1])) as url:
        yield url


def _plan_ids(body: dict[str, Any]) -> set[str]:
    assert not body.get("errors"), body
    return {node["id"] for node in body["data"]["plans"]["nodes"]}


PLANS = "{ plans { nodes { id } } }"


def test_an_issuers_jwt_is_a_caller_with_the_role_and_project_its_claims_name(
    base_url: str, issuer: Issuer, keys: dict[str, Key], static_token: tuple[str, TokenRegistry]
) -> None:
    admin = issuer.token(keys["rsa"], sub="ada", roles=["offline_access", "admin"])
    alpha, _ = new_plan(base_url, admin, project="alpha")
    beta, _ = new_plan(base_url, admin, project="beta")

    analyst = issuer.token(keys["ec"], sub="ann", roles="analyst")  # an ES256 key, a role as a string
    refused = graphql(base_url, analyst, 'mutation { instantiatePlan(input: {description: "x"}) { id } }')
    reviewer_of_beta = issuer.token(keys["rsa"], sub="rita", roles=["reviewer"], projects=["beta"])
    robot = issuer.token(keys["rsa"], sub="robot-7", roles=["actor"])
    robots_plan, _ = new_plan(base_url, robot)

    assert code(refused) == "FORBIDDEN" and "the analyst role may not" in refused["errors"][0]["message"]
    assert _plan_ids(graphql(base_url, analyst, PLANS)) == {alpha, beta, robots_plan}
    assert _plan_ids(graphql(base_url, reviewer_of_beta, PLANS)) == {beta}
    assert _plan_ids(graphql(base_url, robot, PLANS)) == {robots_plan}  # an actor sees what its subject owns
    assert _plan_ids(graphql(base_url, static_token[0], PLANS)) == {alpha, beta, robots_plan}  # static tokens, beside
    assert (issuer.requests["discovery"], issuer.requests["jwks"]) == (1, 1)  # fetched once, kept


def test_a_jwt_subscribes_by_header_and_by_connection_init(base_url: str, issuer: Issuer, keys: dict[str, Key]) -> None:
    admin = issuer.token(keys["rsa"])
    plan_id, root_id = new_plan(base_url, admin)
    wake = waker(base_url, admin, plan_id, root_id)

    for way in ("header", "init"):
        with subscribed(base_url, plan_id, **{way: issuer.token(keys["ec"], sub="ann", roles="analyst")}) as ws:
            answer = first_answer(ws, wake)
        assert refusal_code(answer) is None and answer["payload"]["data"]["decisionEvents"]["kind"] == "RECORDED", (way, answer)


def _refused_tokens(issuer: Issuer, keys: dict[str, Key]) -> dict[str, str]:
    rsa_key = keys["rsa"]
    claims = {"iss": issuer.url, "aud": AUDIENCE, "sub": "mallory", "roles": ["admin"], "exp": int(time.time() + 600)}
    return {
        "expired": issuer.token(rsa_key, expires_in=-3600),
        "signed by a key the issuer never published": issuer.token(keys["stray"], kid=rsa_key.kid),
        "for another audience": issuer.token(rsa_key, aud="someone-else"),
        "from another issuer": issuer.token(rsa_key, iss="https://issuer.example"),
        "without an expiry": jwt.encode(
            {k: v for k, v in claims.items() if k != "exp"}, rsa_key.private, "RS256", {"kid": rsa_key.kid}
        ),
        "unsigned": jwt.encode(claims, "", algorithm="none", headers={"kid": rsa_key.kid}),
        "signed with a shared secret": jwt.encode(claims, "s" * 64, algorithm="HS256", headers={"kid": rsa_key.kid}),
        "without a role of ours": issuer.token(rsa_key, roles=["offline_access"]),
        "with roles neither covering the other": issuer.token(rsa_key, roles=["actor", "reviewer"]),
        "with two projects": issuer.token(rsa_key, projects=["alpha", "beta"]),
        "without a subject": issuer.token(rsa_key, sub=""),
        "named as one of the service's own callers": issuer.token(rsa_key, sub="process:runtime"),
    }


REFUSED = [
    "expired",
    "signed by a key the issuer never published",
    "for another audience",
    "from another issuer",
    "without an expiry",
    "unsigned",
    "signed with a shared secret",
    "without a role of ours",
    "with roles neither covering the other",
    "with two projects",
    "without a subject",
    "named as one of the service's own callers",
]


@pytest.mark.parametrize("kind", REFUSED)
def test_a_jwt_that_does_not_hold_is_unauthenticated_over_http(
    base_url: str, issuer: Issuer, keys: dict[str, Key], kind: str
) -> None:
    token = _refused_tokens(issuer, keys)[kind]

    body = graphql(base_url, token, "{ plans { totalCount } }")
    exported = httpx.get(f"{base_url}/export/plans/x.json", headers={"Authorization": f"Bearer {token}"}, timeout=30)

    assert code(body) == "UNAUTHENTICATED" and body["data"] is None, body
    assert exported.status_code == 401
    assert graphql(base_url, issuer.token(keys["rsa"]), "{ plans { totalCount } }")["data"] is not None  # the issuer's own holds


@pytest.mark.parametrize("way", ["header", "init"])
@pytest.mark.parametrize("kind", ["expired", "signed by a key the issuer never published"])
def test_a_jwt_that_does_not_hold_is_unauthenticated_over_websocket(
    base_url: str, issuer: Issuer, keys: dict[str, Key], kind: str, way: str
) -> None:
    admin = issuer.token(keys["rsa"])
    plan_id, root_id = new_plan(base_url, admin)

    with subscribed(base_url, plan_id, **{way: _refused_tokens(issuer, keys)[kind]}) as ws:
        answer = first_answer(ws, waker(base_url, admin, plan_id, root_id))

    assert refusal_code(answer) == "UNAUTHENTICATED", answer


def test_keys_rotate_without_a_restart(base_url: str, issuer: Issuer, keys: dict[str, Key]) -> None:
    before = graphql(base_url, issuer.token(keys["rsa"]), "{ plans { totalCount } }")
    issuer.published = [keys["rotated"]]  # the issuer rotates: a new key, the old one retired

    after = graphql(base_url, issuer.token(keys["rotated"]), "{ plans { totalCount } }")
    retired = graphql(base_url, issuer.token(keys["rsa"]), "{ plans { totalCount } }")

    assert code(before) is None and code(after) is None, (before, after)
    assert code(retired) == "UNAUTHENTICATED"
    assert issuer.requests["jwks"] >= 2  # fetched again for the new key id, not served from the first fetch


@pytest.mark.parametrize("jwks_refresh", ["3600"])
def test_a_flood_of_unknown_key_ids_fetches_the_keys_once_a_refresh(
    base_url: str, issuer: Issuer, keys: dict[str, Key], jwks_refresh: str
) -> None:
    assert code(graphql(base_url, issuer.token(keys["rsa"]), "{ plans { totalCount } }")) is None
    fetched = issuer.requests["jwks"]

    flood = [
        graphql(base_url, issuer.token(keys["rsa"], kid=f"made-up-{uuid.uuid4()}"), "{ plans { totalCount } }") for _ in range(25)
    ]
    issuer.published = [keys["rsa"], keys["rotated"]]
    too_soon = graphql(base_url, issuer.token(keys["rotated"]), "{ plans { totalCount } }")

    assert fetched == 1
    assert {code(body) for body in flood} == {"UNAUTHENTICATED"}
    assert code(too_soon) == "UNAUTHENTICATED"  # within DECISIONTRAIL_OIDC_JWKS_REFRESH of the last fetch
    assert issuer.requests["jwks"] == fetched


def test_a_subscription_closes_when_its_jwt_expires(base_url: str, issuer: Issuer, keys: dict[str, Key]) -> None:
    admin = issuer.token(keys["rsa"])
    plan_id, root_id = new_plan(base_url, admin)
    wake = waker(base_url, admin, plan_id, root_id)

    with (
        subscribed(base_url, plan_id, header=issuer.token(keys["rsa"], sub="brief", expires_in=8)) as brief,
        subscribed(base_url, plan_id, init=issuer.token(keys["rsa"], sub="long")) as long,
    ):
        ended = closed(brief, seconds=30)
        assert still_open(long, wake)

    assert ended.rcvd is not None and (ended.rcvd.code, ended.rcvd.reason) == (4403, "the token expired")


def test_an_issuer_needs_an_audience_and_signatures_a_public_key_checks() -> None:
    with pytest.raises(ValidationFailed, match="DECISIONTRAIL_OIDC_AUDIENCE"):
        AccessSettings.from_env({"DECISIONTRAIL_OIDC_ISSUER": "https://issuer.example"})
    with pytest.raises(ValidationFailed, match="DECISIONTRAIL_OIDC_ALGORITHMS: HS256"):
        AccessSettings.from_env(
            {
                "DECISIONTRAIL_OIDC_ISSUER": "https://i.example",
                "DECISIONTRAIL_OIDC_AUDIENCE": "a",
                "DECISIONTRAIL_OIDC_ALGORITHMS": "RS256,HS256",
            }
        )
    assert AccessSettings.from_env({}).oidc is None
