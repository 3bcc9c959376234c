//! Procedural macros for erp-tools: `#[erp_tool]` and `#[derive(ToolArgs)]`.
//!
//! Use them through `erp_tools_core` (`use erp_tools_core::prelude::*;`), which documents
//! them in full. The crate is laid out as parse → validate → expand:
//! `attr/` (attribute grammars, one a file), `ast.rs` (models of the input), `valid/` (the safety
//! rules), `expand/` (code generation), with the name rules in the `erp-tools-internals`
//! crate (shared with the runtime's surface report).

#![warn(unreachable_pub)]

mod ast;
mod attr;
mod errors;
mod expand;
mod json;
mod valid;

use proc_macro::TokenStream;

/// Declares a tool on an `async fn` handler.
///
/// ```text
/// /// Create a DRAFT purchase order for the caller's branch.
/// #[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
/// async fn create_po_draft(ctx: &ToolContext, tx: &mut DraftTx, args: PoDraftArgs) -> Result<PoDraft, ToolError> {
///     // ...
/// }
/// ```
///
/// Keys:
///
/// - `module = ".."` (required): the namespace, a snake_case name; the tool is named
///   `{module}_{fn name}`.
/// - `tier = "read" | "draft"` (required): there is no posting tier; posting, approving,
///   sending and cancelling belong to a person in the ERP.
/// - `scopes = [".."]` (required, non-empty): scopes the caller's token must hold, each
///   `module:action`.
/// - `title = ".."`: defaults to the function name in words.
/// - `name = ".."`: overrides the tool name; must start with `{module}_` and match
///   `^[a-zA-Z0-9_-]{1,64}$`.
/// - `example = r#"{..}"#`: an example call (a JSON object), checked against the schema
///   when the registry is built and appended to the description.
/// - `destructive = true`: the tool removes or overwrites data (draft tools only).
/// - `limit = "<path> <= <number>"`, repeatable: a hard value limit, e.g.
///   `limit = "lines[].qty <= 1000"`.
/// - `crate = ".."`: the path erp-tools-core is reached by, when it is not a dependency
///   of the crate under its own name (a crate re-exporting it:
///   `crate = "my_reexport::erp_tools_core"`), as serde's `#[serde(crate = "..")]`.
///   Every path the expansion writes starts there.
///
/// The doc comment is the description (required). Parameters, in order: `&ToolContext`;
/// then `&ReadDb` (read, optional) or `&mut DraftTx` (draft, required); then the
/// arguments type by value (required for draft tools, which must carry `client_ref: String`;
/// a read tool without it takes no arguments). The return type is `Result<T, ToolError>`
/// with `T: Serialize + JsonSchema`.
///
/// The function is kept as written; a hidden marker type with the function's name
/// implements `ErpTool`, so `ToolRegistry::builder().tool::<create_po_draft>()` registers it.
#[proc_macro_attribute]
pub fn erp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(attr.into(), item.into()).into()
}

/// Declares a tool argument type: `#[derive(Deserialize, ToolArgs)]`, with serde reached
/// through erp-tools-core, so the crate needs no `serde` dependency of its own.
///
/// ```text
/// #[tool_args]
/// struct PoLine { item_code: String, qty: Decimal, uom: Uom }
/// ```
///
/// serde attributes (`#[serde(rename_all = "camelCase")]`, ...) and other derives go on the
/// item as usual. A crate that depends on serde itself may write the two derives instead.
/// `#[tool_args(crate = "my_reexport::erp_tools_core")]` reaches erp-tools-core (and its
/// serde) under another path, and passes it on to the derive.
#[proc_macro_attribute]
pub fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_args(attr.into(), item.into()).into()
}

/// Declares a tool output type: `#[derive(Serialize, JsonSchema)]`, with serde and
/// schemars reached through erp-tools-core (no dependency of the crate's own).
///
/// ```text
/// #[tool_output]
/// struct PoDraft { number: String, total: Decimal }
/// ```
///
/// `#[tool_output(crate = "my_reexport::erp_tools_core")]` reaches erp-tools-core (and its
/// serde and schemars) under another path.
#[proc_macro_attribute]
pub fn tool_output(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool_output(attr.into(), item.into()).into()
}

/// Derives `ToolArgs` for a struct with named fields or an enum of unit variants.
///
/// The schema follows serde's wire names (`rename`, `rename_all`, `flatten`, `skip`);
/// field doc comments become property descriptions; `Option<T>` fields are optional.
/// The derive refuses fields a tool may never take (`branch_id`, `user_id`, ...),
/// free-form types (`serde_json::Value`, maps, floats), and prepares the draft-only
/// checks (`status`, `unit_price`, ...) that `#[erp_tool(tier = "draft")]` evaluates.
///
/// **Draft tools take only what a person may describe** (default deny): every field of a
/// draft tool's arguments, at any depth, must be a reference to master data, a quantity, a
/// unit or currency, a date asked for, a note, lines, a choice (an enum) or a line's
/// position, recognised from its name and type (in English, Indonesian and other ERPs'
/// spellings) or declared with `#[erp(kind = "..")]`:
///
/// ```text
/// #[erp(kind = "reference", of = "vendor")]  entity: String   // NetSuite's vendor
/// #[erp(kind = "quantity")]                  koli: u32
/// #[erp(kind = "choice")]                    partial_ok: bool
/// ```
///
/// A declaration never lifts a refusal (a price, a status, a company stay refused); a
/// field of no kind is a compile error on the field, saying what to declare.
///
/// **serde attributes** are an allow-list: those the schema models exactly (`rename`,
/// `rename_all`, `flatten`, `skip`, `skip_deserializing`) or that do not change what is
/// read (`deny_unknown_fields`, `skip_serializing_if`, `serialize_with`, `bound`, ...).
/// Every other one is refused with what to write instead: tagged and untagged enums,
/// `with`/`deserialize_with`, `from`/`try_from`, `transparent`, `alias`, `default` on a
/// field the schema marks required (make it `Option<T>`), and attributes not known yet.
///
/// **Units and currencies**: a field whose wire name contains a unit or currency word
/// anywhere (`uom`, `order_uom`, `uomCode`, `currency_code`, `baseunit`, `ccy`, ...) is
/// refused as free text or an object; one whose last word is the unit word must be an
/// enum (checked on what the type is, so a `type Code = String` alias is caught too).
///
/// **Bounds** on a field, with `#[erp(..)]`, stated in the property's description and
/// enforced server-side:
///
/// ```text
/// #[erp(positive, max = 10000)]              qty: Decimal        // more than 0, at most 10000
/// #[erp(min = 0, max = 100)]                 discount: Option<u8>
/// #[erp(len = 3..=12, pattern = "V-[0-9]+")] vendor_code: String // the whole text must match
/// #[erp(len = 1..=50)]                       lines: Vec<Line>    // 1 to 50 items
/// ```
///
/// `min`/`max`/`positive` take plain decimal literals and apply to numbers (each item of
/// a list); `len` takes `a..=b`, `a..`, `..=b` or `n` and applies to a text's characters or
/// a list's items; `pattern` is a regular expression, checked at compile time. A bound
/// that does not fit the field's type, or an inconsistent one, is a compile error.
///
/// **`#[erp(header = "..")]`** on a field: MCP clients of protocol `2026-07-28` or later
/// also send the value in the HTTP header `Mcp-Param-{name}` (the MCP schema's
/// `x-mcp-header`, SEP-2243), so a gateway can route or rate-limit on it without reading
/// the body; the server refuses a request whose header is missing or differs from the
/// body (HTTP 400, JSON-RPC `-32020`) before the tool runs. The name must be an HTTP
/// token, unique in the struct case-insensitively, on a required text, number, enum or
/// boolean field; anything else is a compile error:
///
/// ```text
/// #[erp(header = "Warehouse")] warehouse_code: String  // sent as Mcp-Param-Warehouse
/// ```
///
/// **`#[erp(crate = "..")]`** on the type: the path erp-tools-core is reached by when it
/// is not a dependency under its own name, as serde's `#[serde(crate = "..")]`:
///
/// ```text
/// #[derive(Deserialize, ToolArgs)]
/// #[erp(crate = "my_reexport::erp_tools_core")]
/// struct QuoteArgs { item_code: String }
/// ```
#[proc_macro_derive(ToolArgs, attributes(serde, erp))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => expand::derive(&input).into(),
        Err(e) => e.to_compile_error().into(),
    }
}
