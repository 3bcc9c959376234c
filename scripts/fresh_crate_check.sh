#!/usr/bin/env bash
# The newcomer's path, as CI proof: scratch crates outside the workspace (each with its own
# [workspace] table), with exactly the dependency block and the src/main.rs of a README or guide
# section (erp-tools-core taken by path instead of from crates.io), are built and driven
# with the official Python MCP client:
#
# - the README's "A complete server" (fresh-erp, stdio): tools/list, a draft call, its replay, a read;
# - the guide's "A remote-draft server of your own" (guide/src/drafts.md; fresh-remote, streamable HTTP) against the REST
#   ERP fixture (tests/src/bin/rest_erp.rs): scripts/fresh_remote_check.py.
#
# Usage: scripts/fresh_crate_check.sh   (needs python3 with PyPI `mcp`)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# fresh_crate <markdown file> <heading> <crate name>: target/<crate name>/ from that
# section of the README or a guide chapter, built.
fresh_crate() {
  local dir=$root/target/$3
  rm -rf "$dir"
  mkdir -p "$dir/src"
  python3 - "$root/$1" "$2" "$dir" "$3" "$root/erp-tools-core" <<'PY'
import re, sys
readme, heading, out, name, core = sys.argv[1:]
text = open(readme).read()
level = heading.split(" ")[0]
section = text.split(f"\n{heading}\n", 1)[1]
section = re.split(r"\n#{1,%d} " % len(level), section, maxsplit=1)[0]
toml = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
rust = re.search(r"```rust[^\n]*\n(.*?)```", section, re.S).group(1)
line = 'erp-tools-core = "0.1"'
assert line in toml, f"{readme}: the dependency block no longer has `{line}`"
toml = toml.replace(line, f'erp-tools-core = {{ path = "{core}" }}')
open(f"{out}/Cargo.toml", "w").write(
    f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
    "# Outside the erp-tools workspace, as a new user's crate is.\n[workspace]\n\n" + toml)
open(f"{out}/src/main.rs", "w").write(rust)
print(f"{name}: dependencies as in {readme}:\n" + toml)
print(f"{name}: src/main.rs has {len(rust.splitlines())} lines")
PY
  # Same versions as the workspace (and no registry look-ups beyond it); cargo prunes the
  # rest.
  cp "$root/Cargo.lock" "$dir/Cargo.lock"
  # The workspace's target folder: dependencies resolved to the same versions and features
  # are reused, the rest (this crate's own feature set) is built here.
  (cd "$dir" && CARGO_TARGET_DIR="$root/target" cargo build --quiet)
}

fresh_crate README.md "## A complete server" fresh-erp

python3 - "$root/target/debug/fresh-erp" <<'PY'
import asyncio, os, subprocess, sys, tempfile
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

binary = sys.argv[1]
work = tempfile.mkdtemp()
token = subprocess.run([binary, "token"], check=True, capture_output=True, text=True,
                       cwd=work).stdout.strip()
failures = []

def check(cond, what):
    print(("  ok   " if cond else "  FAIL ") + what)
    if not cond:
        failures.append(what)

DRAFT = {"vendor_code": "V-00231", "needed_by": "2030-01-15", "client_ref": "first-1",
         "note": None, "lines": [{"item_code": "BRG-0042", "qty": "2", "uom": "BOX"}]}

async def main():
    params = StdioServerParameters(command=binary, env=dict(os.environ, MY_ERP_TOKEN=token),
                                   cwd=work)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            print(f"tools/list: {names}")
            check(names == ["purchasing_create_po_draft", "purchasing_get_po"], "both tools listed")
            first = await session.call_tool("purchasing_create_po_draft", DRAFT)
            text = first.content[0].text
            print(f"draft: {text}")
            check(not first.is_error and text == "Draft PO-2026-0001 for V-00231: 1 line(s), total "
                  "84000 IDR; not sent to the vendor.", "the draft reads as its ModelText")
            check(first.structured_content["po_id"] == 1 and first.structured_content["replayed"] is False,
                  "structuredContent keeps the internal id")
            again = await session.call_tool("purchasing_create_po_draft", DRAFT)
            check(again.structured_content["replayed"] is True, "the retry is replayed")
            read = await session.call_tool("purchasing_get_po", {"number": "PO-2026-0001"})
            print(f"read: {read.content[0].text}")
            check(not read.is_error and '"total": "84000"' in read.content[0].text,
                  "the read without ModelText answers as JSON")

asyncio.run(main())
print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
PY

fresh_crate guide/src/drafts.md "## A remote-draft server of your own" fresh-remote
cargo build --quiet -p erp-tools-tests --bin rest_erp
python3 scripts/fresh_remote_check.py "$root/target/debug/fresh-remote" "$root/target/debug/rest_erp"
