//! [`PageSpec`]: a page tool's size bounds, the two arguments it adds to the tool's
//! schema and the sentence it adds to the description.

use crate::schema::{Bounds, Property, Schema, SchemaKind};

/// Name of the argument that carries the position to continue from.
pub const CURSOR_ARG: &str = "cursor";
/// Name of the argument that carries the number of items wanted.
pub const PAGE_SIZE_ARG: &str = "page_size";

/// The size bounds of a page tool, from `#[erp_tool(page_size = 50, max_page_size = 200)]`
/// (the defaults when not written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSpec {
    /// Items in a page when the call gives no `page_size`.
    pub default_size: u32,
    /// Most items one page may hold (the bound on `page_size`).
    pub max_size: u32,
}

impl PageSpec {
    /// 50 items a page unless asked otherwise, at most 200.
    pub const DEFAULT: PageSpec = PageSpec {
        default_size: 50,
        max_size: 200,
    };
    /// The largest `max_page_size` a tool may declare.
    pub const LIMIT: u32 = 1000;

    /// The two arguments a page tool takes besides its filters: a nullable `cursor`
    /// and a bounded, nullable `page_size`.
    pub fn properties(&self) -> [Property; 2] {
        let cursor = Schema::new(SchemaKind::Optional(Box::new(Schema::new(
            SchemaKind::String(None),
        ))))
        .with_description(
            "Leave out (null) for the first page. To continue, the next_cursor of the \
             previous page, sent with the same other arguments.",
        );
        let max = i128::from(self.max_size);
        let size = Schema::new(SchemaKind::Optional(Box::new(
            Schema::new(SchemaKind::Integer { min: 1, max }).with_bounds(
                Bounds::new()
                    .with_min("1")
                    .with_max(&self.max_size.to_string()),
            ),
        )))
        .with_description(format!(
            "Items per page; {} when left out (null). A page may hold fewer when the items \
             would not fit the size limit of one result",
            self.default_size
        ));
        [
            Property::new(CURSOR_ARG, cursor),
            Property::new(PAGE_SIZE_ARG, size),
        ]
    }

    /// The sentence a page tool's description ends with: how to get the next page.
    pub fn description_sentence(&self) -> String {
        format!(
            "Results come in pages of up to {} items (page_size, at most {}). When \
             has_more is true, call this tool again with the same arguments and cursor set \
             to next_cursor to get the next page; leave cursor null for the first page.",
            self.default_size, self.max_size
        )
    }

    /// What is wrong with these bounds, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.default_size == 0 {
            Some("page_size must be at least 1".into())
        } else if self.max_size > Self::LIMIT {
            Some(format!(
                "max_page_size {} is over {}; a page that large does not fit a model's context",
                self.max_size,
                Self::LIMIT
            ))
        } else if self.default_size > self.max_size {
            Some(format!(
                "page_size {} is over max_page_size {}",
                self.default_size, self.max_size
            ))
        } else {
            None
        }
    }
}

impl Default for PageSpec {
    fn default() -> Self {
        PageSpec::DEFAULT
    }
}
