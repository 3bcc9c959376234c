#!/usr/bin/env bash
# Builds the guide (guide/, mdBook) the way CI does: mdBook 0.5 and the link checker
# mdbook-linkcheck2 from crates.io (installed with `cargo install --locked` when missing or
# at another version; the binaries stay in ~/.cargo/bin between runs), every warning an
# error, every link inside the book checked (pages, anchors, included files). The guide's
# Rust blocks are compiled by `cargo test --workspace` (doctests of erp-tools-core).
#
# Usage: scripts/guide.sh          (the book lands in guide/book/html)
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # need <crate> <version> <binary>
  if ! "$3" --version 2>/dev/null | grep -q "$2"; then
    # A debug build: about half the compile time of a release one, and quick enough for a
    # book of this size.
    cargo install --locked --debug --quiet "$1" --version "$2" "${@:4}"
  fi
}
need mdbook 0.5.4 mdbook --no-default-features --features search
need mdbook-linkcheck2 0.13.0 mdbook-linkcheck2

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
mdbook build guide 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ] || grep -Eq "\b(WARN|ERROR|warning|error)\b" "$log"; then
  echo "guide: the book has warnings or errors (above); fix them" >&2
  exit 1
fi
echo "guide: built in guide/book/html, links checked"
