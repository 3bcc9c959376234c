//! [`Keyset`]: the SQL of keyset pagination, the same on SQLite and PostgreSQL.

use super::request::PageRequest;

/// The columns a list is ordered by (together unique, e.g. `code`, or `date, id`), all
/// in one direction; writes the SQL that continues after a [`PageRequest`]'s key.
///
/// The condition is a row-value comparison (`(a, b) > ($2, $3)`), which both backends
/// answer from an index on the same columns: page 10 000 costs what page 1 costs, and a
/// row inserted while a model walks the pages is never sent twice nor makes another row
/// skipped.
///
/// ```
/// use erp_tools_core::page::{Keyset, PageRequest};
/// use serde_json::json;
///
/// let keyset = Keyset::descending(&["po.order_date", "po.number"]);
/// assert_eq!(keyset.and_after(&PageRequest::first(50), 2), "");
/// let next = PageRequest::after_key(50, json!(["2026-03-01", "PO-2026-0042"]));
/// assert_eq!(
///     keyset.and_after(&next, 2),
///     "AND (po.order_date, po.number) < ($2, $3)"
/// );
/// assert_eq!(keyset.order_by(), "po.order_date DESC, po.number DESC");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Keyset {
    columns: &'static [&'static str],
    descending: bool,
}

impl Keyset {
    /// Ordered by `columns`, smallest first.
    pub const fn ascending(columns: &'static [&'static str]) -> Self {
        Keyset {
            columns,
            descending: false,
        }
    }

    /// Ordered by `columns`, largest first.
    pub const fn descending(columns: &'static [&'static str]) -> Self {
        Keyset {
            columns,
            descending: true,
        }
    }

    /// `AND (cols) > ($n, ..)` (`<` when descending), numbering the parameters from
    /// `first_param`; empty for the first page. Bind the key's values in column order
    /// after the query's other parameters (a one-column key is bound as itself, a
    /// longer one as the items of its list).
    pub fn and_after(&self, page: &PageRequest, first_param: usize) -> String {
        if page.is_first() {
            return String::new();
        }
        let params: Vec<String> = (0..self.columns.len())
            .map(|i| format!("${}", first_param + i))
            .collect();
        let op = if self.descending { "<" } else { ">" };
        if self.columns.len() == 1 {
            format!("AND {} {op} {}", self.columns[0], params[0])
        } else {
            format!(
                "AND ({}) {op} ({})",
                self.columns.join(", "),
                params.join(", ")
            )
        }
    }

    /// `cols ASC` (or `DESC`), for the query's `ORDER BY`.
    pub fn order_by(&self) -> String {
        let dir = if self.descending { "DESC" } else { "ASC" };
        self.columns
            .iter()
            .map(|c| format!("{c} {dir}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
