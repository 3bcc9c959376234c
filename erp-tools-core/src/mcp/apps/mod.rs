//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): interactive cards a chat
//! host shows with a tool's result, in a sandboxed iframe.
//!
//! - [`DRAFT_CARD`]: the drafted document (vendor, lines, prices, total, "draft: a person
//!   must submit it", the replay state, links to the review console and the ERP). A tool
//!   opens it when the registry links it:
//!   `ToolRegistry::builder().card::<create_po_draft>(DRAFT_CARD)`.
//! - [`APPROVAL_CARD`]: an action waiting for approval, with Approve / Reject
//!   ([`McpApps::approvals`]). The decision tools are listed with
//!   `_meta.ui.visibility: ["app"]` so hosts keep them from the model; visibility is not
//!   authorisation: every decision is authorised here as the review console's are.
//!
//! A host that does not declare the extension sees exactly what it saw without apps: no
//! `_meta.ui` on tools, no app tools, the same text and structured content.

#[cfg(feature = "agent")]
mod approvals;
mod cards;
#[cfg(feature = "agent")]
mod decisions;
mod host;
mod links;
mod resources;
mod serve;
mod tools;

pub use self::cards::{APPROVAL_CARD, CARD_CSP, CARD_MIME, DRAFT_CARD, EXTENSION_ID, card_html};
#[cfg(feature = "agent")]
pub use self::decisions::{APPROVE_TOOL, REJECT_TOOL, SHOW_TOOL, approval_view};
pub use self::links::McpApps;
pub(super) use self::resources::{list_resource_templates, list_resources, read_resource};
pub(super) use self::serve::{app_call, declared, finish, listed, served_cards};
pub use self::tools::LINKS_META_KEY;
