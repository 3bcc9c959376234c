"""Metrics against a real Prometheus: Debian's `prometheus` scrapes the example's
`/metrics` every second during a short load (reads, drafts, a replay, a denial), and its
query API must return the expected series with the expected labels.

    python3 scripts/otel/prometheus_check.py target/debug/examples/distributor [prometheus]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_http import Server, Session, free_port  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/examples/distributor"
PROMETHEUS = sys.argv[2] if len(sys.argv) > 2 else (shutil.which("prometheus") or "/usr/bin/prometheus")
BUYER = "purchasing:read,purchasing:draft,inventory:read"
LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "distributor", "tools.lock")
with open(LOCK) as lock_file:
    PINNED = next(line.split()[1] for line in lock_file if line.startswith("fingerprint "))
failures = []


def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)


def draft(ref):
    return {"vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": ref, "note": None,
            "lines": [{"item_code": "BRG-0042", "qty": "5", "uom": "BOX"}]}


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = json.load(resp)
    return body["data"]["result"] if body.get("status") == "success" else []


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # 50 calls at once per caller: the buyer's load fits, a third caller's burst does not.
        server = Server(BIN, tmp, {"ERP_TOOLS_RATE_LIMIT": "60,50"}, "metrics")
        prom_port = free_port()
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: erp-tools
    metrics_path: /metrics
    static_configs:
      - targets: ["127.0.0.1:{server.port}"]
""")
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                                 f"--storage.tsdb.path={tmp}/tsdb",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            buyer = Session(server.url, server.token(BUYER)).open()
            warehouse = Session(server.url, server.token("inventory:read")).open()
            started = time.time()
            for i in range(40):  # a short load, bounded in count
                buyer.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": None})
                if i % 8 == 0:
                    buyer.call("purchasing_create_po_draft", draft(f"prom-{i}"))
            buyer.call("purchasing_create_po_draft", draft("prom-0"))  # a replay
            warehouse.call("purchasing_create_po_draft", draft("prom-x"))  # a denial
            buyer.call("inventory_get_stock", {"item_code": "BRG-0042", "warehouse_code": 7})
            hasty = Session(server.url, server.token("inventory:read", user="9")).open()
            refused = 0
            for _ in range(55):
                status, _ = hasty.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "inventory_get_stock", "arguments": {"item_code": "BRG-0042", "warehouse_code": None}}})
                refused += status == 429
            check(refused >= 1, f"a caller over its rate limit is refused 429 ({refused} of 55)")
            print(f"  load: 103 calls in {time.time() - started:.1f} s")

            def up():
                try:
                    r = query(prom_port, 'up{job="erp-tools"}')
                    return r and r[0]["value"][1] == "1" and query(
                        prom_port, "erp_tools_rate_limited_total > 0")
                except OSError:
                    return False

            deadline = time.time() + 60
            while time.time() < deadline and not up():
                time.sleep(0.5)
            check(bool(up()), "Prometheus scrapes the example's /metrics (up == 1)")
            calls = query(prom_port, "erp_tools_calls_total")
            seen = {(s["metric"].get("gen_ai_tool_name"), s["metric"].get("erp_tools_outcome")):
                    float(s["value"][1]) for s in calls}
            print("  erp_tools_calls_total:", json.dumps({f"{t}/{o}": v for (t, o), v in sorted(seen.items())}))
            check(seen.get(("inventory_get_stock", "ok"), 0) >= 40, "40 reads counted ok")
            check(seen.get(("purchasing_create_po_draft", "ok"), 0) == 5, "5 drafts counted ok")
            check(seen.get(("purchasing_create_po_draft", "replayed"), 0) == 1, "the replay counted")
            check(seen.get(("purchasing_create_po_draft", "denied"), 0) == 1, "the denial counted")
            check(seen.get(("inventory_get_stock", "invalid"), 0) == 1, "the invalid call counted")
            hist = query(prom_port, 'mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"}')
            check(sum(float(s["value"][1]) for s in hist) >= 48, "mcp_server_operation_duration_seconds counts every call")
            p99 = query(prom_port, "histogram_quantile(0.99, sum by (le) (mcp_server_operation_duration_seconds_bucket))")
            check(bool(p99), "histogram_quantile over the duration buckets answers")
            if p99:
                print(f"  p99 call duration: {float(p99[0]['value'][1]) * 1e3:.2f} ms")
            limited = query(prom_port, "erp_tools_rate_limited_total")
            check(bool(limited) and float(limited[0]["value"][1]) == refused,
                  "erp_tools_rate_limited_total counts the 429s")
            for series in ("erp_tools_replays_total", "erp_tools_denials_total", "erp_tools_rate_limited_total",
                           "erp_tools_audit_queue_depth", "erp_tools_audit_batch_size_count",
                           "erp_tools_idempotency_pending", "erp_tools_approvals_waiting"):
                got = query(prom_port, series)
                check(bool(got), f"{series} is scraped: {[s['value'][1] for s in got]}")
            batches = query(prom_port, "erp_tools_audit_batch_size_count")
            check(bool(batches) and float(batches[0]["value"][1]) > 0, "the audit writer's batches are counted")
            surface = query(prom_port, "erp_tools_surface_info")
            check(len(surface) == 1 and surface[0]["metric"].get("fingerprint") == PINNED
                  and surface[0]["value"][1] == "1",
                  f"erp_tools_surface_info names the lock's fingerprint: {[s['metric'] for s in surface]}")
            names = query(prom_port, 'count by (__name__) ({job="erp-tools"})')
            print("  series names:", sorted(s["metric"]["__name__"] for s in names))
        finally:
            prom.terminate()
            prom.wait(timeout=20)
            server.stop()
    print(f"{len(failures)} failed" if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
