//! A page tool's call: its cursor opened and checked against the caller, the tool and
//! the other arguments; its page fitted to the result budget and answered with the
//! sealed cursor of the next page.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::budget::ResultBudget;
use crate::page::{CURSOR_ARG, PAGE_SIZE_ARG, PageRequest, PageSpec, SealError, Sealer};
use crate::text::pages::{self as text, CursorRefusal};
use crate::tool::context::ToolContext;
use crate::tool::error::ToolError;
use crate::tool::handler::PageParts;

/// What a cursor is sealed for, so that no other sealed value is taken for one.
const PURPOSE: &str = "erp-tools/cursor/v1";

/// What a cursor carries: the tool, digests of the caller and of the other arguments,
/// the key of the last item sent and how many items were sent before the next page.
#[derive(Serialize, Deserialize)]
struct Cursor {
    t: String,
    p: String,
    f: String,
    k: Value,
    n: u64,
}

/// A page tool's call, admitted: the page asked for and what its next cursor is bound to.
pub(crate) struct PageCall {
    /// The page the handler is asked for.
    pub request: PageRequest,
    tool: String,
    principal: String,
    filters: String,
    /// Items sent before this page.
    offset: u64,
}

/// Splits `cursor` and `page_size` off a page tool's arguments, and opens the cursor:
/// the call and the arguments for the handler, or why the cursor is refused.
pub(crate) fn admit(
    sealer: &Sealer,
    spec: PageSpec,
    ctx: &ToolContext,
    args: Value,
) -> Result<(PageCall, Value), ToolError> {
    let tool = ctx.tool_name().to_string();
    let mut filters = match args {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let cursor = filters.remove(CURSOR_ARG);
    let size = filters
        .remove(PAGE_SIZE_ARG)
        .and_then(|v| v.as_u64())
        .map_or(spec.default_size, |n| {
            u32::try_from(n).unwrap_or(u32::MAX).clamp(1, spec.max_size)
        });
    let filters = Value::Object(filters);
    let principal = digest(&format!("{}\u{1f}{}", ctx.user_id(), ctx.branch_id()));
    let filter_digest = digest(&canonical(&filters).to_string());
    let (request, offset) = match cursor.as_ref().and_then(Value::as_str) {
        None => (PageRequest::first(size), 0),
        Some(sealed) => {
            let opened: Cursor = sealer.open(PURPOSE, sealed).map_err(|e| {
                let why = match e {
                    SealError::Expired => CursorRefusal::Expired,
                    SealError::Forged | SealError::Malformed => CursorRefusal::Invalid,
                };
                text::cursor_refused(&tool, why)
            })?;
            let why = if opened.t != tool {
                Some(CursorRefusal::OtherTool)
            } else if opened.p != principal {
                Some(CursorRefusal::OtherPerson)
            } else if opened.f != filter_digest {
                Some(CursorRefusal::OtherFilters)
            } else {
                None
            };
            if let Some(why) = why {
                return Err(text::cursor_refused(&tool, why));
            }
            (PageRequest::after_key(size, opened.k), opened.n)
        }
    };
    let call = PageCall {
        request,
        tool,
        principal,
        filters: filter_digest,
        offset,
    };
    Ok((call, filters))
}

/// A page's answer: structured content, its text, and its size in estimated tokens.
pub(crate) struct PageAnswer {
    pub structured: Value,
    pub text: String,
}

/// Fits the handler's page to `budget` tokens: as many items as fit (all of them when
/// they do), with the cursor continuing right after the last item sent. `Err` when not
/// even the first item fits.
pub(crate) fn answer(
    sealer: &Sealer,
    call: &PageCall,
    parts: PageParts,
    budget: u32,
) -> Result<PageAnswer, ToolError> {
    let PageParts {
        items,
        keys,
        lines,
        has_more,
    } = parts;
    // An item's line is its own text, or its JSON.
    let lines: Vec<String> = items
        .iter()
        .zip(lines)
        .map(|(item, line)| line.unwrap_or_else(|| item.to_string()))
        .collect();
    let sizes: Vec<usize> = items
        .iter()
        .zip(&lines)
        .map(|(item, line)| super::budget::json_len(item) + line.len() + 2)
        .collect();
    let asked = items.len();
    // Every item is sent in the structured content and as a line of text; the rest is
    // the header, the continuation and the cursor (twice).
    let budget_bytes = budget as usize * ResultBudget::BYTES_PER_TOKEN;
    let mut sent = 0usize;
    let mut total = 600usize;
    for size in &sizes {
        if total + size > budget_bytes {
            break;
        }
        total += size;
        sent += 1;
    }
    if sent == 0 && asked > 0 {
        let one = ResultBudget::tokens_of_bytes(sizes[0]);
        return Err(text::item_over_budget(&call.tool, one, budget));
    }
    loop {
        let more = has_more || sent < asked;
        let answer = render(
            sealer,
            call,
            &items[..sent],
            &lines[..sent],
            &keys,
            more,
            asked,
        );
        let tokens = ResultBudget::measure(&answer.text, &answer.structured);
        if tokens <= budget {
            return Ok(answer);
        }
        if sent <= 1 {
            return Err(text::item_over_budget(&call.tool, tokens, budget));
        }
        sent -= 1;
    }
}

fn render(
    sealer: &Sealer,
    call: &PageCall,
    items: &[Value],
    lines: &[String],
    keys: &[Value],
    has_more: bool,
    asked: usize,
) -> PageAnswer {
    let sent = items.len();
    let next = match (has_more, sent.checked_sub(1).and_then(|i| keys.get(i))) {
        (true, Some(key)) => Some(sealer.seal(
            PURPOSE,
            &Cursor {
                t: call.tool.clone(),
                p: call.principal.clone(),
                f: call.filters.clone(),
                k: key.clone(),
                n: call.offset + sent as u64,
            },
        )),
        _ => None,
    };
    let mut text = text::page_header(&call.tool, call.offset + 1, sent, next.is_some());
    for line in lines {
        text.push('\n');
        text.push_str(line);
    }
    if sent < asked {
        text.push('\n');
        text.push_str(&text::page_shrunk(sent, asked));
    }
    if let Some(cursor) = &next {
        text.push('\n');
        text.push_str(&text::page_next(&call.tool, cursor));
    }
    let structured = serde_json::json!({
        "items": items,
        "next_cursor": next,
        "has_more": next.is_some(),
    });
    PageAnswer { structured, text }
}

/// The first 16 hex digits of the SHA-256 of `text`.
fn digest(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

/// `value` with every object's keys sorted and its null members left out (an absent
/// optional argument and an explicit null are the same filter).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> =
                map.iter().filter(|(_, v)| !v.is_null()).collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), canonical(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}
