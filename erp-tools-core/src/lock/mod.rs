//! The tool surface as a reviewed artifact: a lock file and its fingerprint.
//!
//! What a model may do is the surface a registry compiles: every module's description and
//! every tool's name, module, tier, scopes, description (an instruction to the model),
//! argument schema per target, output schema, annotations, card and the opt-ins a team
//! declared. A one-line change to a doc comment changes it. [`SurfaceLock`] writes it in
//! a stable, line-oriented text a reviewer reads and `git diff` shows line by line;
//! [`assert_matches_lock`] (for a team's own test suite) fails when the compiled surface
//! differs from the committed lock, printing what changed tool by tool; the
//! [`Fingerprint`] (a SHA-256 of the lock) names the surface where a client, an audit row
//! or a dashboard can see it.
//!
//! ```
//! # use erp_tools_core::prelude::*;
//! # #[tool_args]
//! # struct StockArgs { /// Item code, e.g. BRG-0042
//! #   item_code: String }
//! # #[tool_output]
//! # struct Stock { /// On hand
//! #   on_hand: Decimal }
//! # /// Get stock on hand of one item in the caller's branch.
//! # #[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
//! # async fn get_stock(ctx: &ToolContext, args: StockArgs) -> Result<Stock, ToolError> {
//! #     Ok(Stock { on_hand: Decimal::ZERO })
//! # }
//! use erp_tools_core::ToolRegistry;
//! use erp_tools_core::lock::SurfaceLock;
//!
//! let registry = ToolRegistry::builder()
//!     .module("inventory", "Stock per warehouse. Read only.")
//!     .tool::<get_stock>()
//!     .build()?;
//! let lock = SurfaceLock::new(&registry);
//! let text = lock.to_text();
//! assert!(text.contains("\ntool inventory_get_stock\n"));
//! // The text reads back as the same surface, with the same fingerprint.
//! let read = SurfaceLock::parse(&text).expect("a lock");
//! assert!(read.diff(&lock).is_empty());
//! assert_eq!(read.fingerprint(), *registry.fingerprint());
//! # Ok::<(), erp_tools_core::RegistryError>(())
//! ```

mod check;
mod diff;
mod text;

use std::fmt;

use serde_json::Value;

use crate::registry::{RegisteredTool, ToolRegistry};
use crate::schema::Target;

pub use check::{LOCK_UPDATE_VAR, LockMismatch, assert_matches_lock, check_lock};
pub use diff::Change;
pub use text::LockParseError;

/// The `_meta` key under which the MCP server serves the surface's fingerprint, in
/// `tools/list` and `server/discover` results.
pub const FINGERPRINT_META_KEY: &str = "erp-tools/surface";

/// The hash of a lock (`sha256:` and 64 hexadecimal digits): the same for the same
/// surface on every machine, different when anything in the lock differs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of a lock's tool blocks (its text after the header).
    fn of(body: &str) -> Fingerprint {
        use sha2::Digest as _;
        Fingerprint(format!(
            "sha256:{}",
            hex::encode(sha2::Sha256::digest(body.as_bytes()))
        ))
    }

    /// `sha256:` and the hash in hexadecimal.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hexadecimal digits, for a person to compare at a glance.
    pub fn short(&self) -> &str {
        let hex = self.0.strip_prefix("sha256:").unwrap_or(&self.0);
        &hex[..hex.len().min(12)]
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One entry of a lock: a module or a tool, with its fields in a fixed order. A field is
/// a single line (`tier draft`) or a block of lines (a description, a schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `module` or `tool`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// `(key, value)`; a value with line breaks is written as a block.
    pub fields: Vec<(String, String)>,
}

impl Entry {
    fn new(kind: &'static str, name: &str) -> Entry {
        Entry {
            kind,
            name: name.to_string(),
            fields: Vec::new(),
        }
    }

    /// Adds a field; trailing line breaks are dropped (the text keeps lines, not them).
    fn field(mut self, key: &str, value: impl Into<String>) -> Entry {
        let mut value = value.into();
        value.truncate(value.trim_end_matches('\n').len());
        self.fields.push((key.to_string(), value));
        self
    }

    /// The entry's label in a diff: `tool purchasing_create_po_draft`.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.kind, self.name)
    }
}

/// The tool surface of a registry, as the lock file writes it: module descriptions and
/// tools, each with every field a reviewer signs off on. See the [module](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SurfaceLock {
    entries: Vec<Entry>,
}

impl SurfaceLock {
    /// The surface `registry` compiles.
    pub fn new(registry: &ToolRegistry) -> SurfaceLock {
        let mut entries = Vec::new();
        for ns in registry.namespaces() {
            entries.push(Entry::new("module", ns.name).field("description", &ns.description));
        }
        for tool in registry.tools() {
            entries.push(tool_entry(tool));
        }
        SurfaceLock { entries }
    }

    /// The lock as text: a comment header, the fingerprint, then one block per module
    /// and per tool. Stable: the same registry writes the same bytes.
    pub fn to_text(&self) -> String {
        text::write(&self.entries)
    }

    /// Reads a lock written by [`to_text`](Self::to_text) (the header's fingerprint is not
    /// trusted: it is computed again from the blocks).
    pub fn parse(text: &str) -> Result<SurfaceLock, LockParseError> {
        text::parse(text).map(|entries| SurfaceLock { entries })
    }

    /// The SHA-256 of the lock's blocks.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(&text::body(&self.entries))
    }

    /// What changed from this lock (the committed one) to `compiled`, entry by entry:
    /// empty when they are the same surface.
    pub fn diff(&self, compiled: &SurfaceLock) -> Vec<Change> {
        diff::diff(&self.entries, &compiled.entries)
    }

    /// The names of the tools in the lock.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|e| e.kind == "tool")
            .map(|e| e.name.as_str())
    }
}

/// A tool's entry: the fields in the order the lock writes them.
fn tool_entry(tool: &RegisteredTool) -> Entry {
    let def = tool.def();
    let listed = crate::export::mcp_tool(tool);
    let mut entry = Entry::new("tool", tool.name())
        .field("module", def.module())
        .field("tier", def.tier().as_str())
        .field("scopes", def.scopes().join(" "))
        .field("title", def.title().trim())
        .field("annotations", compact(&listed["annotations"]))
        .field("card", tool.card().unwrap_or(""))
        .field("opt_ins", opt_ins(tool))
        .field("description", tool.description());
    for target in Target::ALL {
        entry = entry.field(
            &format!("schema {}", target_key(target)),
            pretty(tool.input_schema(target)),
        );
    }
    entry.field("output_schema", pretty(tool.output_schema()))
}

/// The fields the tool takes although a rule refuses them, each allowed by the team's
/// declaration (`#[erp(allow = "..", reason = "..")]`): one line each, `path category:
/// reason`; empty when there is none.
fn opt_ins(tool: &RegisteredTool) -> String {
    let mut props = Vec::new();
    crate::report::fields(tool.schema(), "", &mut props);
    let mut lines: Vec<String> = props
        .iter()
        .filter_map(|(path, p)| {
            p.opt_in
                .as_ref()
                .map(|o| format!("{path} {}: {}", o.category, o.reason))
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

fn target_key(target: Target) -> &'static str {
    match target {
        Target::OpenAi => "openai",
        Target::Anthropic => "anthropic",
        Target::Mcp => "mcp",
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
