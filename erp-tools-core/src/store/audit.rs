//! The audit log's SQL: rows inserted in batches by the audit writer (`store/writer.rs`),
//! finished in batches or inside a draft's transaction, read back for reports and the
//! review of a run.

use sqlx::Row;

use crate::audit::{ATTEMPT, AuditEntry, AuditId, AuditRecord, Outcome, SOURCE_RUNTIME, now_text};
use crate::tool::handles::{Backend, DocumentRef};

/// The columns of a new row, in the order [`insert_many`] binds them.
const COLUMNS: &str = "at, finished_at, source, agent_run_id, tool_call_id, tool_name, \
     user_id, branch_id, branch_code, arguments, outcome, message, document_type, document_id, \
     document_number, model, prompt_version, step, action_signature";
/// How many columns [`COLUMNS`] names.
const COLUMN_COUNT: usize = 19;
/// Rows per multi-row statement (20 parameters each at most).
pub(crate) const ROWS_PER_STATEMENT: usize = 64;

/// A row for the audit writer: the entry, when it was written, and whether it is
/// finished (`finished_at`).
#[derive(Clone, Debug)]
pub(crate) struct NewRow {
    pub at: String,
    pub finished_at: Option<String>,
    pub source: &'static str,
    pub entry: AuditEntry,
}

impl NewRow {
    /// An `attempt` row of `entry`, written now.
    pub(crate) fn attempt(entry: &AuditEntry) -> NewRow {
        NewRow {
            at: now_text(),
            finished_at: None,
            source: SOURCE_RUNTIME,
            entry: entry.clone().outcome(ATTEMPT),
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
        }
    }

    /// The row with the call's final outcome on it.
    pub(crate) fn apply(&mut self, fin: Final) {
        self.entry.outcome = fin.outcome.as_str().to_string();
        self.entry.message = fin.message;
        self.entry.document = fin.document;
        self.finished_at = Some(fin.finished_at);
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
}

impl Final {
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
        }
    }
}

/// Inserts `rows` with one multi-row statement and returns their ids, in order.
///
/// SQLite: the connection holds the write lock (`BEGIN IMMEDIATE`), so the rows get
/// consecutive ids in `VALUES` order (checked). PostgreSQL: the ids
/// are drawn from the table's sequence first and inserted explicitly.
pub(crate) async fn insert_many(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    rows: &[&NewRow],
) -> Result<Vec<AuditId>, sqlx::Error> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    // PostgreSQL gives several rows' `RETURNING` in no guaranteed order, so their ids are
    // taken from the sequence first; one row, and SQLite's rows, take theirs from
    // `RETURNING`.
    let ids_first = backend == Backend::Postgres && rows.len() > 1;
    let ids: Vec<AuditId> = if ids_first {
        sqlx::query_scalar(
            "SELECT nextval(pg_get_serial_sequence('erp_audit_log', 'id')) \
             FROM generate_series(1, $1)",
        )
        .bind(rows.len() as i64)
        .fetch_all(&mut *conn)
        .await?
    } else {
        Vec::new()
    };
    let per_row = COLUMN_COUNT + usize::from(ids_first);
    let mut sql = String::with_capacity(200 + rows.len() * per_row * 5);
    sql.push_str("INSERT INTO erp_audit_log (");
    if ids_first {
        sql.push_str("id, ");
    }
    sql.push_str(COLUMNS);
    sql.push_str(") VALUES ");
    push_tuples(&mut sql, rows.len(), per_row);
    if !ids_first {
        sql.push_str(" RETURNING id");
    }
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (i, row) in rows.iter().enumerate() {
        if ids_first {
            query = query.bind(ids[i]);
        }
        query = bind_row(query, row);
    }
    if ids_first {
        query.execute(&mut *conn).await?;
        return Ok(ids);
    }
    // SQLite gives `RETURNING` rows in no set order; the ids themselves are consecutive in
    // `VALUES` order (one writer, rows inserted in turn), so sorted they match the rows
    // (one PostgreSQL row has one id).
    let mut ids = Vec::with_capacity(rows.len());
    for row in query.fetch_all(&mut *conn).await? {
        ids.push(row.try_get::<i64, _>(0)?);
    }
    ids.sort_unstable();
    if ids.len() != rows.len() || ids.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(sqlx::Error::Protocol(format!(
            "the database gave {} non-consecutive ids for {} audit rows",
            ids.len(),
            rows.len()
        )));
    }
    Ok(ids)
}

/// Binds the columns of `row` (in `COLUMNS` order) to `query`.
fn bind_row<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    row: &NewRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    let e = &row.entry;
    let doc = e.document.as_ref();
    query
        .bind(row.at.clone())
        .bind(row.finished_at.clone())
        .bind(row.source)
        .bind(e.agent_run_id.clone())
        .bind(e.tool_call_id.clone())
        .bind(e.tool_name.clone())
        .bind(e.user_id.clone())
        .bind(e.branch_id)
        .bind(e.branch_code.clone())
        .bind(e.arguments.clone())
        .bind(e.outcome.clone())
        .bind(e.message.clone())
        .bind(doc.map(|d| d.doc_type.clone()))
        .bind(doc.map(|d| d.id))
        .bind(doc.map(|d| d.number.clone()))
        .bind(e.model.clone())
        .bind(e.prompt_version.clone())
        .bind(e.step)
        .bind(e.action_signature.clone())
}

/// Applies the final outcomes `fins` (row id, outcome) with one statement.
pub(crate) async fn finish_many(
    conn: &mut sqlx::AnyConnection,
    fins: &[(AuditId, &Final)],
) -> Result<(), sqlx::Error> {
    if fins.is_empty() {
        return Ok(());
    }
    let mut sql = String::from(
        "UPDATE erp_audit_log SET outcome = v.column2, message = v.column3, \
         document_type = v.column4, document_id = v.column5, document_number = v.column6, \
         finished_at = v.column7 FROM (VALUES ",
    );
    push_tuples(&mut sql, fins.len(), 7);
    sql.push_str(") AS v WHERE erp_audit_log.id = v.column1");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (id, fin) in fins {
        let doc = fin.document.as_ref();
        query = query
            .bind(*id)
            .bind(fin.outcome.as_str())
            .bind(fin.message.clone())
            .bind(doc.map(|d| d.doc_type.clone()))
            .bind(doc.map(|d| d.id))
            .bind(doc.map(|d| d.number.clone()))
            .bind(fin.finished_at.clone());
    }
    query.execute(&mut *conn).await?;
    Ok(())
}

/// `($1, ..., $per_row), (...)` for `rows` rows.
fn push_tuples(sql: &mut String, rows: usize, per_row: usize) {
    use std::fmt::Write;
    for r in 0..rows {
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for c in 0..per_row {
            if c > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "${}", r * per_row + c + 1);
        }
        sql.push(')');
    }
}

/// Sets the final outcome of a tool call's row on `executor` (a draft's transaction on
/// PostgreSQL, where audit and documents share the database).
pub(crate) async fn finish<'c, E>(executor: E, id: AuditId, fin: &Final) -> Result<(), sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let document = fin.document.as_ref();
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = $1, message = $2, document_type = $3, \
         document_id = $4, document_number = $5, finished_at = $6 WHERE id = $7",
    )
    .bind(fin.outcome.as_str())
    .bind(fin.message.clone())
    .bind(document.map(|d| d.doc_type.clone()))
    .bind(document.map(|d| d.id))
    .bind(document.map(|d| d.number.clone()))
    .bind(fin.finished_at.clone())
    .bind(id)
    .execute(executor)
    .await?;
    Ok(())
}

/// Ids of tool-call rows still at `attempt` (interrupted calls, or calls running now).
pub(crate) async fn open_attempts(pool: &sqlx::AnyPool) -> Result<Vec<AuditId>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT id FROM erp_audit_log WHERE outcome = $1 AND source = $2 ORDER BY id",
    )
    .bind(ATTEMPT)
    .bind(SOURCE_RUNTIME)
    .fetch_all(pool)
    .await
}

/// The audit log, oldest first: every row, or only those of one agent run.
pub(crate) async fn select(
    pool: &sqlx::AnyPool,
    agent_run_id: Option<&str>,
) -> Result<Vec<AuditRecord>, sqlx::Error> {
    macro_rules! select {
            () => {
                "SELECT id, at, finished_at, source, agent_run_id, tool_call_id, tool_name, \
                 user_id, branch_id, branch_code, arguments, outcome, message, document_type, \
                 document_id, document_number, model, prompt_version, step, action_signature \
                 FROM erp_audit_log"
            };
        }
    let rows = match agent_run_id {
        Some(run) => {
            sqlx::query(concat!(select!(), " WHERE agent_run_id = $1 ORDER BY id"))
                .bind(run.to_string())
                .fetch_all(pool)
                .await?
        }
        None => {
            sqlx::query(concat!(select!(), " ORDER BY id"))
                .fetch_all(pool)
                .await?
        }
    };
    rows.iter().map(record_from_row).collect()
}

fn record_from_row(row: &sqlx::any::AnyRow) -> Result<AuditRecord, sqlx::Error> {
    let doc_type: Option<String> = row.try_get("document_type")?;
    let doc_id: Option<i64> = row.try_get("document_id")?;
    let doc_number: Option<String> = row.try_get("document_number")?;
    let document = match (doc_type, doc_id, doc_number) {
        (Some(doc_type), Some(id), Some(number)) => Some(DocumentRef {
            doc_type,
            id,
            number,
        }),
        _ => None,
    };
    Ok(AuditRecord {
        id: row.try_get("id")?,
        at: row.try_get("at")?,
        finished_at: row.try_get("finished_at")?,
        source: row.try_get("source")?,
        agent_run_id: row.try_get("agent_run_id")?,
        tool_call_id: row.try_get("tool_call_id")?,
        tool_name: row.try_get("tool_name")?,
        user_id: row.try_get("user_id")?,
        branch_id: row.try_get("branch_id")?,
        branch_code: row.try_get("branch_code")?,
        arguments: row.try_get("arguments")?,
        outcome: row.try_get("outcome")?,
        message: row.try_get("message")?,
        document,
        model: row.try_get("model")?,
        prompt_version: row.try_get("prompt_version")?,
        step: row.try_get("step")?,
        action_signature: row.try_get("action_signature")?,
    })
}
