#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver built on the opentelemetry-proto package, for the worker's span export.

Usage: otlp_receiver.py OUT_DIR

Listens on 127.0.0.1 (a free port, printed as `otlp receiver listening on PORT`), accepts
`POST /v1/traces` with `Content-Type: application/json` and parses each body as an
`ExportTraceServiceRequest` with `google.protobuf.json_format.Parse` (unknown fields refused).
OTLP/JSON writes trace and span ids as hex where the protobuf JSON mapping expects base64: they are
converted first, as the OTLP specification tells receivers to. Every body as received is appended
to OUT_DIR/raw.bin; every span parsed is appended to OUT_DIR/spans.jsonl as one JSON line
(`trace_id`, `span_id`, `parent_span_id` in hex, `name`, `kind`, `start_ns`, `end_ns`,
`attributes`, `resource`); a body that does not parse is answered 400 and its error appended to
OUT_DIR/errors.jsonl. Runs until killed.
"""
import base64
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def hex_ids_to_base64(node):
    """Rewrites OTLP/JSON's hex ids into the base64 the protobuf JSON mapping reads."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_FIELDS and isinstance(value, str):
                node[key] = base64.b64encode(bytes.fromhex(value)).decode() if value else ""
            else:
                hex_ids_to_base64(value)
    elif isinstance(node, list):
        for item in node:
            hex_ids_to_base64(item)


def attribute_values(attributes):
    return {a.key: json_format.MessageToDict(a.value) for a in attributes}


def spans_of(request):
    for resource_spans in request.resource_spans:
        resource = attribute_values(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    raise ValueError("trace id or span id of the wrong length")
                if span.parent_span_id and len(span.parent_span_id) != 8:
                    raise ValueError("parent span id of the wrong length")
                if not span.name or span.end_time_unix_nano < span.start_time_unix_nano or span.start_time_unix_nano == 0:
                    raise ValueError("span without a name or with bad times")
                yield {
                    "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(), "name": span.name, "kind": int(span.kind),
                    "start_ns": span.start_time_unix_nano, "end_ns": span.end_time_unix_nano,
                    "status_code": int(span.status.code),
                    "attributes": {k: v.get("stringValue", v) for k, v in attribute_values(span.attributes).items()},
                    "resource": {k: v.get("stringValue", v) for k, v in resource.items()},
                }


def main():
    out_dir = sys.argv[1]

    lock = threading.Lock()  # two workers may post at once: one body, one write

    def append(name, data):
        with lock, open(os.path.join(out_dir, name), "ab") as f:
            f.write(data)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            append("raw.bin", body + b"\n")
            if self.path != "/v1/traces" or not self.headers.get("Content-Type", "").startswith("application/json"):
                append("errors.jsonl", (json.dumps({"error": "path or content type", "path": self.path}) + "\n").encode())
                return self.answer(404, b"{}")
            try:
                document = json.loads(body)
                hex_ids_to_base64(document)
                request = json_format.Parse(json.dumps(document), ExportTraceServiceRequest(), ignore_unknown_fields=False)
                lines = [json.dumps(span) + "\n" for span in spans_of(request)]
            except Exception as error:  # noqa: BLE001 - any failure is the sender's
                append("errors.jsonl", (json.dumps({"error": repr(error)}) + "\n").encode())
                return self.answer(400, json.dumps({"message": repr(error)}).encode())
            append("spans.jsonl", "".join(lines).encode())
            self.answer(200, b"{}")

        def answer(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"otlp receiver listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
