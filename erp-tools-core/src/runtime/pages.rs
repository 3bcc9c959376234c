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
    /// The answer's size as the client receives it (text plus compact structured
    /// content), counted from the lengths the page was built from.
    pub tokens: u32,
}

/// Fits the handler's page to `budget` tokens: as many items as fit (all of them when
/// they do), with the cursor continuing right after the last item sent. `Err` when not
/// even the first item fits.
///
/// Each item is sized once: an item without a line of its own is sent as its compact
/// JSON, whose length is the line's; an item with one is walked once
/// ([`json_len`](super::budget::json_len)). The answer's size then follows from those
/// lengths, the text's length and the cursor's, without serialising the answer again.
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
    // An item's line is its own text, or its JSON; and the length of its JSON.
    let (lines, json): (Vec<String>, Vec<usize>) = items
        .iter()
        .zip(lines)
        .map(|(item, line)| match line {
            Some(line) => (line, super::budget::json_len(item)),
            None => {
                let line = item.to_string();
                let len = line.len();
                (line, len)
            }
        })
        .unzip();
    let asked = items.len();
    // Every item is sent in the structured content and as a line of text; the rest is
    // the header, the continuation and the cursor (twice).
    let budget_bytes = budget as usize * ResultBudget::BYTES_PER_TOKEN;
    let mut sent = 0usize;
    let mut total = 600usize;
    for (line, json) in lines.iter().zip(&json) {
        let size = json + line.len() + 2;
        if total + size > budget_bytes {
            break;
        }
        total += size;
        sent += 1;
    }
    if sent == 0 && asked > 0 {
        let one = ResultBudget::tokens_of_bytes(json[0] + lines[0].len() + 2);
        return Err(text::item_over_budget(&call.tool, one, budget));
    }
    loop {
        let more = has_more || sent < asked;
        let (text, next, tokens) = render(
            sealer,
            call,
            &lines[..sent],
            &json[..sent],
            &keys,
            more,
            asked,
        );
        if tokens <= budget {
            // The items move into the structured content: no copy of the page.
            let mut items = items;
            items.truncate(sent);
            let mut structured = Map::with_capacity(3);
            structured.insert("items".into(), Value::Array(items));
            let more = next.is_some();
            structured.insert(
                "next_cursor".into(),
                next.map_or(Value::Null, Value::String),
            );
            structured.insert("has_more".into(), Value::Bool(more));
            return Ok(PageAnswer {
                structured: Value::Object(structured),
                text,
                tokens,
            });
        }
        if sent <= 1 {
            return Err(text::item_over_budget(&call.tool, tokens, budget));
        }
        sent -= 1;
    }
}

/// The length of a page's structured content, `{"items":[..],"next_cursor":..,
/// "has_more":..}` as compact JSON, from its items' lengths and its cursor.
fn structured_len(items_json: &[usize], next: Option<&str>) -> usize {
    const ENVELOPE: usize = r#"{"items":[],"next_cursor":,"has_more":}"#.len();
    let items: usize = items_json.iter().sum::<usize>() + items_json.len().saturating_sub(1);
    // A sealed cursor is URL-safe base64: no byte needs escaping.
    let cursor = next.map_or(4, |c| c.len() + 2);
    let more = if next.is_some() { 4 } else { 5 };
    ENVELOPE + items + cursor + more
}

/// The text of a page of `lines.len()` items, its next cursor, and the answer's size in
/// estimated tokens.
fn render(
    sealer: &Sealer,
    call: &PageCall,
    lines: &[String],
    items_json: &[usize],
    keys: &[Value],
    has_more: bool,
    asked: usize,
) -> (String, Option<String>, u32) {
    let sent = lines.len();
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
    let tokens =
        ResultBudget::tokens_of_bytes(text.len() + structured_len(items_json, next.as_deref()));
    (text, next, tokens)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::budget::json_len;
    use serde_json::json;

    #[test]
    fn a_pages_size_is_counted_from_its_parts_as_the_client_receives_it() {
        let items = [json!({"code": "V-1", "name": "Tab\there"}), json!({"n": 7})];
        let lens: Vec<usize> = items.iter().map(json_len).collect();
        for next in [None, Some("eyJleHAiOjE3.abc-_")] {
            for sent in 0..=items.len() {
                let structured = json!({
                    "items": &items[..sent],
                    "next_cursor": next,
                    "has_more": next.is_some(),
                });
                assert_eq!(
                    structured_len(&lens[..sent], next),
                    structured.to_string().len(),
                    "{structured}"
                );
            }
        }
    }
}
