"""Too much at once: beyond its limit the service answers 503 with Retry-After at once instead of
queueing without bound; the health routes are always answered."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from decisiontrail.app import ShedLoad


class Held:
    """A downstream app whose requests wait until released (as slow queries would)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.entered += 1
        if scope["path"] == "/graphql":
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"served"})


def test_beyond_the_limit_a_request_is_refused_at_once_and_admitted_ones_are_served() -> None:
    async def scenario() -> None:
        held = Held()
        app = ShedLoad(held, limit=2, retry_after=3)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://service") as client:
            admitted = [asyncio.create_task(client.post("/graphql")) for _ in range(2)]
            while held.entered < 2:  # both admitted and held inside
                await asyncio.sleep(0.01)

            refused = await asyncio.wait_for(client.post("/graphql"), timeout=5)
            health = await asyncio.wait_for(client.get("/healthz"), timeout=5)

            assert refused.status_code == 503 and refused.headers["Retry-After"] == "3"
            error = refused.json()["errors"][0]
            assert error["extensions"] == {"code": "OVERLOADED", "retryable": True}
            assert "retry after 3 s" in error["message"]
            assert health.status_code == 200  # a busy service is not a dead one
            assert held.entered == 3  # the refused request never reached the app; the health check did

            held.release.set()
            assert [r.status_code for r in await asyncio.gather(*admitted)] == [200, 200]
            assert app.in_flight == 0
            assert (await client.post("/graphql")).status_code == 200  # room again

    asyncio.run(scenario())


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):  # a limit of 0 would refuse everything
        ShedLoad(Held(), limit=0)
