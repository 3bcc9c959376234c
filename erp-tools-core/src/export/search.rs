//! [`AnthropicToolSearch`]: the search tool Claude finds deferred tools with.

use serde_json::{Value, json};

/// The tool Claude searches deferred tools with (Anthropic tool search, dated 2025-11-19,
/// behind the beta header [`BETA`](Self::BETA)). Both variants search the deferred tools'
/// names, descriptions and argument names and descriptions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnthropicToolSearch {
    /// Claude writes a regular expression (`tool_search_tool_regex_20251119`). Tool names
    /// start with their module, so `^purchasing_` finds a module's tools.
    #[default]
    Regex,
    /// Claude writes a query in words, ranked by BM25 (`tool_search_tool_bm25_20251119`).
    Bm25,
}

impl AnthropicToolSearch {
    /// The `anthropic-beta` feature that tool search needs.
    pub const BETA: &'static str = "advanced-tool-use-2025-11-20";

    /// Both variants.
    pub const ALL: [AnthropicToolSearch; 2] = [Self::Regex, Self::Bm25];

    /// The tool's `type`, e.g. `tool_search_tool_regex_20251119`.
    pub fn type_name(self) -> &'static str {
        match self {
            Self::Regex => "tool_search_tool_regex_20251119",
            Self::Bm25 => "tool_search_tool_bm25_20251119",
        }
    }

    /// The tool's `name`, e.g. `tool_search_tool_regex`.
    pub fn tool_name(self) -> &'static str {
        match self {
            Self::Regex => "tool_search_tool_regex",
            Self::Bm25 => "tool_search_tool_bm25",
        }
    }

    /// The entry of the `tools` list: `{"type": .., "name": ..}`.
    pub fn tool(self) -> Value {
        json!({ "type": self.type_name(), "name": self.tool_name() })
    }

    /// The variant whose `type` is `type_name`.
    pub(crate) fn from_type(type_name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.type_name() == type_name)
    }
}
