"""viewer over real HTTP: who the request's token is and what its role allows, for every role, a
project-limited token, no tokens configured (the local admin), and no token or a bad one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from decisiontrail.access import Role, TokenRegistry, issue_token
from decisiontrail.app import create_app
from decisiontrail.graphdb import Graph
from decisiontrail.services import Trail
from serving import served

VIEWER = "{ viewer { name role project may } }"


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("viewer") / "tokens.json"
    issued = {role.value: issue_token(path, f"{role.value}-1", role) for role in Role}
    return issued | {"alpha-reviewer": issue_token(path, "reviewer-alpha", Role.REVIEWER, project="alpha"), "_file": str(path)}


@pytest.fixture
def tokened(store: Trail, graph: Graph, tokens: dict[str, str]) -> Iterator[httpx.Client]:
    with served(create_app(graph=graph, tokens=TokenRegistry.load(Path(tokens["_file"])))) as url:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client


def _viewer(client: httpx.Client, token: str | None) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    body = client.post("/graphql", json={"query": VIEWER}, headers=headers).json()
    assert "errors" not in body, body
    viewer: dict[str, object] = body["data"]["viewer"]
    return viewer


def test_with_no_tokens_configured_the_caller_is_the_local_admin(api: httpx.Client) -> None:
    assert _viewer(api, None) == {
        "name": "local",
        "role": "ADMIN",
        "project": None,
        "may": ["READ", "RECORD", "REVIEW", "CORRECT", "CONFIGURE"],
    }


@pytest.mark.parametrize(
    ("key", "name", "role", "may"),
    [
        ("actor", "actor-1", "ACTOR", ["READ", "RECORD"]),
        ("reviewer", "reviewer-1", "REVIEWER", ["READ", "REVIEW", "CORRECT"]),
        ("analyst", "analyst-1", "ANALYST", ["READ"]),
        ("admin", "admin-1", "ADMIN", ["READ", "RECORD", "REVIEW", "CORRECT", "CONFIGURE"]),
    ],
)
def test_each_role_reads_its_own_name_role_and_actions(
    tokened: httpx.Client, tokens: dict[str, str], key: str, name: str, role: str, may: list[str]
) -> None:
    assert _viewer(tokened, tokens[key]) == {"name": name, "role": role, "project": None, "may": may}


def test_a_project_token_reads_its_project(tokened: httpx.Client, tokens: dict[str, str]) -> None:
    assert _viewer(tokened, tokens["alpha-reviewer"]) == {
        "name": "reviewer-alpha",
        "role": "REVIEWER",
        "project": "alpha",
        "may": ["READ", "REVIEW", "CORRECT"],
    }


@pytest.mark.parametrize("token", [None, "dt_not-a-token-anyone-was-given"])
def test_without_a_valid_token_it_is_refused(tokened: httpx.Client, token: str | None) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    response = tokened.post("/graphql", json={"query": VIEWER}, headers=headers)

    body = response.json()
    assert body.get("data") is None or body["data"].get("viewer") is None
    codes = {(e.get("extensions") or {}).get("code") for e in body.get("errors") or []}
    assert codes == {"UNAUTHENTICATED"}, body
