//! An audit row as the framework writes it ([`NewRow`], and [`Final`] for how a call
//! ended), and [`COLUMNS`]: the one table of `erp_audit_log`'s columns that every
//! statement of `store/audit.rs`, the hash chain (`store/chain.rs`) and the archive are
//! built from. A new column is one entry here (and a migration).

use std::sync::Arc;

use crate::audit::{ATTEMPT, AuditEntry, Outcome, SOURCE_RUNTIME, now_text};
use crate::tool::handles::DocumentRef;

/// A row for the audit writer: the entry, when it was written, and whether it is
/// finished (`finished_at`).
#[derive(Clone, Debug)]
pub(crate) struct NewRow {
    pub at: String,
    pub finished_at: Option<String>,
    pub source: &'static str,
    pub entry: AuditEntry,
    /// The replica running the call (its lease row in `erp_replicas`).
    pub replica_id: Option<Arc<str>>,
    /// What another system answered a remote draft, once the call ended.
    pub erp: Option<Box<ErpAnswer>>,
    /// The row's link in its writer's hash chain, when it is written finished.
    pub link: Option<Link>,
    /// An `attempt` row's own hash (hex), when it is written unfinished.
    pub attempt_hash: Option<String>,
}

impl NewRow {
    /// An `attempt` row of `entry`, written now.
    pub(crate) fn attempt(entry: &AuditEntry) -> NewRow {
        NewRow {
            at: now_text(),
            finished_at: None,
            source: SOURCE_RUNTIME,
            entry: entry.clone().outcome(ATTEMPT),
            replica_id: None,
            erp: None,
            link: None,
            attempt_hash: None,
        }
    }

    /// A finished row of `entry` (its outcome as given), written now by `source`.
    pub(crate) fn finished(entry: AuditEntry, source: &'static str) -> NewRow {
        let now = now_text();
        NewRow {
            at: now.clone(),
            finished_at: Some(now),
            source,
            entry,
            replica_id: None,
            erp: None,
            link: None,
            attempt_hash: None,
        }
    }

    /// The row with the call's final outcome on it.
    pub(crate) fn apply(&mut self, fin: Final) {
        self.entry.outcome = fin.outcome.as_str().to_string();
        self.entry.message = fin.message;
        self.entry.document = fin.document;
        self.entry.result_text = fin.result_text;
        self.entry.result_tokens = fin.result_tokens;
        self.finished_at = Some(fin.finished_at);
        self.erp = fin.erp;
    }

    /// The values of the hash chain's columns ([`Column::chained`]), in table order.
    pub(crate) fn chained(&self) -> Vec<Field<'_>> {
        COLUMNS
            .iter()
            .filter(|c| c.chained)
            .map(|c| (c.of_row)(self))
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn test_row() -> NewRow {
        let who = crate::Principal::builder("u-1", 1, "SBY-01").build();
        NewRow::attempt(&AuditEntry::new(&who, "run-1", ATTEMPT))
    }
}

/// How a call ended, for its row: outcome, message, document, and when.
#[derive(Clone, Debug)]
pub(crate) struct Final {
    pub outcome: Outcome,
    pub message: Option<String>,
    pub document: Option<DocumentRef>,
    pub finished_at: String,
    /// What another system answered a remote draft (`erp_outcome`, `erp_error`), if the
    /// call sent it anything.
    pub erp: Option<Box<ErpAnswer>>,
    /// The row's link in the writer's hash chain, written with the outcome.
    pub link: Option<Box<Link>>,
    /// What a successful read call answered (cut to
    /// [`AuditEntry::MAX_RESULT_BYTES`]).
    pub result_text: Option<String>,
    /// The size of the call's result, in estimated tokens.
    pub result_tokens: Option<i64>,
    /// The row's `at`, when the writer knows it: with the id it lets PostgreSQL update the
    /// row in its month's partition alone instead of looking in every partition.
    pub row_at: Option<String>,
}

impl Final {
    /// With what a read call answered, cut to [`AuditEntry::MAX_RESULT_BYTES`].
    pub(crate) fn with_result(mut self, text: &str) -> Final {
        self.result_text = Some(crate::audit::bounded_text(
            text,
            AuditEntry::MAX_RESULT_BYTES,
        ));
        self
    }

    /// The outcome of a call that ends now.
    pub(crate) fn new(
        outcome: Outcome,
        message: Option<String>,
        document: Option<DocumentRef>,
    ) -> Final {
        Final {
            outcome,
            message,
            document,
            finished_at: now_text(),
            erp: None,
            link: None,
            result_text: None,
            result_tokens: None,
            row_at: None,
        }
    }

    /// The outcome with the size of the call's result.
    pub(crate) fn with_result_tokens(mut self, tokens: u32) -> Final {
        self.result_tokens = Some(i64::from(tokens));
        self
    }
}

/// What another system answered a remote draft, for the audit row's `erp_outcome` and
/// `erp_error` columns: a short outcome ("created purchase.purchase 12 (P0012)",
/// "refused 400") and the system's own error text, kept as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ErpAnswer {
    pub outcome: String,
    pub error: Option<String>,
}

/// A link to write with a row: its chain, position and hash (hex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    pub chain: Arc<str>,
    pub seq: i64,
    pub hash: String,
}

/// One column's value in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field<'a> {
    Text(Option<&'a str>),
    Int(Option<i64>),
}

impl serde::Serialize for Field<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Text(t) => t.serialize(s),
            Field::Int(i) => i.serialize(s),
        }
    }
}

impl Field<'_> {
    /// Binds the value to `query`.
    pub(crate) fn bind<'q>(
        self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
        match self {
            Field::Text(t) => query.bind(t.map(str::to_string)),
            Field::Int(i) => query.bind(i),
        }
    }
}

/// A column's value read from a row of the table ([`Field`], owned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stored {
    Text(Option<String>),
    Int(Option<i64>),
}

impl Stored {
    /// Reads column `index` of `row`, of `column`'s type.
    pub(crate) fn read(
        row: &sqlx::any::AnyRow,
        index: usize,
        column: &Column,
    ) -> Result<Stored, sqlx::Error> {
        use sqlx::Row;
        Ok(if column.int {
            Stored::Int(row.try_get(index)?)
        } else {
            Stored::Text(row.try_get(index)?)
        })
    }

    pub(crate) fn field(&self) -> Field<'_> {
        match self {
            Stored::Text(t) => Field::Text(t.as_deref()),
            Stored::Int(i) => Field::Int(*i),
        }
    }
}

/// A value getter of a new row.
type OfRow = for<'a> fn(&'a NewRow) -> Field<'a>;
/// A value getter of a call's end.
type OfFinal = for<'a> fn(&'a Final) -> Field<'a>;

/// One column of `erp_audit_log` (all but `id`).
pub(crate) struct Column {
    pub name: &'static str,
    /// `BIGINT` (else `TEXT`).
    pub int: bool,
    /// `NOT NULL`.
    pub required: bool,
    /// Hashed into the row's link (`store/chain.rs`).
    pub chained: bool,
    /// Its value in a new row.
    pub of_row: OfRow,
    /// Its value when a call's outcome is written on its row; `None`: left as inserted.
    pub of_final: Option<OfFinal>,
}

const fn column(name: &'static str, of_row: OfRow, of_final: Option<OfFinal>) -> Column {
    Column {
        name,
        int: false,
        required: false,
        chained: true,
        of_row,
        of_final,
    }
}

const fn int(mut c: Column) -> Column {
    c.int = true;
    c
}

const fn required(mut c: Column) -> Column {
    c.required = true;
    c
}

const fn unchained(mut c: Column) -> Column {
    c.chained = false;
    c
}

fn doc(row: &NewRow) -> Option<&DocumentRef> {
    row.entry.document.as_ref()
}

/// Every column of `erp_audit_log` but `id`, in the order statements name them. The
/// chained ones, in this order, are what a link hashes: keep their order.
pub(crate) const COLUMNS: &[Column] = &[
    required(column("at", |r| Field::Text(Some(&r.at)), None)),
    column(
        "finished_at",
        |r| Field::Text(r.finished_at.as_deref()),
        Some(|f| Field::Text(Some(&f.finished_at))),
    ),
    required(column("source", |r| Field::Text(Some(r.source)), None)),
    required(column(
        "agent_run_id",
        |r| Field::Text(Some(&r.entry.agent_run_id)),
        None,
    )),
    column(
        "tool_call_id",
        |r| Field::Text(r.entry.tool_call_id.as_deref()),
        None,
    ),
    column(
        "tool_name",
        |r| Field::Text(r.entry.tool_name.as_deref()),
        None,
    ),
    required(column(
        "user_id",
        |r| Field::Text(Some(&r.entry.user_id)),
        None,
    )),
    int(column("branch_id", |r| Field::Int(r.entry.branch_id), None)),
    column(
        "branch_code",
        |r| Field::Text(r.entry.branch_code.as_deref()),
        None,
    ),
    column(
        "arguments",
        |r| Field::Text(r.entry.arguments.as_deref()),
        None,
    ),
    required(column(
        "outcome",
        |r| Field::Text(Some(&r.entry.outcome)),
        Some(|f| Field::Text(Some(f.outcome.as_str()))),
    )),
    column(
        "message",
        |r| Field::Text(r.entry.message.as_deref()),
        Some(|f| Field::Text(f.message.as_deref())),
    ),
    column(
        "document_type",
        |r| Field::Text(doc(r).map(|d| d.doc_type.as_str())),
        Some(|f| Field::Text(f.document.as_ref().map(|d| d.doc_type.as_str()))),
    ),
    int(column(
        "document_id",
        |r| Field::Int(doc(r).and_then(|d| d.id.as_i64())),
        Some(|f| Field::Int(f.document.as_ref().and_then(|d| d.id.as_i64()))),
    )),
    column(
        "document_number",
        |r| Field::Text(doc(r).map(|d| d.number.as_str())),
        Some(|f| Field::Text(f.document.as_ref().map(|d| d.number.as_str()))),
    ),
    column("model", |r| Field::Text(r.entry.model.as_deref()), None),
    column(
        "prompt_version",
        |r| Field::Text(r.entry.prompt_version.as_deref()),
        None,
    ),
    int(column("step", |r| Field::Int(r.entry.step), None)),
    column(
        "action_signature",
        |r| Field::Text(r.entry.action_signature.as_deref()),
        None,
    ),
    column("replica_id", |r| Field::Text(r.replica_id.as_deref()), None),
    column(
        "erp_outcome",
        |r| Field::Text(r.erp.as_ref().map(|a| a.outcome.as_str())),
        Some(|f| Field::Text(f.erp.as_ref().map(|a| a.outcome.as_str()))),
    ),
    column(
        "erp_error",
        |r| Field::Text(r.erp.as_ref().and_then(|a| a.error.as_deref())),
        Some(|f| Field::Text(f.erp.as_ref().and_then(|a| a.error.as_deref()))),
    ),
    column("surface", |r| Field::Text(r.entry.surface.as_deref()), None),
    column(
        "document_text_id",
        |r| Field::Text(doc(r).and_then(|d| d.id.as_text())),
        Some(|f| Field::Text(f.document.as_ref().and_then(|d| d.id.as_text()))),
    ),
    // Added after the first links were written: hashed only when set (see
    // `CHAIN_V1_COLUMNS`), so those links still verify.
    column(
        "call_key",
        |r| Field::Text(r.entry.call_key.as_deref()),
        None,
    ),
    column(
        "result_text",
        |r| Field::Text(r.entry.result_text.as_deref()),
        Some(|f| Field::Text(f.result_text.as_deref())),
    ),
    int(column(
        "result_tokens",
        |r| Field::Int(r.entry.result_tokens),
        Some(|f| Field::Int(f.result_tokens)),
    )),
    unchained(column(
        "chain_id",
        |r| Field::Text(r.link.as_ref().map(|l| &*l.chain)),
        Some(|f| Field::Text(f.link.as_ref().map(|l| &*l.chain))),
    )),
    unchained(int(column(
        "chain_seq",
        |r| Field::Int(r.link.as_ref().map(|l| l.seq)),
        Some(|f| Field::Int(f.link.as_ref().map(|l| l.seq))),
    ))),
    unchained(column(
        "chain_hash",
        |r| Field::Text(r.link.as_ref().map(|l| l.hash.as_str())),
        Some(|f| Field::Text(f.link.as_ref().map(|l| l.hash.as_str()))),
    )),
    unchained(column(
        "attempt_hash",
        |r| Field::Text(r.attempt_hash.as_deref()),
        None,
    )),
];

/// How many chained columns the first links hashed (up to `document_text_id`). A chained
/// column after them adds nothing to a link's hash while it is NULL, and its position and
/// value when set: a row written before the column existed hashes as it did then.
pub(crate) const CHAIN_V1_COLUMNS: usize = 24;

/// The names of `columns`, comma-separated.
pub(crate) fn names<'c>(columns: impl Iterator<Item = &'c Column>) -> String {
    columns.map(|c| c.name).collect::<Vec<_>>().join(", ")
}

/// The hash chain's columns, in order.
pub(crate) fn chained() -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(|c| c.chained)
}

/// The columns a call's outcome sets, in order.
pub(crate) fn on_finish() -> impl Iterator<Item = (&'static Column, OfFinal)> {
    COLUMNS
        .iter()
        .filter_map(|c| c.of_final.map(|get| (c, get)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chained_columns_keep_their_order() {
        // Links written before a column was added hash these, in this order.
        assert_eq!(
            names(chained()),
            "at, finished_at, source, agent_run_id, tool_call_id, tool_name, user_id, \
             branch_id, branch_code, arguments, outcome, message, document_type, document_id, \
             document_number, model, prompt_version, step, action_signature, replica_id, \
             erp_outcome, erp_error, surface, document_text_id, call_key, result_text, result_tokens"
        );
        assert_eq!(chained().count(), CHAIN_V1_COLUMNS + 3);
    }

    #[test]
    fn a_finished_row_has_the_values_of_its_end() {
        let mut row = NewRow::test_row();
        let mut fin = Final::new(Outcome::Ok, Some("done".into()), None)
            .with_result("stock: 4")
            .with_result_tokens(120);
        fin.erp = Some(Box::new(ErpAnswer {
            outcome: "created 12".into(),
            error: None,
        }));
        row.apply(fin.clone());
        for (column, get) in on_finish() {
            if !column.name.starts_with("chain_") {
                assert_eq!((column.of_row)(&row), get(&fin), "{}", column.name);
            }
        }
    }
}
