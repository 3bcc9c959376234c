//! [`Page`]: what a page tool returns, and its shape on the wire.

use std::borrow::Cow;

use serde_json::Value;

/// One page of a list: the items, each with the key it was ordered by, and whether more
/// remain. A read tool that returns `Result<Page<Row>, ToolError>` is a page tool:
/// `#[erp_tool]` gives it the arguments `cursor` and `page_size` and the output
///
/// ```text
/// { "items": [Row, ..], "next_cursor": "<sealed>" | null, "has_more": bool }
/// ```
///
/// Build one with [`PageRequest::page`](crate::page::PageRequest::page). The framework
/// seals the key of the last item it sends into `next_cursor` (bound to the caller, the
/// tool and the other arguments), and sends fewer items than the page holds when they
/// would not fit the result budget, with a cursor that continues right after the last
/// item sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    items: Vec<T>,
    keys: Vec<Value>,
    has_more: bool,
}

impl<T> Page<T> {
    /// A page of `items`, each with its key (`keys`, same length), and whether more
    /// items follow the last one.
    ///
    /// # Panics
    /// When `keys` and `items` differ in length.
    pub fn from_parts(items: Vec<T>, keys: Vec<Value>, has_more: bool) -> Self {
        assert_eq!(
            items.len(),
            keys.len(),
            "a page needs one key for each item"
        );
        Page {
            items,
            keys,
            has_more,
        }
    }

    /// The items.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Whether more items follow the last one.
    pub fn has_more(&self) -> bool {
        self.has_more
    }

    /// The items, without their keys.
    pub fn into_items(self) -> Vec<T> {
        self.items
    }

    /// The same page with every item turned into another (a row into its view); the
    /// keys stay.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            keys: self.keys,
            has_more: self.has_more,
        }
    }
}

impl<T> Page<T> {
    /// The items, their keys, and whether more follow (for the generated handler).
    #[doc(hidden)]
    pub fn into_parts(self) -> (Vec<T>, Vec<Value>, bool) {
        (self.items, self.keys, self.has_more)
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Page<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Page_of_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let item = generator.subschema_for::<T>();
        schemars::json_schema!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": item,
                    "description": "The items of this page, in order.",
                },
                "next_cursor": {
                    "type": ["string", "null"],
                    "description": "Send as cursor, with the same other arguments, for the next page; null on the last page.",
                },
                "has_more": {
                    "type": "boolean",
                    "description": "Whether more items follow this page.",
                },
            },
            "required": ["items", "next_cursor", "has_more"],
        })
    }
}
