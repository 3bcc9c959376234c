#!/usr/bin/env bash
# Traces and metrics against real receivers (see the guide, guide/src/telemetry.md):
# Debian's prometheus scrapes the example's /metrics during a short load, and a loopback
# OTLP/HTTP receiver decoding with PyPI opentelemetry-proto checks one MCP draft's trace.
# Installs what is missing; reuses the debug build (the otel example is built next to the
# default one, whose binary is restored at the end).
#
#   scripts/otel/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}

if ! command -v prometheus >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null
fi
if ! python3 -c "import opentelemetry.proto.collector.trace.v1.trace_service_pb2" 2>/dev/null; then
  python3 -m pip install -q "opentelemetry-proto==1.45.2"
fi

echo "-- metrics: Prometheus scrapes the default example"
cargo build -q --example distributor
timeout 120 python3 scripts/otel/prometheus_check.py "$target/debug/examples/distributor"

echo "-- traces: the example built with --features otel, exporting to a loopback receiver"
cargo build -q --example distributor --features otel
mkdir -p "$target/otel"
cp "$target/debug/examples/distributor" "$target/otel/distributor-otel"
cargo build -q --example distributor  # the default binary back for the steps after
timeout 180 python3 scripts/otel/trace_check.py "$target/otel/distributor-otel" \
  "$target/otel/draft-trace.json"

# The guide's picture of that trace (guide/src/images/otel/draft-trace.png), made from what
# the receiver decoded: refresh it with
#   cp target/otel/draft-trace.png guide/src/images/otel/
python3 scripts/otel/waterfall.py "$target/otel/draft-trace.json" "$target/otel/draft-trace.html"
if command -v chromium >/dev/null; then
  chromium --headless --no-sandbox --hide-scrollbars --screenshot="$target/otel/draft-trace.png" \
    --window-size=1200,460 "file://$(realpath "$target/otel/draft-trace.html")" 2>/dev/null
  echo "-- the trace's picture: $target/otel/draft-trace.png"
fi
