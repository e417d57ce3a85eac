"""The service's plain HTTP endpoints beside /graphql: health, readiness, graph exports and OTLP/HTTP traces.
Each reads the trail the lifespan opened (``request.state.trail``) and calls the services as the caller,
which judge what its role may do (FORBIDDEN: 403)."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from decisiontrail.services.analysis import ExportFormat, export_graph
from decisiontrail.exceptions import DecisionTrailError, ValidationFailed
from decisiontrail import otlp
from decisiontrail.services import Trail, analysis, importing, reading
from decisiontrail.services.analysis import View
from decisiontrail.web.auth import caller
from decisiontrail.web.errors import RPC_CODES, STATUS, error


def _moment(text: str | None) -> datetime | None:
    """An export's ``asOf``: ISO 8601 with a UTC offset, as the API's DateTime takes it."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(f"asOf: {text!r} is not an ISO 8601 date and time", field="asOf") from None
    if moment.tzinfo is None:
        raise ValidationFailed(f"asOf: {text!r} has no UTC offset; write it as 2026-12-01T09:30:00Z", field="asOf")
    return moment.astimezone(UTC)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    trail: Trail = request.state.trail
    try:  # a transaction, not only a connection: a database that takes none (its disk full) is not ready
        await run_in_threadpool(reading.ready, trail)
    except Exception as e:  # any failure to reach Neo4j's database means not ready
        return JSONResponse({"status": "unavailable", "neo4j": type(e).__name__}, status_code=503)
    return JSONResponse({"status": "ready"})


def _flag(text: str | None, name: str) -> bool:
    """A query parameter's boolean: ``true`` or ``false`` (absent: false)."""
    if text is None or text == "false":
        return False
    if text == "true":
        return True
    raise ValidationFailed(f"{name}: {text!r} is not true or false", field=name)


async def export(request: Request) -> Response:
    """``/export/plans/{id}.{format}`` (``?scope=hierarchy`` for the plans below too) and
    ``/export/decisions/{id}/{lineage|impact}.{format}``, streamed as they are written;
    ``?asOf=`` (ISO 8601 with a UTC offset) draws the graph as it stood then; ``?decisionsOnly=true``
    keeps the decisions and the edges between them alone."""
    principal = caller(request)
    if principal is None:
        return error(401, "UNAUTHENTICATED", "a bearer token is required")
    try:
        # By the longest format that fits: ``<id>.prov.json`` is PROV-JSON, not node-link JSON of ``<id>.prov``.
        target, fmt = ExportFormat.of_file(request.path_params["name"])
        if "decision_id" in request.path_params:
            view_name, target = target, request.path_params["decision_id"]
        else:
            view_name = request.query_params.get("scope", "plan")
        view = View(view_name)
    except ValueError:
        return error(404, "NOT_FOUND", f"no export {request.url.path}: formats are {', '.join(f.value for f in ExportFormat)}")
    try:
        as_of = _moment(request.query_params.get("asOf"))
        decisions_only = _flag(request.query_params.get("decisionsOnly"), "decisionsOnly")
        G = await run_in_threadpool(
            analysis.view_graph,
            request.state.trail,
            view,
            target,
            principal=principal,
            progress=False,
            as_of=as_of,
            decisions_only=decisions_only,
        )
    except DecisionTrailError as e:
        return error(STATUS.get(e.code, 400), e.code, e.message, field=getattr(e, "field", None), rule=getattr(e, "rule", None))
    filename = f"{target}-{view.value}.{fmt.value}"
    return StreamingResponse(
        export_graph(G, fmt),
        media_type=fmt.media_type,
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )


async def traces(request: Request) -> Response:
    """OTLP/HTTP ``POST /v1/traces`` (protobuf or JSON, gzip or not): spans become plans and
    decisions (``services.importing``); answered as OpenTelemetry exporters expect."""
    encoding = otlp.encoding_of(request.headers.get("content-type"))
    if encoding is None:
        return Response(
            otlp.status(
                otlp.INVALID_ARGUMENT, "Content-Type: send application/x-protobuf or application/json", otlp.Encoding.JSON
            ),
            status_code=415,
            media_type=otlp.Encoding.JSON.value,
        )

    def answer(status: int, code: int, message: str) -> Response:
        return Response(otlp.status(code, message, encoding), status_code=status, media_type=encoding.value)

    principal = caller(request)
    if principal is None:
        return answer(401, otlp.UNAUTHENTICATED, "a bearer token is required")
    try:
        body = otlp.unzip(await request.body(), request.headers.get("content-encoding"))
        spans = otlp.decode(body, encoding)
        report = await run_in_threadpool(importing.import_spans, request.state.trail, spans, principal=principal)
    except DecisionTrailError as e:
        status = STATUS.get(e.code, 400)
        refused = answer(status, RPC_CODES.get(status, otlp.INVALID_ARGUMENT), f"{e.code}: {e.message}")
        if status == 503:  # an exporter retries 503 (with its backoff); the request wrote nothing
            refused.headers["Retry-After"] = "1"
        return refused
    return Response(otlp.response(report.rejected, report.message(), encoding), media_type=encoding.value)


def traces_rate_limited(connection: HTTPConnection, retry_after: int) -> Response:
    """/v1/traces' answer to a caller over its rate limit (``middleware.RateLimit``): 429 with
    ``Retry-After``, which an OpenTelemetry exporter waits out, and OTLP's own Status as its body."""
    encoding = otlp.encoding_of(connection.headers.get("content-type")) or otlp.Encoding.JSON
    message = f"RATE_LIMITED: this caller is over its rate limit; retry after {retry_after} s"
    return Response(
        otlp.status(otlp.RESOURCE_EXHAUSTED, message, encoding),
        status_code=429,
        media_type=encoding.value,
        headers={"Retry-After": str(retry_after)},
    )
