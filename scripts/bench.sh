#!/usr/bin/env bash
# Runs every erp-tools benchmark (see BENCHMARKS.md) and writes the results to
# target/bench-results/ (summary.md, one JSON per benchmark binary, machine.txt).
#
#   scripts/bench.sh           the full run: release builds, criterion benchmarks 1-3,
#                              the concurrency storm, compile time and memory binaries,
#                              the audit chain's cost, the store at a year's size, one
#                              read over HTTP against bare rmcp (needs Debian's wrk), and
#                              pages with sealed cursors and the result budget
#   ERP_TOOLS_TRYTON=1 scripts/bench.sh   also benchmark 7 (a draft into a real Tryton)
#   scripts/bench.sh --smoke   compile every benchmark and execute it once with tiny sizes,
#                              on debug builds (for CI); results in target/bench-results/smoke/
#
# PostgreSQL benchmarks (2 on PostgreSQL, 4) need ERP_TOOLS_PG_URL, e.g.
#   ERP_TOOLS_PG_URL=postgres://root@127.0.0.1:5432/test scripts/bench.sh
# Without it they print "skipped: ERP_TOOLS_PG_URL not set" and the rest still runs.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
case "${1:-}" in
  "") ;;
  --smoke) mode=smoke ;;
  *) echo "usage: scripts/bench.sh [--smoke]" >&2; exit 2 ;;
esac

target=${CARGO_TARGET_DIR:-target}
if [[ $mode == smoke ]]; then
  out=$target/bench-results/smoke
  bin=$target/debug
else
  out=$target/bench-results
  bin=$target/release
fi
mkdir -p "$out"

machine() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "cores (nproc): $(nproc)"
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|L3 cache)' || true
  free -g | sed -n 1,2p
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  rustc --version
  echo "ERP_TOOLS_PG_URL: ${ERP_TOOLS_PG_URL:-(not set)}"
}
machine | tee "$out/machine.txt"
start=$(date +%s)

if [[ $mode == smoke ]]; then
  # Criterion benchmarks in test mode: each benchmark function runs once; selecting the
  # benches also builds the benchmark binaries. Whole-workspace builds with tests and
  # benches selected resolve features as the README's `cargo test --workspace` does, so
  # after it (as in CI) nothing but the benchmark crate is compiled again; the second
  # command builds the example as that test command does (a no-op after it).
  cargo test --workspace --benches
  cargo test --workspace --no-run
  "$bin/concurrency" --agents 4 --calls 20 --reps 1 --json "$out/concurrency.json"
  "$bin/memory" --binary "$bin/examples/distributor" --calls 200 --clients 4 --reps 1 \
    --json "$out/memory.json"
  "$bin/interleaved" --read-rounds 5 --sqlite-draft-rounds 3 --pg-draft-rounds 3 \
    --concurrency-rounds 1 --callers 4 --calls-per-caller 3 \
    --interference-rounds 1 --interference-reads 5 --interference-lines 20 \
    --json "$out/interleaved.json"
  "$bin/compile_time" --tools 3 --reps 1 --check --json "$out/compile_time.json"
  "$bin/audit_chain" --callers 4 --calls 10 --rounds 1 --drafts --json "$out/audit_chain.json"
  # The growth benchmark at a small size (the full size is the default of a full run).
  "$bin/growth" --audit-rows 5000 --keys 500 --runs 100 --samples 3 --json "$out/growth.json"
  "$bin/run_log" --runs 2 --steps 3 --rounds 1 --json "$out/run_log.json"
  # The HTTP benchmark: two connection counts, 1 s each; proves it runs (needs wrk).
  "$bin/http_read" --smoke --json "$out/http_read.json" > /dev/null
  # Pages and the result budget on a small vendor table (the full run seeds 520 000).
  "$bin/pages" --vendors 3000 --deep-page 40 --samples 20 --json "$out/pages.json"
  "$bin/report" "$out" > /dev/null
  if [[ ${ERP_TOOLS_TRYTON:-} == 1 ]]; then
    "$bin/tryton_draft" --rounds 2 --warmup 0 | tail -1 > "$out/tryton_draft.json"
  else
    echo "tryton_draft: skipped (ERP_TOOLS_TRYTON=1 runs it against scripts/tryton/'s Tryton)"
  fi
else
  cargo build --release -p erp-tools-benches --bins --benches
  cargo build --release -p erp-tools-core --example distributor
  rm -rf "$target/criterion"
  cargo bench -p erp-tools-benches --benches
  "$bin/interleaved" --json "$out/interleaved.json"
  "$bin/concurrency" --json "$out/concurrency.json"
  "$bin/memory" --binary "$bin/examples/distributor" --json "$out/memory.json"
  "$bin/compile_time" --json "$out/compile_time.json"
  "$bin/audit_chain" --json "$out/audit_chain.json"
  "$bin/audit_chain" --drafts --json "$out/audit_chain_drafts.json"
  "$bin/growth" --json "$out/growth.json"
  "$bin/run_log" --json "$out/run_log.json"
  "$bin/http_read" --json "$out/http_read.json" > /dev/null
  "$bin/pages" --json "$out/pages.json"
  "$bin/report" "$out"
  # Benchmark 7 needs a real Tryton (scripts/tryton/start.sh: Python, PyPI packages).
  if [[ ${ERP_TOOLS_TRYTON:-} == 1 ]]; then
    "$bin/tryton_draft" | tee "$out/tryton_draft.txt" | tail -1 > "$out/tryton_draft.json"
  else
    echo "tryton_draft: skipped (ERP_TOOLS_TRYTON=1 runs it against scripts/tryton/'s Tryton)"
  fi
fi
echo "bench.sh $mode: done in $(( $(date +%s) - start )) s; results in $out"
