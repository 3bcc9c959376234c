//! Rules on a page tool: a read tool that returns `Page<Row>` and takes `page:
//! PageRequest` last, with `page_size` / `max_page_size` within bounds.

use syn::{LitInt, Type};

use super::tier::Tier;
use crate::ast::{last_ident, type_args};
use crate::attr::ToolAttr;
use crate::errors::Errors;

/// Items a page holds unless the tool says otherwise (the runtime's `PageSpec::DEFAULT`).
const DEFAULT_SIZE: u32 = 50;
/// The bound on `page_size` unless the tool says otherwise.
const DEFAULT_MAX: u32 = 200;
/// The largest `max_page_size` a tool may declare (the runtime's `PageSpec::LIMIT`).
const LIMIT: u32 = 1000;

/// Checks a page declaration; returns `(page_size, max_page_size)` for a page tool.
pub(super) fn check_page(
    attr: &ToolAttr,
    tier: Option<Tier>,
    output: Option<&Type>,
    param: Option<&Type>,
    errors: &mut Errors,
) -> Option<(u32, u32)> {
    let returns_page = output.filter(|t| last_ident(t).as_deref() == Some("Page"));
    let Some(page_ty) = returns_page else {
        for key in [&attr.page_size, &attr.max_page_size].into_iter().flatten() {
            errors.spanned(
                key,
                "only a page tool takes a page size; return `Result<Page<Row>, ToolError>` and take \
                 `page: PageRequest` last, or remove this key",
            );
        }
        if let Some(ty) = param {
            errors.spanned(
                ty,
                "`page: PageRequest` goes with a page tool; return `Result<Page<Row>, ToolError>` \
                 (built with `page.page(rows, |row| key)`), or remove the parameter",
            );
        }
        return None;
    };
    if type_args(page_ty).len() != 1 {
        errors.spanned(
            page_ty,
            "a page names the type of one item: write `Page<Row>` where `Row: Serialize + JsonSchema`",
        );
    }
    if tier == Some(Tier::Draft) {
        errors.spanned(
            page_ty,
            "a draft tool writes one document and answers with it, not a page; return the document, \
             or make a read tool with `tier = \"read\"` for the list",
        );
    }
    if param.is_none() {
        errors.spanned(
            page_ty,
            "a page tool takes `page: PageRequest` as its last parameter (the position and size the \
             model asked for); add it and build the result with `page.page(rows, |row| key)`",
        );
    }
    let size = number(attr.page_size.as_ref(), DEFAULT_SIZE, errors);
    let max = number(attr.max_page_size.as_ref(), DEFAULT_MAX.max(size), errors);
    if size == 0 {
        if let Some(lit) = &attr.page_size {
            errors.spanned(lit, "`page_size` is at least 1");
        }
    } else if max > LIMIT {
        if let Some(lit) = attr.max_page_size.as_ref().or(attr.page_size.as_ref()) {
            errors.spanned(
                lit,
                format!(
                    "`max_page_size` is at most {LIMIT}: a larger page does not fit a model's context; \
                     the result budget already shrinks a page that is too large"
                ),
            );
        }
    } else if size > max {
        let at = attr.max_page_size.as_ref().or(attr.page_size.as_ref());
        if let Some(lit) = at {
            errors.spanned(
                lit,
                format!("`page_size` ({size}) is over `max_page_size` ({max}); lower it or raise the maximum"),
            );
        }
    }
    Some((size, max))
}

fn number(lit: Option<&LitInt>, default: u32, errors: &mut Errors) -> u32 {
    match lit {
        None => default,
        Some(lit) => match lit.base10_parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                errors.spanned(lit, "a page size is a whole number from 1 to 1000");
                default
            }
        },
    }
}
