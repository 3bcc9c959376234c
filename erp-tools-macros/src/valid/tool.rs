//! Rules on `#[erp_tool]`: the keys, their values, the doc comment and the handler's
//! signature.

use erp_tools_internals::names;
use proc_macro2::Span;
use syn::Type;

use erp_tools_internals::names::valid_key;

use super::page::check_page;
use super::signature::{Signature, check_signature};
use super::task::{TaskKind, check_task};
use super::tier::Tier;
use crate::ast::ToolFn;
use crate::attr::ToolAttr;
use crate::errors::Errors;
use crate::json;

/// Everything `#[erp_tool]` needs to generate, once the rules hold.
pub(crate) struct ToolPlan<'a> {
    /// Module (namespace).
    pub module: String,
    /// Tier.
    pub tier: Tier,
    /// Scopes.
    pub scopes: Vec<String>,
    /// Tool name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Description (the doc comment).
    pub description: String,
    /// Example call.
    pub example: Option<String>,
    /// Destructive flag.
    pub destructive: bool,
    /// `(path, max)` per limit.
    pub limits: Vec<(String, String)>,
    /// Whether the handler takes the database handle.
    pub takes_db: bool,
    /// Whether that handle is `&mut RemoteDraft` (a draft written in another system).
    pub remote: bool,
    /// The arguments type, if the handler takes one.
    pub args: Option<&'a Type>,
    /// The `T` of `Result<T, ToolError>`.
    pub output: &'a Type,
    /// A page tool's `(page_size, max_page_size)`.
    pub page: Option<(u32, u32)>,
    /// How its calls run (`task = ".."`).
    pub task: TaskKind,
    /// Whether a task taken over runs again (`rerun`, `true` unless declared `false`).
    pub rerun: bool,
    /// `crate = ".."`: the path to erp-tools-core, when not `::erp_tools_core`.
    pub krate: Option<syn::Path>,
}

const WRITE_VERBS: &[&str] = &[
    "post",
    "posting",
    "posted",
    "approve",
    "approval",
    "approved",
    "send",
    "sending",
    "cancel",
    "cancellation",
    "submit",
    "submission",
    "delete",
    "remove",
    "pay",
    "payment",
    "write",
    "update",
    "void",
    "reverse",
    "release",
    "confirm",
    "execute",
    "commit",
    "close",
    "book",
    "transfer",
];

/// Checks the attribute and the function; returns the plan when every rule holds.
pub(crate) fn check_tool<'a>(
    attr: &ToolAttr,
    f: &ToolFn<'a>,
    errors: &mut Errors,
) -> Option<ToolPlan<'a>> {
    let call_site = Span::call_site();
    let fn_name = syn::ext::IdentExt::unraw(f.ident).to_string();

    let module = match &attr.module {
        Some(lit) => {
            let m = lit.value();
            if !valid_module(&m) {
                errors.spanned(
                    lit,
                    format!(
                        "module `{m}` must be a snake_case name like `purchasing` (lower-case letters, digits and \
                         single `_`, starting with a letter, at most 32 characters)"
                    ),
                );
            }
            Some(m)
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"module") {
                errors.at(
                    call_site,
                    "missing `module`: every tool belongs to a module (its namespace), write `module = \"purchasing\"`",
                );
            }
            None
        }
    };

    let tier = match &attr.tier {
        Some(lit) => {
            let t = lit.value();
            match t.as_str() {
                "read" => Some(Tier::Read),
                "draft" => Some(Tier::Draft),
                other if WRITE_VERBS.contains(&other.to_ascii_lowercase().as_str()) => {
                    errors.spanned(
                        lit,
                        format!(
                            "tier `{other}` is not allowed: posting, approving, sending, paying and cancelling belong \
                             to a person in the ERP; expose a draft tool that prepares the document for them to \
                             review, write `tier = \"draft\"`"
                        ),
                    );
                    None
                }
                other => {
                    errors.spanned(
                        lit,
                        format!("unknown tier `{other}`; expected one of: read, draft"),
                    );
                    None
                }
            }
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"tier") {
                errors.at(
                    call_site,
                    "missing `tier`: write `tier = \"read\"` for look-ups or `tier = \"draft\"` for tools that \
                     create a draft document",
                );
            }
            None
        }
    };

    let scope_example = format!(
        "{}:{}",
        module
            .as_deref()
            .filter(|m| valid_module(m))
            .unwrap_or("purchasing"),
        match tier {
            Some(Tier::Draft) => "draft",
            _ => "read",
        }
    );
    let mut scopes = Vec::new();
    match &attr.scopes {
        Some(list) => {
            if list.items.is_empty() && list.tokens.to_string().replace(' ', "") == "[]" {
                errors.spanned(
                    &list.tokens,
                    format!(
                        "`scopes` is empty; every tool needs at least one scope the caller must hold (default \
                         deny), write `scopes = [\"{scope_example}\"]`"
                    ),
                );
            }
            for lit in &list.items {
                let s = lit.value();
                if !valid_scope(&s) {
                    errors.spanned(
                        lit,
                        format!(
                            "scope `{s}` is malformed; write `module:action` like `purchasing:read`: letters, digits, \
                             `_`, `-` or `.` in each part, parts separated by `:`, no spaces"
                        ),
                    );
                } else if scopes.contains(&s) {
                    errors.spanned(
                        lit,
                        format!("scope `{s}` is listed twice; list each scope once"),
                    );
                }
                scopes.push(s);
            }
            if tier == Some(Tier::Draft)
                && !scopes.is_empty()
                && scopes.iter().all(|s| names::is_read_scope(s))
            {
                errors.spanned(
                    &list.tokens,
                    format!(
                        "a draft tool guarded only by read scopes ({}) lets every reader create drafts; require a \
                         scope for the write, write `scopes = [\"{scope_example}\"]`",
                        scopes.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"scopes") {
                errors.at(
                    call_site,
                    format!(
                        "missing `scopes`: every tool needs at least one scope the caller's token must hold \
                         (default deny), write `scopes = [\"{scope_example}\"]`"
                    ),
                );
            }
        }
    }

    let name = match (&attr.name, &module) {
        (Some(lit), Some(m)) => {
            let n = lit.value();
            let prefix = format!("{m}_");
            if !valid_key(&n) {
                errors.spanned(
                    lit,
                    format!("tool name `{n}` must match ^[a-zA-Z0-9_-]{{1,64}}$ (safe on every provider), e.g. `{prefix}{fn_name}`"),
                );
            } else if n != *m && (!n.starts_with(&prefix) || n.len() == prefix.len()) {
                errors.spanned(
                    lit,
                    format!("tool name `{n}` must start with the module prefix `{prefix}`, e.g. `{prefix}{fn_name}`"),
                );
            }
            n
        }
        (None, Some(m)) => {
            let n = format!("{m}_{fn_name}");
            if !valid_key(&n) {
                errors.spanned(
                    f.ident,
                    format!(
                        "tool name `{n}` is longer than 64 characters (or has characters outside [a-zA-Z0-9_-]); \
                         shorten the fn name or set `name = \"{m}_...\"`"
                    ),
                );
            }
            n
        }
        (_, None) => String::new(),
    };

    if let Some(lit) = &attr.title
        && lit.value().trim().is_empty()
    {
        errors.spanned(
            lit,
            "`title` is empty; write a short human-readable title or leave the key out",
        );
    }
    let title = attr
        .title
        .as_ref()
        .map(|l| l.value().trim().to_string())
        .unwrap_or_else(|| names::humanise(&fn_name));

    if let Some(lit) = &attr.example
        && let Err(e) = json::check_object(&lit.value())
    {
        errors.spanned(lit, format!("`example` is not a JSON object: {e}; write `example = r#\"{{\"field\": \"value\"}}\"#`"));
    }

    let mut limits = Vec::new();
    for lit in &attr.limits {
        match parse_limit(&lit.value()) {
            Some(l) => limits.push(l),
            None => errors.spanned(
                lit,
                format!(
                    "limit `{}` is malformed; write `<path> <= <number>`, e.g. `lines[].qty <= 1000` or \
                     `amount <= 5000000` (path segments are field names, `[]` after a list)",
                    lit.value()
                ),
            ),
        }
    }

    if let (Some(b), Some(Tier::Read)) = (&attr.destructive, tier)
        && b.value
    {
        errors.spanned(
            b,
            "a read tool cannot be destructive: it only looks things up, remove `destructive = true` or make it a \
             draft tool",
        );
    }

    if f.doc.trim().is_empty() {
        let what = if f.original.attrs.iter().any(|a| a.path().is_ident("doc")) {
            "an empty doc comment"
        } else {
            "no doc comment"
        };
        errors.spanned(
            f.ident,
            format!(
                "tool `{fn_name}` has {what}; the doc comment is the description the model reads, write \
                 `/// <what the tool does>` above the fn, first sentence first"
            ),
        );
    }

    let Signature {
        takes_db,
        remote,
        args,
        output,
        page: page_param,
    } = check_signature(f, tier, errors);
    let page = check_page(attr, tier, output, page_param, errors);
    let (task, rerun) = check_task(attr, tier, errors);

    if !errors.is_empty() {
        return None;
    }
    Some(ToolPlan {
        module: module?,
        tier: tier?,
        scopes,
        name,
        title,
        description: f.doc.clone(),
        example: attr.example.as_ref().map(|l| l.value().trim().to_string()),
        destructive: attr.destructive.as_ref().is_some_and(|b| b.value),
        limits,
        takes_db,
        remote,
        args,
        output: output?,
        page,
        task,
        rerun,
        krate: attr.krate.clone(),
    })
}

fn valid_module(m: &str) -> bool {
    let b = m.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && !m.ends_with('_')
        && !m.contains("__")
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

fn valid_scope(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        })
}

/// Parses `"<path> <= <decimal>"`.
pub(super) fn parse_limit(text: &str) -> Option<(String, String)> {
    let (path, max) = text.split_once("<=")?;
    let (path, max) = (path.trim(), max.trim());
    let segment_ok = |seg: &str| {
        let name = seg.strip_suffix("[]").unwrap_or(seg);
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if path.is_empty() || !path.split('.').all(segment_ok) {
        return None;
    }
    let (int, frac) = match max.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (max, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    Some((path.to_string(), max.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_grammar() {
        assert_eq!(
            parse_limit("lines[].qty <= 1000"),
            Some(("lines[].qty".into(), "1000".into()))
        );
        assert_eq!(
            parse_limit("amount<=5000000.50"),
            Some(("amount".into(), "5000000.50".into()))
        );
        for bad in [
            "lines[].qty < 1000",
            "<= 5",
            "qty <= ",
            "qty <= -1",
            "qty <= 1e3",
            "li nes <= 3",
            "a..b <= 1",
            "a[0] <= 1",
        ] {
            assert_eq!(parse_limit(bad), None, "{bad}");
        }
    }

    #[test]
    fn module_and_scope_shapes() {
        assert!(
            valid_module("purchasing") && valid_module("sales2") && valid_module("stock_moves")
        );
        for bad in [
            "Purchasing",
            "2sales",
            "stock-moves",
            "a__b",
            "trailing_",
            "",
        ] {
            assert!(!valid_module(bad), "{bad}");
        }
        assert!(
            valid_scope("purchasing:read")
                && valid_scope("purchasing:po.draft")
                && valid_scope("a:b:c")
        );
        for bad in ["purchasing", "purchasing: read", ":read", "purchasing:", ""] {
            assert!(!valid_scope(bad), "{bad}");
        }
    }
}
