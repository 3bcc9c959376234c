"""Traces against a real receiver: the example built with `--features otel` exports to a
loopback OTLP/HTTP receiver (receiver.py, decoding with PyPI opentelemetry-proto), and
this checks that one MCP draft is one trace continuing the caller's `traceparent`
(edge -> call -> admission, draft transaction -> idempotency claim, handler, audit), with
the OpenTelemetry MCP attributes, without the token or argument values; that a
`_meta.traceparent` (SEP-414) is continued too; that the metrics arrive over OTLP; and
that with the collector slow or down no call waits for it.

    python3 scripts/otel/trace_check.py target/debug/examples/distributor [out.json]
"""

import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import receiver  # noqa: E402
from mcp_http import Server, Session, free_port, traceparent  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/distributor"
OUT = sys.argv[2] if len(sys.argv) > 2 else "target/otel/draft-trace.json"
BUYER = "purchasing:read,purchasing:draft,inventory:read"
DRAFT = {
    "vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": "otel-secret-ref-1",
    "note": "Argument value that must not be exported",
    "lines": [{"item_code": "BRG-0042", "qty": "20", "uom": "BOX"}],
}
failures = []


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)


def otel_env(endpoint):
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "erp-tools-check",
            "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_METRIC_EXPORT_INTERVAL": "500",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "ERP_TOOLS_RATE_LIMIT": "off"}


def wait_for(pred, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def tree(spans, root_parent):
    """The spans as indented lines, children under their parent, by start time."""
    lines = []

    def walk(parent, depth):
        for s in sorted((s for s in spans if s["parent_id"] == parent), key=lambda s: s["start"]):
            took = (s["end"] - s["start"]) / 1e6
            lines.append(f"{'  ' * depth}{s['name']}  ({took:.2f} ms)")
            walk(s["span_id"], depth + 1)

    walk(root_parent, 0)
    return lines


def traced(tmp):
    server_http, got = receiver.serve()
    endpoint = f"http://127.0.0.1:{server_http.server_address[1]}"
    server = Server(BIN, tmp, otel_env(endpoint), "traced")
    try:
        token = server.token(BUYER)
        session = Session(server.url, token).open()
        header, trace_id, caller_span = traceparent()
        answer = session.call("purchasing_create_po_draft", DRAFT, {"traceparent": header})
        check(answer and answer["result"].get("isError") is False, "the draft succeeds")
        meta_tp, meta_trace, meta_span = traceparent()
        read = session.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": None},
                            meta={"traceparent": meta_tp})
        check(read and read["result"].get("isError") is False, "the read succeeds")
        denied = Session(server.url, server.token("inventory:read")).open()
        denied.call("purchasing_create_po_draft", dict(DRAFT, client_ref="otel-2"))

        def spans_of(trace):
            with got.lock:
                return [s for s in got.spans if s["trace_id"] == trace]

        names = {"POST /mcp", "tools/call purchasing_create_po_draft", "erp_tools.admission",
                 "erp_tools.draft_transaction", "erp_tools.idempotency_claim",
                 "erp_tools.handler", "erp_tools.audit_durable"}
        wait_for(lambda: names <= {s["name"] for s in spans_of(trace_id)})
        wait_for(lambda: any(s["name"].startswith("tools/call inventory") for s in spans_of(meta_trace)))
        wait_for(lambda: "mcp.server.operation.duration" in got.metric_names, 10)
        spans = spans_of(trace_id)
        by_name = {}
        for s in spans:
            by_name.setdefault(s["name"], s)
        check(names <= set(by_name), f"one trace holds the draft's spans: {sorted(by_name)}")
        if not names <= set(by_name):
            return None
        edge, call = by_name["POST /mcp"], by_name["tools/call purchasing_create_po_draft"]
        tx = by_name["erp_tools.draft_transaction"]
        check(edge["parent_id"] == caller_span, "the edge span's parent is the caller's traceparent")
        check(call["parent_id"] == edge["span_id"], "the call span is the edge span's child")
        check(by_name["erp_tools.admission"]["parent_id"] == call["span_id"], "admission is the call's child")
        check(tx["parent_id"] == call["span_id"], "the draft transaction is the call's child")
        for child in ("erp_tools.idempotency_claim", "erp_tools.handler"):
            check(by_name[child]["parent_id"] == tx["span_id"], f"{child} is inside the transaction")
        check(any(s["name"] == "erp_tools.audit_durable" and s["parent_id"] in (tx["span_id"], call["span_id"])
                  for s in spans), "the wait for the audit row is in the call")
        check(call["service"] == "erp-tools-check", "service.name comes from OTEL_SERVICE_NAME")
        a = call["attributes"]
        expected = {"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "purchasing_create_po_draft", "mcp.protocol.version": "2025-11-25",
                    "erp_tools.tier": "draft", "erp_tools.outcome": "ok", "enduser.id": "7"}
        for key, value in expected.items():
            check(a.get(key) == value, f"{key} = {value!r} (got {a.get(key)!r})")
        check(a.get("jsonrpc.request.id") not in (None, ""), "jsonrpc.request.id is set")
        check(a.get("mcp.session.id") == session.session, "mcp.session.id is the session")
        check(str(a.get("erp_tools.run_id", "")).startswith("user-"), "erp_tools.run_id is the caller's scope")
        check("error.type" not in a, "no error.type on success")
        with got.lock:
            raw = b"".join(got.raw_bodies)
        check(token.encode() not in raw and token.split(".")[2].encode() not in raw,
              "no token (nor its signature) in any exported span")
        for secret in (b"otel-secret-ref-1", b"must not be exported", b"V-00231"):
            check(secret not in raw, f"argument value {secret.decode()!r} is not exported")
        meta_spans = spans_of(meta_trace)
        read_call = next((s for s in meta_spans if s["name"] == "tools/call inventory_get_stock"), None)
        check(read_call is not None and read_call["parent_id"] == meta_span,
              "a _meta traceparent (SEP-414) is the read call's parent")
        with got.lock:
            refused = [s for s in got.spans if s["name"] == "tools/call purchasing_create_po_draft"
                       and s["attributes"].get("erp_tools.outcome") == "denied"]
        check(bool(refused) and refused[0]["attributes"].get("error.type") == "denied",
              "a denied call carries erp_tools.outcome = denied and error.type")
        check("mcp.server.operation.duration" in got.metric_names and "erp_tools.calls" in got.metric_names,
              f"metrics arrive over OTLP: {sorted(got.metric_names)}")
        print("\n  the draft's trace as the receiver decoded it:")
        for line in tree(spans, caller_span):
            print("    " + line)
        return {"caller_span": caller_span, "spans": sorted(spans, key=lambda s: s["start"])}
    finally:
        server.stop()
        server_http.shutdown()


def read_latencies(session, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        session.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": None})
        times.append(time.perf_counter() - t)
    return times


def collector_down(tmp):
    """Calls with the collector down (nothing listens) and slow (5 s per export) take as
    long as with a live one: the export never sits on a call."""
    live_http, _ = receiver.serve()
    slow_http, _ = receiver.serve(delay=5.0)
    results = {}
    for label, endpoint in (("live", f"http://127.0.0.1:{live_http.server_address[1]}"),
                            ("down", f"http://127.0.0.1:{free_port()}"),
                            ("slow", f"http://127.0.0.1:{slow_http.server_address[1]}")):
        server = Server(BIN, tmp, otel_env(endpoint), f"fault-{label}")
        try:
            session = Session(server.url, server.token(BUYER)).open()
            read_latencies(session, 5)
            times = read_latencies(session, 60)  # 6 s of export rounds at 100 ms
            results[label] = (statistics.median(times), max(times))
        finally:
            server.stop()
    live_http.shutdown()
    slow_http.shutdown()
    for label, (median, worst) in results.items():
        print(f"  {label:5} collector: median {median * 1e3:.2f} ms, worst {worst * 1e3:.2f} ms")
    live = results["live"][0]
    for label in ("down", "slow"):
        median, worst = results[label]
        check(worst < 1.0, f"collector {label}: no call waited for it (worst {worst * 1e3:.1f} ms < 1 s)")
        check(median < max(3 * live, live + 0.02), f"collector {label}: median within reach of the live one")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        print("traces: one MCP draft, one trace")
        trace = traced(tmp)
        print("collector down or slow")
        collector_down(tmp)
    if trace:
        os.makedirs(os.path.dirname(OUT) or ".", exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(trace, f, indent=1)
    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
