"""Renders the draft's trace that trace_check.py saved (as the OTLP receiver decoded it)
as a waterfall page, one bar a span under its parent, with each span's attributes; a
headless Chromium turns it into the guide's picture (scripts/otel/check.sh does both).

    python3 scripts/otel/waterfall.py target/otel/draft-trace.json target/otel/draft-trace.html
    chromium --headless --screenshot=docs.png --window-size=1200,460 target/otel/draft-trace.html
"""

import html
import json
import sys

SHOWN = ("mcp.method.name", "gen_ai.operation.name", "gen_ai.tool.name", "jsonrpc.request.id",
         "mcp.protocol.version", "mcp.session.id", "erp_tools.tier", "erp_tools.outcome",
         "erp_tools.run_id", "enduser.id", "http.request.method", "http.response.status_code")


def ordered(spans, parent, depth=0):
    for s in sorted((s for s in spans if s["parent_id"] == parent), key=lambda s: s["start"]):
        yield depth, s
        yield from ordered(spans, s["span_id"], depth + 1)


def main(src, out):
    trace = json.load(open(src))
    spans = trace["spans"]
    t0 = min(s["start"] for s in spans)
    total = max(s["end"] for s in spans) - t0
    rows = []
    for depth, s in ordered(spans, trace["caller_span"]):
        left = 100 * (s["start"] - t0) / total
        width = max(0.4, 100 * (s["end"] - s["start"]) / total)
        attrs = ", ".join(f"{k}={s['attributes'][k]}" for k in SHOWN if k in s["attributes"])
        rows.append(f"""<div class="row"><div class="name" style="padding-left:{depth * 18 + 6}px">
{html.escape(s['name'])}<div class="attrs">{html.escape(attrs)}</div></div>
<div class="lane"><div class="bar d{depth}" style="left:{left:.2f}%;width:{width:.2f}%"></div>
<span class="ms" style="left:calc({left + width:.2f}% + 6px)">{(s['end'] - s['start']) / 1e6:.2f} ms</span></div></div>""")
    trace_id = spans[0]["trace_id"]
    page = f"""<!doctype html><meta charset="utf-8"><title>One MCP draft, one trace</title>
<style>
body {{ font: 13px system-ui, sans-serif; margin: 18px; color: #1d2430; }}
h1 {{ font-size: 17px; margin: 0 0 4px; }} .sub {{ color: #5b6574; margin-bottom: 14px; }}
.row {{ display: flex; border-top: 1px solid #e4e7ec; min-height: 44px; }}
.name {{ width: 430px; padding: 6px; font-weight: 600; }}
.attrs {{ font-weight: 400; font-size: 11px; color: #5b6574; word-break: break-all; }}
.lane {{ position: relative; flex: 1; }}
.bar {{ position: absolute; top: 12px; height: 18px; border-radius: 3px; }}
.ms {{ position: absolute; top: 13px; font-size: 11px; color: #5b6574; white-space: nowrap; }}
.d0 {{ background: #6b7fd7; }} .d1 {{ background: #3fa796; }} .d2 {{ background: #e0a43a; }}
.d3 {{ background: #d3605b; }}
</style>
<h1>One MCP draft (purchasing_create_po_draft), one trace</h1>
<div class="sub">As the OTLP/HTTP receiver decoded it (opentelemetry-proto). Trace {trace_id};
the top span's parent is the caller's traceparent span {trace['caller_span']}.
No token and no argument values are exported.</div>
{''.join(rows)}
"""
    open(out, "w").write(page)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
