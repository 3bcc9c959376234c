"""A loopback OTLP/HTTP receiver: decodes every POST to /v1/traces and /v1/metrics with
the official protobuf definitions (PyPI opentelemetry-proto) and keeps the spans and
metric names, for the checks in trace_check.py. Not a collector: it answers 200 and
remembers what it got."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def _value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _kind(any_value):
    """The protobuf type of an attribute's value: `string_value`, `int_value`,
    `bool_value`, `double_value`, ... (`None` when empty)."""
    return any_value.WhichOneof("value")


STATUS = {0: "unset", 1: "ok", 2: "error"}  # opentelemetry.proto.trace.v1.Status.StatusCode


class Received:
    def __init__(self):
        self.lock = threading.Lock()
        # dicts: name, trace_id, span_id, parent_id, kind, attributes, types (each
        # attribute's protobuf value type), status (unset, ok, error), status_message,
        # start, end, service
        self.spans = []
        self.resources = []
        self.metric_names = set()
        self.gauge_points = {}  # gauge name -> [attributes of each data point]
        self.raw_bodies = []

    def add_traces(self, body):
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            self.raw_bodies.append(body)
            for rs in request.resource_spans:
                resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                self.resources.append(resource)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            {
                                "name": s.name,
                                "trace_id": s.trace_id.hex(),
                                "span_id": s.span_id.hex(),
                                "parent_id": s.parent_span_id.hex(),
                                "kind": s.kind,
                                "attributes": {a.key: _value(a.value) for a in s.attributes},
                                "types": {a.key: _kind(a.value) for a in s.attributes},
                                "status": STATUS.get(s.status.code, s.status.code),
                                "status_message": s.status.message,
                                "start": s.start_time_unix_nano,
                                "end": s.end_time_unix_nano,
                                "service": resource.get("service.name"),
                            }
                        )

    def add_metrics(self, body):
        request = metrics_service_pb2.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        self.metric_names.add(m.name)
                        if m.HasField("gauge"):
                            self.gauge_points[m.name] = [
                                {a.key: (_value(a.value), _kind(a.value)) for a in dp.attributes}
                                for dp in m.gauge.data_points]


def serve(port=0, delay=0.0):
    """Starts the receiver on 127.0.0.1 (a free port by default); returns (server, received).
    `delay` seconds are waited before each answer (a slow collector)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Type") != "application/x-protobuf":
                self.send_response(415)
                self.end_headers()
                return
            if self.path == "/v1/traces":
                received.add_traces(body)
            elif self.path == "/v1/metrics":
                received.add_metrics(body)
            else:
                self.send_response(404)
                self.end_headers()
                return
            if delay:
                threading.Event().wait(delay)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, received
