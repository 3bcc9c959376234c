//! [`ResultBudget`]: how large one tool result may be, in estimated tokens, and how a
//! result is measured.

use std::collections::BTreeMap;

use serde_json::Value;

/// The most a tool result may hold, in estimated tokens, for the server and per tool.
///
/// A result is measured as the client receives it: the text plus the structured content
/// (compact JSON), at one token per [`BYTES_PER_TOKEN`](Self::BYTES_PER_TOKEN) bytes, a
/// deliberately high estimate (JSON with codes and numbers tokenises at three to four
/// bytes a token). The default, [`DEFAULT_TOKENS`](Self::DEFAULT_TOKENS), stays below the
/// 25 000 tokens Claude Code accepts from one call by default (`MAX_MCP_OUTPUT_TOKENS`).
///
/// - a page tool fills its page up to the budget and hands a cursor for the rest;
/// - any other read tool over the budget answers with an error naming its arguments to
///   narrow the call (never a result cut in the middle of its JSON);
/// - a draft's result is measured and recorded but never withheld: the draft exists.
///
/// The size of every result is on its audit row (`result_tokens`) and in the metrics
/// (`erp_tools_result_tokens`).
///
/// ```
/// use erp_tools_core::ResultBudget;
///
/// let budget = ResultBudget::new(10_000).tool("inventory_item_summary", 4_000);
/// assert_eq!(budget.for_tool("inventory_item_summary"), 4_000);
/// assert_eq!(budget.for_tool("purchasing_list_vendors"), 10_000);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultBudget {
    tokens: u32,
    per_tool: BTreeMap<String, u32>,
}

impl Default for ResultBudget {
    fn default() -> Self {
        ResultBudget::new(Self::DEFAULT_TOKENS)
    }
}

impl ResultBudget {
    /// The server's budget unless configured: 20 000 estimated tokens.
    pub const DEFAULT_TOKENS: u32 = 20_000;
    /// Bytes counted as one token.
    pub const BYTES_PER_TOKEN: usize = 3;

    /// A budget of `tokens` for every tool (at least 1 000).
    pub fn new(tokens: u32) -> Self {
        ResultBudget {
            tokens: tokens.max(1_000),
            per_tool: BTreeMap::new(),
        }
    }

    /// A budget of `tokens` (at least 1 000) for the tool named `tool`.
    pub fn tool(mut self, tool: impl Into<String>, tokens: u32) -> Self {
        self.per_tool.insert(tool.into(), tokens.max(1_000));
        self
    }

    /// The budget of the tool named `tool`.
    pub fn for_tool(&self, tool: &str) -> u32 {
        self.per_tool.get(tool).copied().unwrap_or(self.tokens)
    }

    /// The server's budget (tools without one of their own).
    pub fn tokens(&self) -> u32 {
        self.tokens
    }

    /// The estimated tokens of `bytes` bytes.
    pub fn tokens_of_bytes(bytes: usize) -> u32 {
        u32::try_from(bytes.div_ceil(Self::BYTES_PER_TOKEN)).unwrap_or(u32::MAX)
    }

    /// The estimated tokens of a result: its text plus its structured content.
    pub fn measure(text: &str, structured: &Value) -> u32 {
        Self::tokens_of_bytes(text.len() + json_len(structured))
    }
}

/// How results are bounded: the key page cursors are sealed with, and the budget.
#[derive(Debug)]
pub(crate) struct ResultRules {
    pub sealer: crate::page::Sealer,
    pub budget: ResultBudget,
}

/// The length of `value` as compact JSON (as `serde_json` writes it), counted in one walk
/// over the value without writing any text: strings by their bytes plus escapes,
/// integers by their digits.
pub(crate) fn json_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_len(n),
        Value::String(s) => string_len(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(json_len).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| string_len(k) + 1 + json_len(v))
                    .sum::<usize>()
        }
    }
}

/// A JSON string's length with its quotes and escapes (`serde_json`'s: `\"`, `\\`, the
/// short escapes of `\b \t \n \f \r`, `\u00XX` for the other control bytes).
fn string_len(s: &str) -> usize {
    let escapes: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 1,
            0x00..=0x1f => 5,
            _ => 0,
        })
        .sum();
    s.len() + 2 + escapes
}

fn number_len(n: &serde_json::Number) -> usize {
    fn digits(mut n: u64) -> usize {
        let mut d = 1;
        while n >= 10 {
            n /= 10;
            d += 1;
        }
        d
    }
    if let Some(u) = n.as_u64() {
        digits(u)
    } else if let Some(i) = n.as_i64() {
        1 + digits(i.unsigned_abs())
    } else {
        // A float, as serde_json writes it (rare in results: decimals travel as strings).
        n.to_string().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_counts_its_text_and_its_compact_json() {
        let v = json!({"a": [1, 2, 3]});
        assert_eq!(json_len(&v), v.to_string().len());
        let awkward = json!({
            "quote\"d": "tab\there, \\ back\u{1}slash\nline \u{7f} ü 漢",
            "n": [0, -1, 9, 10, -10, u64::MAX, i64::MIN, 1.5, -0.25, 1e300, null, true, false],
            "empty": [[], {}, ""],
        });
        assert_eq!(json_len(&awkward), awkward.to_string().len());
        // 6 bytes of text + 15 of JSON = 21 bytes = 7 tokens.
        assert_eq!(ResultBudget::measure("abcdef", &v), 7);
        assert_eq!(ResultBudget::new(10).tokens(), 1_000);
    }
}
