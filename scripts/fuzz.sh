#!/usr/bin/env bash
# Fuzzing with cargo-fuzz (libFuzzer) on the stable toolchain: `-s none` builds without a
# sanitizer (ASan and the other sanitizers need nightly's -Z flags), which leaves the
# coverage instrumentation (-Cpasses=sancov-module and the -Cllvm-args=-sanitizer-coverage-*
# flags, all stable) and libFuzzer itself. Targets and corpora: tests/fuzz/.
#
#   scripts/fuzz.sh              # 60 s per target
#   SECONDS_PER_TARGET=600 scripts/fuzz.sh
#   TARGETS=validate_args scripts/fuzz.sh
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`, installed here when missing).
# New inputs that reach new code are added to the corpus folders; commit them.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${SECONDS_PER_TARGET:-60}"
TARGETS="${TARGETS:-validate_args canonical_hash token_verify}"
command -v cargo-fuzz >/dev/null || cargo install -q cargo-fuzz --locked
cargo fuzz build -s none --fuzz-dir tests/fuzz
for target in $TARGETS; do
    echo "-- fuzz $target for ${SECONDS_PER_TARGET}s"
    cargo fuzz run -s none --fuzz-dir tests/fuzz "$target" "tests/fuzz/corpus/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -max_len=8192 -timeout=10 \
        2>&1 | tee "target/fuzz-$target.log" | grep -E "^(stat::|Done|==|SUMMARY|thread)" || true
    if grep -qE "^==[0-9]+== ERROR|panicked|deadly signal|SUMMARY: libFuzzer" "target/fuzz-$target.log"; then
        echo "fuzz $target found a crash: see target/fuzz-$target.log and tests/fuzz/artifacts/$target"
        exit 1
    fi
done
