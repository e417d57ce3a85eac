"""docs/security.md's examples, run: static tokens made and served by the command line, `serve` with an
OIDC issuer (one served here, its keys made here) and the page's curl with its JWT, the claims
example and what it prints, a rate-limited `serve` refusing as the page shows, the audit trail's query."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from decisiontrail.access import LOCAL
from decisiontrail.services import Trail
from decisiontrail.services.lifecycle import instantiate_plan
import docs_examples
from docs_examples import Cli, example, run_graphql, with_ids
from serving import served

PAGE = "docs/security.md"
VIEWER = "{ viewer { name role project } }"

cli = docs_examples.cli  # the fixture: the command line on the test's database


def _viewer(base_url: str, token: str | None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body: dict[str, Any] = httpx.post(f"{base_url}/graphql", json={"query": VIEWER}, headers=headers, timeout=30).json()
    return body


def test_the_static_tokens_example_makes_two_tokens_the_service_it_starts_accepts(cli: Cli) -> None:
    block = example(PAGE, "decisiontrail token --name ci-bot --role actor --file /etc/decisiontrail/tokens.json")
    file = cli.cwd / "etc" / "tokens.json"
    ci_bot, rita, serve = block.replace("/etc/decisiontrail/tokens.json", str(file)).splitlines()

    tokens = []
    for line in (ci_bot, rita):
        said = cli.shell(line)
        assert said.code == 0, said.err
        tokens.append(said.out.strip())

    # "prints the token once and adds its SHA-256 to the file; the file never holds a token itself"
    entries = json.loads(file.read_text(encoding="utf-8"))
    assert [{k: v for k, v in e.items() if k != "sha256"} for e in entries] == [
        {"name": "ci-bot", "role": "actor"},
        {"name": "rita", "role": "reviewer", "project": "billing"},
    ]
    assert all(t.startswith("dt_") and t not in file.read_text(encoding="utf-8") for t in tokens)
    with cli.serving(serve) as url:
        bot, reviewer, nobody = (_viewer(url, token) for token in (*tokens, None))

    assert bot["data"]["viewer"] == {"name": "ci-bot", "role": "ACTOR", "project": None}
    assert reviewer["data"]["viewer"] == {"name": "rita", "role": "REVIEWER", "project": "billing"}
    assert nobody["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


class Issuer:
    """An OpenID provider as the service sees one: a discovery document, its JWKS (one RSA key), and
    the access tokens it signs."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.url = ""

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            return JSONResponse({"issuer": self.url, "jwks_uri": f"{self.url}/keys"})

        async def keys(request: Request) -> JSONResponse:
            public = jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
            return JSONResponse({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]})

        return Starlette(routes=[Route("/.well-known/openid-configuration", discovery), Route("/keys", keys)])

    def token(self, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.url, "aud": "decisiontrail", "iat": now, "exp": now + 600} | claims
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": "k1"})


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    fake = Issuer()
    with served(fake.app()) as url:
        fake.url = url
        yield fake


def test_the_oidc_example_serves_jwt_callers_and_the_curl_example_reads_as_one(cli: Cli, issuer: Issuer, store: Trail) -> None:
    instantiate_plan(store, "Add rate limiting", project="billing", principal=LOCAL)
    instantiate_plan(store, "Index the catalogue", project="search", principal=LOCAL)
    serve = example(PAGE, "export DECISIONTRAIL_OIDC_ISSUER=https://id.example.com/realms/acme   # Keycloak")
    curl = example(PAGE, "curl -s https://decisiontrail.example.com/graphql \\")
    ada = issuer.token(sub="ada", realm_access={"roles": ["offline_access", "analyst"]}, project="billing")
    admin = issuer.token(sub="root", realm_access={"roles": ["admin"]})
    forged = Issuer()
    forged.url = issuer.url

    with cli.serving(serve.replace("https://id.example.com/realms/acme", issuer.url)) as url:
        answers = [
            cli.shell(curl.replace("https://decisiontrail.example.com", url), ACCESS_TOKEN=token)
            for token in (ada, admin, forged.token(sub="ada", realm_access={"roles": ["admin"]}))
        ]
        who = _viewer(url, ada)

    assert all(said.code == 0 for said in answers), [said.err for said in answers]
    limited, unlimited, refused = (json.loads(said.out) for said in answers)
    # The project claim limits ada to billing's plans; the admin sees both; a forged token is no one.
    assert limited == {"data": {"plans": {"totalCount": 1}}}
    assert unlimited == {"data": {"plans": {"totalCount": 2}}}
    assert refused["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert who["data"]["viewer"] == {"name": "ada", "role": "ANALYST", "project": "billing"}


def test_the_claims_example_prints_what_the_page_shows(capsys: pytest.CaptureFixture[str]) -> None:
    code = example(PAGE, "from decisiontrail.settings import AccessSettings")

    exec(compile(code, PAGE, "exec"), {})

    assert capsys.readouterr().out == example(PAGE, "Principal(name='ada', role=<Role.REVIEWER: 'reviewer'>, project='billing')")


def test_the_rate_limit_example_refuses_past_the_burst_as_shown(cli: Cli) -> None:
    serve = example(PAGE, "DECISIONTRAIL_RATE_LIMIT=20 DECISIONTRAIL_RATE_BURST=200 decisiontrail serve")
    shown = example(PAGE, "HTTP/1.1 429 Too Many Requests")
    head, body = shown.split("\n\n")
    status, *headers = head.splitlines()

    with cli.serving(serve) as url, httpx.Client(base_url=url, timeout=30) as client:
        answers = [client.post("/graphql", json={"query": "{ __typename }"}) for _ in range(200)]
        refused = next(
            a for a in (client.post("/graphql", json={"query": "{ __typename }"}) for _ in range(1000)) if a.status_code == 429
        )
        healthy = client.get("/healthz")

    # The burst of 200 is let through; past it (refilled at 20 a second) a request is told to wait.
    assert all(a.status_code == 200 for a in answers)
    assert f"HTTP/1.1 {refused.status_code} {refused.reason_phrase}" == status
    for header in headers:
        name, value = header.split(": ", 1)
        assert refused.headers[name] == value, name
    assert refused.json() == json.loads(body)
    assert healthy.status_code == 200  # /healthz does not count


def test_the_audit_trail_example_reads_a_plans_entries(api: httpx.Client, store: Trail) -> None:
    made = api.post(
        "/graphql",
        json={"query": 'mutation { instantiatePlan(input: {description: "Add rate limiting"}) { id } }'},
        headers={"X-Request-ID": "plan-1"},
    ).json()
    plan_id = made["data"]["instantiatePlan"]["id"]
    instantiate_plan(store, "another plan", principal=LOCAL)
    document = with_ids(example(PAGE, "query {"), planId=plan_id)

    trail = run_graphql(api, document)["auditTrail"]

    assert trail["pageInfo"]["hasNextPage"] is False
    (entry,) = trail["nodes"]
    assert (entry["principal"], entry["role"], entry["operation"]) == ("local", "admin", "lifecycle.instantiate_plan")
    assert (entry["requestId"], entry["planIds"]) == ("plan-1", [plan_id])
    assert len(entry["decisionIds"]) == 1 and re.fullmatch(r"\d{4}-\d\d-\d\dT.*", entry["at"])
