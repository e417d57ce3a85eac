"""The lineage explorer's page at /explore: its built static files, served under a strict Content-Security-Policy."""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

PATH = "/explore"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        # Cytoscape draws on canvases; a PNG of the drawing is handed to the browser as a blob.
        "img-src 'self' data: blob:",
        # 'self' covers the page's own ws:/wss: origin too (CSP Level 3): no other host, by WebSocket or fetch.
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    # Rebuilt by `make install`; always asked again, so a rebuilt bundle is picked up at once.
    "cache-control": "no-cache",
}
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_ASSET = re.compile(r"^[a-z0-9][a-z0-9.-]*\.(?:js|css|svg|png)$")


def bundle() -> Traversable:
    """Where the build (``explorer/``, ``npm run build``) writes the page: inside the package, so the wheel carries it."""
    return resources.files("decisiontrail") / "explorer_static"


def _file(name: str) -> Response:
    found = bundle() / name
    if not found.is_file():
        if name.endswith(".html"):
            return JSONResponse(
                {
                    "errors": [
                        {
                            "message": "the explorer is not built: run `make install` (npm ci && npm run build in explorer/)",
                            "extensions": {"code": "UNAVAILABLE"},
                        }
                    ]
                },
                status_code=503,
                headers=HEADERS,
            )
        return JSONResponse(
            {"errors": [{"message": f"no asset {name}", "extensions": {"code": "NOT_FOUND"}}]}, status_code=404, headers=HEADERS
        )
    suffix = name[name.rfind(".") :]
    return Response(found.read_bytes(), media_type=MEDIA_TYPES[suffix], headers=HEADERS)


async def page(request: Request) -> Response:
    """The page itself; it asks the API for everything with the caller's own token, so it needs none to load."""
    return _file("index.html")


async def trends_page(request: Request) -> Response:
    """The trends page (``/explore/trends?project=...``): a project's plots, from the ``trends`` query, with the caller's token."""
    return _file("trends.html")


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if not _ASSET.match(name):
        return JSONResponse(
            {"errors": [{"message": f"no asset {name}", "extensions": {"code": "NOT_FOUND"}}]}, status_code=404, headers=HEADERS
        )
    return _file(name)


def routes() -> list[Route]:
    """``/explore`` (and ``/explore/``) is the page, ``/explore/trends`` the trends page, ``/explore/<name>`` their
    scripts and styles."""
    return [
        Route(PATH, page, methods=["GET", "HEAD"]),
        Route(PATH + "/", page, methods=["GET", "HEAD"]),
        Route(PATH + "/trends", trends_page, methods=["GET", "HEAD"]),
        Route(PATH + "/{name:str}", asset, methods=["GET", "HEAD"]),
    ]
