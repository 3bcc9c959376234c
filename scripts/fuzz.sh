#!/usr/bin/env bash
# Fuzzing with libFuzzer (libfuzzer-sys, as cargo-fuzz uses it) on the stable toolchain.
# Targets and corpora: tests/fuzz/. RELIABILITY.md gives the figures and the reasons.
#
#   scripts/fuzz.sh                         # 60 s per target
#   SECONDS_PER_TARGET=600 scripts/fuzz.sh
#   TARGETS=validate_args scripts/fuzz.sh
#   JOBS=2 SECONDS_PER_TARGET=900 scripts/fuzz.sh   # one libFuzzer worker per core
#   scripts/fuzz.sh --minimize              # shrink each corpus to the inputs that keep its
#                                           # coverage (libFuzzer -merge=1), before committing
#
# The build passes exactly the stable flags `cargo fuzz build -s none` passes (coverage
# instrumentation, no sanitizer: ASan needs nightly's -Z flags), so cargo-fuzz itself is
# not needed; with it installed, `cargo fuzz run -s none --fuzz-dir tests/fuzz <target>`
# runs the same targets. Inputs that reach new code are added to the corpus folders
# (commit them); a crash leaves its input in target/fuzz/artifacts/<target>/ and fails
# the script.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SECONDS_PER_TARGET="${SECONDS_PER_TARGET:-60}"
TARGETS="${TARGETS:-validate_args canonical_hash token_verify}"
JOBS="${JOBS:-1}"
host=$(rustc -vV | sed -n 's/^host: //p')
out=$root/target/fuzz
mkdir -p "$out"

# --target keeps the instrumentation off build scripts and proc macros (which run on the
# host and are not linked with libFuzzer), as cargo-fuzz does.
RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
-Cdebug-assertions -Coverflow-checks" \
  cargo build --release --manifest-path tests/fuzz/Cargo.toml \
    --target "$host" --target-dir "$out/build" --bins

if [ "${1:-}" = --minimize ]; then
  for target in $TARGETS; do
    corpus=$root/tests/fuzz/corpus/$target
    kept=$(mktemp -d)
    before=$(ls "$corpus" | wc -l)
    "$out/build/$host/release/$target" -merge=1 "$kept" "$corpus" >"$out/$target.merge.log" 2>&1
    # Past crashes (regression-*) and the hand-written seeds (seed-*) stay, whether or not
    # they add coverage.
    cp "$corpus"/regression-* "$corpus"/seed-* "$kept"/ 2>/dev/null || true
    rm -rf "$corpus" && mv "$kept" "$corpus" && chmod 755 "$corpus"
    echo "corpus $target: $before inputs -> $(ls "$corpus" | wc -l)"
  done
  exit 0
fi

total=0
for target in $TARGETS; do
  corpus=$root/tests/fuzz/corpus/$target
  artifacts=$out/artifacts/$target
  log=$out/$target.log
  mkdir -p "$artifacts"
  echo "-- fuzz $target for ${SECONDS_PER_TARGET}s ($JOBS job(s)), corpus $(ls "$corpus" | wc -l) inputs"
  set +e
  (cd "$out" && "$out/build/$host/release/$target" "$corpus" \
      -artifact_prefix="$artifacts/" -max_total_time="$SECONDS_PER_TARGET" \
      -print_final_stats=1 -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      $( [ "$JOBS" -gt 1 ] && echo "-fork=$JOBS" ) >"$log" 2>&1)
  status=$?
  set -e
  # Total executions: the final stats of a single worker, or the last fork status line.
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ -z "$execs" ]; then
    execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  execs=${execs:-0}
  total=$((total + execs))
  grep -E "^(stat::|Done |INFO: (Loaded|seed corpus))" "$log" || true
  if [ "$status" -ne 0 ] || grep -qE "deadly signal|panicked|SUMMARY: libFuzzer|ERROR: libFuzzer" "$log"; then
    grep -E "panicked|SUMMARY|ERROR|Test unit written" "$log" || tail -20 "$log"
    echo "fuzz $target: FAILED (exit $status); log $log, input in $artifacts/"
    exit 1
  fi
  echo "fuzz $target: $execs executions, no crash"
done
echo "fuzz: $total executions in total, no crash"
