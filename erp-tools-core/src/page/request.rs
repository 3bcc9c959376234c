//! [`PageRequest`]: which page a call of a page tool asked for.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::items::Page;
use crate::tool::error::{ToolError, ToolErrorKind};

/// The page a call asked for: how many items, and the key of the last item of the
/// previous page (none for the first page). A page tool's handler takes it as its last
/// parameter, `page: PageRequest`; the framework has already checked the caller's cursor
/// (sealed, theirs, this tool's, same filters, not expired) and reads it for the handler.
///
/// Keyset pagination: fetch [`fetch_limit`](Self::fetch_limit) rows ordered by a unique
/// key, after [`after`](Self::after) when there is one, and hand them to
/// [`page`](Self::page) with the function that reads an item's key. Page N then costs
/// what page 1 costs, and rows inserted meanwhile neither repeat nor hide others.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRequest {
    size: u32,
    after: Option<Value>,
}

impl PageRequest {
    /// The first page, `size` items.
    pub fn first(size: u32) -> Self {
        PageRequest {
            size: size.max(1),
            after: None,
        }
    }

    /// The page of `size` items after the item whose key is `after`.
    pub fn after_key(size: u32, after: Value) -> Self {
        PageRequest {
            size: size.max(1),
            after: Some(after),
        }
    }

    /// Items wanted in this page (at least 1).
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Rows to fetch: one more than the page holds, which tells whether more remain.
    pub fn fetch_limit(&self) -> i64 {
        i64::from(self.size) + 1
    }

    /// Whether this is the first page.
    pub fn is_first(&self) -> bool {
        self.after.is_none()
    }

    /// The key of the last item of the previous page, as the handler's
    /// [`page`](Self::page) call gave it (`None` for the first page).
    ///
    /// `Err` when the key has another shape than `K`: a cursor issued before the tool
    /// changed its key; the error tells the model to start again without a cursor.
    pub fn after<K: DeserializeOwned>(&self) -> Result<Option<K>, ToolError> {
        match &self.after {
            None => Ok(None),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|_| stale_cursor()),
        }
    }

    /// The key this request continues after, as JSON.
    pub fn after_value(&self) -> Option<&Value> {
        self.after.as_ref()
    }

    /// The page from `rows`, fetched with [`fetch_limit`](Self::fetch_limit) in key
    /// order: at most [`size`](Self::size) items, each with its key (`key`), and whether
    /// more rows remained.
    ///
    /// ```
    /// use erp_tools_core::page::PageRequest;
    ///
    /// let request = PageRequest::first(2);
    /// let rows = vec!["V-001", "V-002", "V-003"]; // fetched with LIMIT 3
    /// let page = request.page(rows, |code| code.to_string());
    /// assert_eq!(page.items(), &["V-001", "V-002"]);
    /// assert!(page.has_more());
    /// ```
    pub fn page<T, K: Serialize>(&self, mut rows: Vec<T>, key: impl Fn(&T) -> K) -> Page<T> {
        let size = self.size as usize;
        let has_more = rows.len() > size;
        rows.truncate(size);
        let keys = rows
            .iter()
            .map(|row| serde_json::to_value(key(row)).unwrap_or(Value::Null))
            .collect();
        Page::from_parts(rows, keys, has_more)
    }
}

/// The error for a cursor whose key has another shape than the tool reads: one issued
/// before the tool changed its key.
pub(crate) fn stale_cursor() -> ToolError {
    ToolError::new(
        ToolErrorKind::InvalidArguments,
        "The cursor was issued by an earlier version of this tool.",
    )
    .next_step("Call the tool again with cursor null to start from the first page.")
}
