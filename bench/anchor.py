"""The minimal HTTP endpoint: named Cypher statements over HTTP, the limit for any HTTP API on this Neo4j.

A benchmark anchor (issue 48). Our GraphQL requests are timed interleaved with the same Cypher
behind this endpoint, and the difference is what the API itself costs: parsing, validation,
authorisation, resolvers, loaders. Nothing an HTTP API on this Neo4j could do is cheaper than
what is left here, a request body decoded, one statement run by the official driver, its rows
encoded, so the anchor is the floor, not a straw man:

- it is served as our service is (``bench.harness.served_api``): a process of its own, uvicorn
  with the service's settings (its loop and HTTP implementation, each ``auto``: uvloop and
  httptools; the access log on, at ``info``), the log in a file;
- it talks to Neo4j as our service does: the driver ``create_driver`` makes for it, called from
  Starlette's thread pool, the start-up heap frozen (``decisiontrail.app.settle_heap``), the JSON
  encoded by ``json.dumps`` as strawberry encodes ours;
- each request is one managed transaction (``execute_query``) of the statement's access mode.

What it leaves out is everything else: no GraphQL, no validation, no authentication, no
middleware. ``POST /{name}`` with the statement's parameters as a JSON object answers
``{"rows": [...]}``; an unknown name 404, a statement Neo4j refuses 400, each with ``{"error": ...}``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, LiteralString, cast

import httpx
import neo4j
import uvicorn
from neo4j.exceptions import Neo4jError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from decisiontrail.graphdb.connection import create_driver
from decisiontrail.graphdb.embedded import free_port
from decisiontrail.settings import Neo4jSettings

__all__ = ["Statement", "as_json", "call", "create_anchor", "main", "running_anchor"]

CHECKOUT = Path(__file__).resolve().parent.parent
"""Where ``python -m bench.anchor`` finds ``bench`` (which is not installed)."""

ROUTING = {"read": neo4j.RoutingControl.READ, "write": neo4j.RoutingControl.WRITE}


@dataclass(frozen=True)
class Statement:
    """One named statement of the anchor: its Cypher, and the access mode of its transaction."""

    text: LiteralString
    access: Literal["read", "write"]


def as_json(rows: list[dict[str, Any]]) -> bytes:
    """The answer's body. What JSON cannot carry is written as its ``str``: a temporal value in
    ISO 8601, a point in WKT (``record.data()`` has made nodes dicts of their properties already).

    >>> from neo4j.time import DateTime
    >>> as_json([{"id": "a", "at": DateTime(2026, 12, 1, 9, 30)}])
    b'{"rows":[{"id":"a","at":"2026-12-01T09:30:00.000000000"}]}'
    """
    return json.dumps({"rows": rows}, separators=(",", ":"), default=str).encode()


def create_anchor(neo4j_uri: str, database: str, statements: Mapping[str, Statement]) -> Starlette:
    """The endpoint's app; its lifespan owns the driver (credentials as the service reads them:
    NEO4J_USER and NEO4J_PASSWORD)."""
    settings = Neo4jSettings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        with create_driver(neo4j_uri, settings.user, settings.password) as driver:
            await run_in_threadpool(driver.verify_connectivity)  # before uvicorn listens: /readyz answers only then
            gc.collect()
            gc.freeze()
            yield {"driver": driver}

    def rows(driver: neo4j.Driver, statement: Statement, parameters: dict[str, Any]) -> list[dict[str, Any]]:
        records, _, _ = driver.execute_query(statement.text, parameters, routing_=ROUTING[statement.access], database_=database)
        return [record.data() for record in records]

    async def run(request: Request) -> Response:
        name = request.path_params["name"]
        statement = statements.get(name)
        if statement is None:
            return JSONResponse({"error": f"no statement named {name!r}"}, status_code=404)
        parameters = await request.json()
        try:
            answer = await run_in_threadpool(rows, request.state.driver, statement, parameters)
        except Neo4jError as e:
            return JSONResponse({"error": e.message or str(e)}, status_code=400)
        return Response(as_json(answer), media_type="application/json")

    async def readyz(request: Request) -> Response:
        return JSONResponse({"status": "ready"})

    return Starlette(routes=[Route("/readyz", readyz), Route("/{name:str}", run, methods=["POST"])], lifespan=lifespan)


@contextlib.contextmanager
def running_anchor(neo4j_uri: str, database: str, statements: Mapping[str, Statement]) -> Iterator[str]:
    """``python -m bench.anchor`` in its own process, serving ``statements``; its base URL once ready.

    Started, logged (to a file, as ``served_api`` logs the service, for the same reason) and
    stopped as ``served_api`` does it.
    """
    from bench.harness import served_process

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="decisiontrail-bench-anchor-") as scratch:
        statements_path = Path(scratch) / "statements.json"
        statements_path.write_text(json.dumps({name: asdict(statement) for name, statement in statements.items()}))
        log_path = Path(scratch) / "anchor.log"
        argv = [sys.executable, "-m", "bench.anchor", neo4j_uri, database, str(statements_path), str(port)]
        with served_process(argv, port, log_path, "the anchor", cwd=CHECKOUT) as url:
            yield url


def call(client: httpx.Client, name: str, /, **parameters: Any) -> list[dict[str, Any]]:
    """The rows of the statement ``name`` run with ``parameters``; any other answer stops the
    benchmark, since it would time a failure."""
    response = client.post(f"/{name}", json=parameters)
    if response.status_code != 200:
        raise RuntimeError(f"the anchor's {name!r} failed ({response.status_code}): {response.text}")
    answer: list[dict[str, Any]] = response.json()["rows"]
    return answer


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.anchor", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("uri", help="Neo4j's Bolt URI")
    parser.add_argument("database")
    parser.add_argument("statements", type=Path, help="a JSON object: name -> {text, access}")
    parser.add_argument("port", type=int)
    args = parser.parse_args(argv)
    # The statements are the benchmark's own, written to the file from its LiteralStrings.
    statements = {
        name: Statement(cast(LiteralString, s["text"]), s["access"])
        for name, s in json.loads(args.statements.read_text()).items()
    }
    # As `decisiontrail serve` runs uvicorn (cli/serving.py): loop and http left to auto, the access log on.
    uvicorn.run(
        create_anchor(args.uri, args.database, statements), host="127.0.0.1", port=args.port, log_level="info", access_log=True
    )


if __name__ == "__main__":
    main()
