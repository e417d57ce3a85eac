"""OTLP/HTTP traces in and out: ``ExportTraceServiceRequest`` bodies (protobuf or JSON) read into spans,
and the answers OpenTelemetry exporters expect (``ExportTraceServiceResponse``, ``google.rpc.Status``).

The JSON encoding is OTLP's, not plain protobuf JSON: trace and span ids are hex, not base64
(https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding); unknown fields are ignored.
Anything that is not a well-formed request is refused whole (``ValidationFailed`` naming where).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterator
from enum import StrEnum
from typing import Any, Final

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

from decisiontrail.domain.traces import AttributeValue, Span
from decisiontrail.exceptions import ValidationFailed

__all__ = ["Encoding", "decode", "decode_lines", "encoding_of", "response", "status", "unzip"]

MAX_INFLATED_BYTES: Final = 16 * 1024 * 1024
_REMOTE_KNOWN: Final = 0x100  # SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
_REMOTE: Final = 0x200  # SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK


class Encoding(StrEnum):
    """The two encodings of OTLP/HTTP, by content type."""

    PROTOBUF = "application/x-protobuf"
    JSON = "application/json"


def encoding_of(content_type: str | None) -> Encoding | None:
    """The encoding a ``Content-Type`` header names, or None for one OTLP does not use.

    >>> encoding_of("application/json; charset=utf-8")
    <Encoding.JSON: 'application/json'>
    >>> encoding_of("text/plain") is None
    True
    """
    media = (content_type or "").split(";")[0].strip().lower()
    return next((e for e in Encoding if e.value == media), None)


def unzip(body: bytes, content_encoding: str | None) -> bytes:
    """The body as sent before ``Content-Encoding`` (gzip, deflate or none), inflated to at most 16 MiB."""
    coding = (content_encoding or "identity").strip().lower()
    if coding in ("", "identity"):
        return body
    if coding not in ("gzip", "deflate"):
        raise ValidationFailed(f"Content-Encoding: {coding!r} is not gzip, deflate or identity", field="Content-Encoding")
    inflater = zlib.decompressobj(wbits=31 if coding == "gzip" else 15)
    try:
        inflated = inflater.decompress(body, MAX_INFLATED_BYTES)
    except zlib.error as e:
        raise ValidationFailed(f"Content-Encoding: the body is not valid {coding}: {e}", field="Content-Encoding") from None
    if inflater.unconsumed_tail:
        raise ValidationFailed(f"body: inflates to more than {MAX_INFLATED_BYTES} bytes", field="body")
    if not inflater.eof or inflater.unused_data:  # cut short, or more after its end: not one whole body
        raise ValidationFailed(f"Content-Encoding: the body is not one complete {coding} stream", field="Content-Encoding")
    return inflated


def decode_lines(body: bytes) -> list[Span]:
    """The spans of OTLP/JSON requests one per line (JSON Lines, as the Collector's file exporter
    writes them), or of one request over many lines."""
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) > 1 and all(line.lstrip().startswith(b"{") and line.rstrip().endswith(b"}") for line in lines):
        try:
            return [span for line in lines for span in decode(line, Encoding.JSON)]
        except ValidationFailed:
            pass  # not one request per line after all: read it whole
    return decode(body, Encoding.JSON)


def decode(body: bytes, encoding: Encoding) -> list[Span]:
    """The spans of an ``ExportTraceServiceRequest``, each with its resource's attributes."""
    request = ExportTraceServiceRequest()
    if encoding is Encoding.PROTOBUF:
        try:
            request.ParseFromString(body)
        except DecodeError as e:
            raise ValidationFailed(f"body: not an OTLP ExportTraceServiceRequest in protobuf ({e})", field="body") from None
    else:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError) as e:
            raise ValidationFailed(f"body: not JSON ({e})", field="body") from None
        if not isinstance(document, dict):
            raise ValidationFailed("body: an OTLP request is a JSON object with resourceSpans", field="body")
        try:
            json_format.ParseDict(_ids_as_base64(document), request, ignore_unknown_fields=True)
        except (json_format.ParseError, ValueError, TypeError, RecursionError) as e:
            raise ValidationFailed(f"body: not an OTLP ExportTraceServiceRequest ({e})", field="body") from None
    return list(_spans(request))


def response(rejected: int, message: str, encoding: Encoding) -> bytes:
    """An ``ExportTraceServiceResponse``; partial success only when spans were rejected or there is something to say."""
    answer = ExportTraceServiceResponse()
    if rejected or message:
        answer.partial_success.CopyFrom(ExportTracePartialSuccess(rejected_spans=rejected, error_message=message))
    return _encoded(answer, encoding)


def status(code: int, message: str, encoding: Encoding) -> bytes:
    """The ``google.rpc.Status`` body OTLP/HTTP sends with a 4xx or 5xx; ``code`` a ``google.rpc.Code``."""
    return _encoded(status_pb2.Status(code=code, message=message), encoding)


INVALID_ARGUMENT: Final = code_pb2.INVALID_ARGUMENT
UNAUTHENTICATED: Final = code_pb2.UNAUTHENTICATED
PERMISSION_DENIED: Final = code_pb2.PERMISSION_DENIED
UNAVAILABLE: Final = code_pb2.UNAVAILABLE
ABORTED: Final = code_pb2.ABORTED
NOT_FOUND: Final = code_pb2.NOT_FOUND
RESOURCE_EXHAUSTED: Final = code_pb2.RESOURCE_EXHAUSTED
DEADLINE_EXCEEDED: Final = code_pb2.DEADLINE_EXCEEDED
INTERNAL: Final = code_pb2.INTERNAL
FAILED_PRECONDITION: Final = code_pb2.FAILED_PRECONDITION


def _encoded(message: Any, encoding: Encoding) -> bytes:
    if encoding is Encoding.PROTOBUF:
        return bytes(message.SerializeToString())
    return json.dumps(json_format.MessageToDict(message)).encode()


# --- reading a request ------------------------------------------------------------------------


def _spans(request: ExportTraceServiceRequest) -> Iterator[Span]:
    for r, resource_spans in enumerate(request.resource_spans):
        resource = _attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for n, span in enumerate(scope_spans.spans):
                yield _span(span, resource, f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]")


def _span(span: trace_pb2.Span, resource: dict[str, AttributeValue], where: str) -> Span:
    trace_id = _hex_id(span.trace_id, 16, f"{where}.traceId")
    links = tuple(
        _hex_id(link.span_id, 8, f"{where}.links[{i}].spanId")
        for i, link in enumerate(span.links)
        if link.trace_id == span.trace_id
    )
    code = _STATUS_CODES.get(span.status.code, "UNSET")  # proto3 enums are open: an unknown code is no status
    return Span(
        trace_id=trace_id,
        span_id=_hex_id(span.span_id, 8, f"{where}.spanId"),
        name=span.name,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        parent_span_id=_hex_id(span.parent_span_id, 8, f"{where}.parentSpanId") if any(span.parent_span_id) else None,
        parent_is_remote=bool(span.flags & _REMOTE_KNOWN and span.flags & _REMOTE),
        attributes=_attributes(span.attributes),
        resource=resource,
        links=links,
        status=code,
    )


_STATUS_CODES: Final = {number: name.removeprefix("STATUS_CODE_") for name, number in trace_pb2.Status.StatusCode.items()}


def _hex_id(raw: bytes, size: int, where: str) -> str:
    if len(raw) != size or not any(raw):
        raise ValidationFailed(f"{where}: must be {size} bytes, not all zero (got {len(raw)})", field=where)
    return raw.hex()


def _attributes(pairs: Any) -> dict[str, AttributeValue]:
    return {kv.key: _value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


def _value(value: AnyValue) -> AttributeValue:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    found: AttributeValue = getattr(value, kind)
    return found


def _ids_as_base64(document: dict[str, Any]) -> dict[str, Any]:
    """OTLP/JSON writes ids in hex; protobuf's JSON mapping reads bytes as base64."""
    for r, resource_spans in enumerate(_list(document.get("resourceSpans", document.get("resource_spans")))):
        for s, scope_spans in enumerate(_list(_dict(resource_spans).get("scopeSpans", _dict(resource_spans).get("scope_spans")))):
            for n, span in enumerate(_list(_dict(scope_spans).get("spans"))):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans[{n}]"
                _rewrite_ids(_dict(span), where)
                for i, link in enumerate(_list(_dict(span).get("links"))):
                    _rewrite_ids(_dict(link), f"{where}.links[{i}]")
    return document


def _rewrite_ids(holder: dict[str, Any], where: str) -> None:
    for camel, snake in (("traceId", "trace_id"), ("spanId", "span_id"), ("parentSpanId", "parent_span_id")):
        for name in (camel, snake):
            value = holder.get(name)
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise ValidationFailed(f"{where}.{camel}: must be hex text, got {type(value).__name__}", field=f"{where}.{camel}")
            try:
                holder[name] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                raise ValidationFailed(f"{where}.{camel}: {value[:40]!r} is not hex", field=f"{where}.{camel}") from None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
