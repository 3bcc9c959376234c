//! [`RemoteKeyset`]: keyset pagination over another system's search API.

use std::future::Future;

use serde_json::Value;

use super::items::Page;
use super::request::{PageRequest, stale_cursor};
use crate::tool::error::ToolError;

/// How one field of a key compares with the key of the last item sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Equal (`=`).
    Equal,
    /// Greater (`>`): after the key, in an ascending order.
    Greater,
    /// Less (`<`): after the key, in a descending order.
    Less,
}

impl Comparison {
    /// The operator as most search languages write it: `=`, `>` or `<`.
    pub fn as_str(self) -> &'static str {
        match self {
            Comparison::Equal => "=",
            Comparison::Greater => ">",
            Comparison::Less => "<",
        }
    }
}

/// One condition of [`RemoteKeyset::after`]: `field op value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The field, as the other system names it.
    pub field: &'static str,
    /// How the field compares.
    pub op: Comparison,
    /// The value from the last item sent.
    pub value: Value,
}

/// Keyset pagination over the search API of a system the team does not own (Tryton's
/// domains, Odoo's, an OData `$filter`, any search that takes conditions joined by AND and
/// OR, an order and a limit).
///
/// The list is ordered by `fields` (together unique and never null: end with the record
/// id), all in one direction. The cursor carries the key of the last item sent, and the
/// next page asks the system for the records after it, ordered, at most
/// [`fetch_limit`](PageRequest::fetch_limit) of them. No offset is sent: page N costs the
/// system what page 1 costs, and a record created while a model walks the pages neither
/// repeats another nor hides one.
///
/// Few search languages compare rows (`(name, id) > ('Beras', 7)`), so the condition
/// "after the key" is handed over expanded, as alternatives each of which is a list of
/// conditions that all hold ([`after`](Self::after)):
///
/// ```text
/// name > 'Beras'  OR  (name = 'Beras' AND id > 7)
/// ```
///
/// [`page`](Self::page) does the rest: it reads the key from the cursor, calls the
/// search (a closure that builds the system's own filter from those conditions), and
/// makes the page.
///
/// ```
/// use erp_tools_core::page::{Condition, PageRequest, RemoteKeyset};
/// use erp_tools_core::ToolError;
/// use serde_json::{Value, json};
///
/// // A search in a language of its own: here Tryton's domains, as JSON.
/// fn domain(after: &[Vec<Condition>]) -> Value {
///     let mut or = vec![json!("OR")];
///     for all in after {
///         let clauses: Vec<Value> =
///             all.iter().map(|c| json!([c.field, c.op.as_str(), c.value])).collect();
///         or.push(Value::Array(clauses));
///     }
///     Value::Array(or)
/// }
///
/// const BY_NAME: RemoteKeyset = RemoteKeyset::ascending(&["name", "id"]);
/// let request = PageRequest::after_key(2, json!(["Beras", 7]));
/// assert_eq!(
///     domain(&BY_NAME.after(&request).unwrap().unwrap()),
///     json!(["OR", [["name", ">", "Beras"]], [["name", "=", "Beras"], ["id", ">", 7]]])
/// );
///
/// # futures::executor::block_on(async {
/// let page = BY_NAME
///     .page(
///         &request,
///         |after, limit| async move {
///             // Send `domain(&after)` (when there is one), `order`, `limit` to the system.
///             assert!(after.is_some());
///             assert_eq!(limit, 3);
///             Ok::<_, ToolError>(vec![json!({"id": 9, "name": "Gula"})])
///         },
///         |row: &Value| vec![row["name"].clone(), row["id"].clone()],
///     )
///     .await
///     .unwrap();
/// assert_eq!(page.items().len(), 1);
/// assert!(!page.has_more());
/// # });
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RemoteKeyset {
    fields: &'static [&'static str],
    descending: bool,
}

impl RemoteKeyset {
    /// Ordered by `fields`, smallest first.
    pub const fn ascending(fields: &'static [&'static str]) -> Self {
        RemoteKeyset {
            fields,
            descending: false,
        }
    }

    /// Ordered by `fields`, largest first.
    pub const fn descending(fields: &'static [&'static str]) -> Self {
        RemoteKeyset {
            fields,
            descending: true,
        }
    }

    /// The fields, in order.
    pub fn fields(&self) -> &'static [&'static str] {
        self.fields
    }

    /// Whether the order is largest first.
    pub fn is_descending(&self) -> bool {
        self.descending
    }

    /// The order to ask the system for: each field with `"ASC"` or `"DESC"`.
    pub fn order(&self) -> Vec<(&'static str, &'static str)> {
        let dir = if self.descending { "DESC" } else { "ASC" };
        self.fields.iter().map(|f| (*f, dir)).collect()
    }

    /// The records after the request's key, as alternatives (joined by OR), each a list
    /// of conditions (joined by AND); `None` for the first page.
    ///
    /// `Err` when the cursor's key does not have one value per field (a cursor issued
    /// before the tool changed its key): the error tells the model to start again.
    pub fn after(&self, request: &PageRequest) -> Result<Option<Vec<Vec<Condition>>>, ToolError> {
        let Some(key) = request.after_value() else {
            return Ok(None);
        };
        let values = match key {
            Value::Array(values) if values.len() == self.fields.len() => values,
            _ => return Err(stale_cursor()),
        };
        let step = if self.descending {
            Comparison::Less
        } else {
            Comparison::Greater
        };
        let alternatives = (0..self.fields.len())
            .map(|i| {
                self.fields[..=i]
                    .iter()
                    .zip(values)
                    .enumerate()
                    .map(|(j, (field, value))| Condition {
                        field,
                        op: if j == i { step } else { Comparison::Equal },
                        value: value.clone(),
                    })
                    .collect()
            })
            .collect();
        Ok(Some(alternatives))
    }

    /// The page `request` asks for: `search` is called with the conditions "after the
    /// key" (`None` on the first page) and the number of records to fetch, and returns
    /// them in this keyset's order (mapping the system's failures to a [`ToolError`]);
    /// `key` reads an item's key, one value per field, in order.
    pub async fn page<T, S, F>(
        &self,
        request: &PageRequest,
        search: S,
        key: impl Fn(&T) -> Vec<Value>,
    ) -> Result<Page<T>, ToolError>
    where
        S: FnOnce(Option<Vec<Vec<Condition>>>, usize) -> F,
        F: Future<Output = Result<Vec<T>, ToolError>>,
    {
        let after = self.after(request)?;
        let limit = usize::try_from(request.fetch_limit()).unwrap_or(usize::MAX);
        let mut rows = search(after, limit).await?;
        rows.truncate(limit);
        Ok(request.page(rows, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn after_expands_the_row_comparison_into_alternatives() {
        let keyset = RemoteKeyset::descending(&["date", "number", "id"]);
        assert!(keyset.after(&PageRequest::first(5)).unwrap().is_none());
        let after = keyset
            .after(&PageRequest::after_key(5, json!(["2026-03-01", "PO-9", 4])))
            .unwrap()
            .unwrap();
        let ops: Vec<Vec<(&str, &str)>> = after
            .iter()
            .map(|all| all.iter().map(|c| (c.field, c.op.as_str())).collect())
            .collect();
        assert_eq!(
            ops,
            [
                vec![("date", "<")],
                vec![("date", "="), ("number", "<")],
                vec![("date", "="), ("number", "="), ("id", "<")],
            ]
        );
        assert_eq!(after[2][2].value, json!(4));
        assert_eq!(
            keyset.order(),
            [("date", "DESC"), ("number", "DESC"), ("id", "DESC")]
        );
    }

    #[test]
    fn a_key_of_another_shape_asks_to_start_again() {
        let keyset = RemoteKeyset::ascending(&["name", "id"]);
        let err = keyset
            .after(&PageRequest::after_key(5, json!("Beras")))
            .unwrap_err();
        assert!(err.to_string().contains("cursor null"), "{err}");
    }
}
