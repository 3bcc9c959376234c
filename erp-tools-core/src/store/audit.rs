//! The audit log's SQL, all of what writes `erp_audit_log`: rows inserted in batches by
//! the audit writer (`store/writer.rs`), finished in batches or inside a draft's
//! transaction (with its idempotency key, PostgreSQL), closed by the recovery pass
//! (`store/recover.rs`, which reads the open rows itself), and read back for reports and
//! the review of a run.

use sqlx::Row;

use super::chain::Link;
use super::document::document_of_row;
use crate::audit::{ATTEMPT, AuditEntry, AuditId, AuditRecord, Outcome, SOURCE_RUNTIME, now_text};
use crate::tool::handles::{Backend, DocumentId, DocumentRef};

/// The columns of a new row, in the order [`insert_many`] binds them.
const COLUMNS: &str = "at, finished_at, source, agent_run_id, tool_call_id, tool_name, \
     user_id, branch_id, branch_code, arguments, outcome, message, document_type, document_id, \
     document_number, model, prompt_version, step, action_signature, replica_id, surface, \
     document_text_id, chain_id, chain_seq, chain_hash";
/// How many columns [`COLUMNS`] names.
const COLUMN_COUNT: usize = 25;
/// Rows (or outcome updates) per multi-row statement on PostgreSQL (26 parameters each at
/// most). On SQLite any number is one statement with one parameter ([`SQLITE_WRITE`]).
pub(crate) const PG_ROWS_PER_STATEMENT: usize = 64;

/// SQLite: every batch of more than one row or outcome update, new rows and updates alike,
/// is this one statement, so it needs no transaction. Its one parameter is a JSON array
/// of `[id, <COLUMNS values>]`: `id` null for a new row; for an update the row's id, its
/// outcome columns, and placeholders for the rest, which `DO UPDATE` leaves as they are.
/// An update whose row is not there is skipped (as an `UPDATE` would), never inserted.
///
/// One text for every batch keeps it prepared once in the connection's statement cache;
/// a `VALUES` list of `n` rows × 20 `$N` parameters is a new text for every `n`, parsed
/// again whenever it has left the cache, and SQLite's parse and sqlx's binding of numbered
/// parameters grow with the square of their count.
const SQLITE_WRITE: &str = "INSERT INTO erp_audit_log (id, at, finished_at, \
     source, agent_run_id, tool_call_id, tool_name, user_id, branch_id, branch_code, \
     arguments, outcome, message, document_type, document_id, document_number, model, \
     prompt_version, step, action_signature, replica_id, surface, document_text_id, chain_id, \
     chain_seq, chain_hash) \
     SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, \
     value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, \
     value ->> 12, value ->> 13, value ->> 14, value ->> 15, value ->> 16, value ->> 17, \
     value ->> 18, value ->> 19, value ->> 20, value ->> 21, value ->> 22, value ->> 23, \
     value ->> 24, value ->> 25 \
     FROM jsonb_each($1) \
     WHERE value ->> 0 IS NULL \
        OR EXISTS (SELECT 1 FROM erp_audit_log AS a WHERE a.id = value ->> 0) \
     ORDER BY key \
     ON CONFLICT (id) DO UPDATE SET outcome = excluded.outcome, message = excluded.message, \
     document_type = excluded.document_type, document_id = excluded.document_id, \
     document_number = excluded.document_number, finished_at = excluded.finished_at, \
     document_text_id = excluded.document_text_id, \
     chain_id = excluded.chain_id, chain_seq = excluded.chain_seq, \
     chain_hash = excluded.chain_hash \
     RETURNING id";

/// A row for the audit writer: the entry, when it was written, and whether it is
/// finished (`finished_at`).
#[derive(Clone, Debug)]
pub(crate) struct NewRow {
    pub at: String,
    pub finished_at: Option<String>,
    pub source: &'static str,
    pub entry: AuditEntry,
    /// The replica running the call (its lease row in `erp_replicas`).
    pub replica_id: Option<std::sync::Arc<str>>,
    /// The row's link in its writer's hash chain, when it is written finished.
    pub link: Option<Link>,
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
            link: None,
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
            link: None,
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
    /// What another system answered a remote draft (`erp_outcome`, `erp_error`), if the
    /// call sent it anything.
    pub erp: Option<Box<ErpAnswer>>,
    /// The row's link in the writer's hash chain, written with the outcome.
    pub link: Option<Box<Link>>,
}

/// What another system answered a remote draft, for the audit row's `erp_outcome` and
/// `erp_error` columns: a short outcome ("created purchase.purchase 12 (P0012)",
/// "refused 400") and the system's own error text, kept as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ErpAnswer {
    pub outcome: String,
    pub error: Option<String>,
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
            erp: None,
            link: None,
        }
    }
}

/// Inserts `rows` with one statement and returns their ids, in order.
///
/// - One row, either backend: `VALUES` (20 parameters, the same text for every call, so
///   prepared once), its id from `RETURNING`.
/// - Several rows on SQLite: [`SQLITE_WRITE`], any number of them.
/// - Several rows on PostgreSQL (at most [`PG_ROWS_PER_STATEMENT`]): their ids drawn from
///   the table's sequence first, then one `VALUES` list with the ids given.
///
/// One writer inserts the rows of a statement in turn, so on SQLite they get consecutive
/// ids in the order given (checked).
pub(crate) async fn insert_many(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    rows: &[&NewRow],
) -> Result<Vec<AuditId>, sqlx::Error> {
    let query = match (rows, backend) {
        ([], _) => return Ok(Vec::new()),
        ([row], _) => bind_row(sqlx::query(values_insert(1, false)), row),
        (_, Backend::Sqlite) => return sqlite_write(conn, rows, &[]).await,
        // PostgreSQL gives several rows' `RETURNING` in no guaranteed order.
        (_, Backend::Postgres) => return pg_insert_with_ids(conn, rows).await,
    };
    let mut ids = Vec::with_capacity(1);
    for row in query.fetch_all(&mut *conn).await? {
        ids.push(row.try_get::<i64, _>(0)?);
    }
    consecutive(ids, rows.len())
}

/// The ids `RETURNING` gave for `expected` rows inserted by one statement, sorted: on one
/// writer they are consecutive in the order the rows were given, so sorted they match
/// the rows. An error if they are not that.
fn consecutive(mut ids: Vec<AuditId>, expected: usize) -> Result<Vec<AuditId>, sqlx::Error> {
    ids.sort_unstable();
    if ids.len() != expected || ids.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(sqlx::Error::Protocol(format!(
            "the database gave {} non-consecutive ids for {} audit rows",
            ids.len(),
            expected
        )));
    }
    Ok(ids)
}

/// `INSERT INTO erp_audit_log (...) VALUES (...), ...` for `rows` rows of `$N`
/// parameters: with an `id` column first (`with_ids`), or without it and `RETURNING id`.
fn values_insert(rows: usize, with_ids: bool) -> sqlx::AssertSqlSafe<String> {
    let per_row = COLUMN_COUNT + usize::from(with_ids);
    let mut sql = String::with_capacity(200 + rows * per_row * 5);
    sql.push_str("INSERT INTO erp_audit_log (");
    if with_ids {
        sql.push_str("id, ");
    }
    sql.push_str(COLUMNS);
    sql.push_str(") VALUES ");
    push_tuples(&mut sql, rows, per_row);
    if !with_ids {
        sql.push_str(" RETURNING id");
    }
    sqlx::AssertSqlSafe(sql)
}

/// PostgreSQL, several rows: ids drawn from the sequence, then the rows inserted with them.
async fn pg_insert_with_ids(
    conn: &mut sqlx::AnyConnection,
    rows: &[&NewRow],
) -> Result<Vec<AuditId>, sqlx::Error> {
    let ids: Vec<AuditId> = sqlx::query_scalar(
        "SELECT nextval(pg_get_serial_sequence('erp_audit_log', 'id')) \
         FROM generate_series(1, $1)",
    )
    .bind(rows.len() as i64)
    .fetch_all(&mut *conn)
    .await?;
    let mut query = sqlx::query(values_insert(rows.len(), true));
    for (id, row) in ids.iter().zip(rows) {
        query = bind_row(query.bind(*id), row);
    }
    query.execute(&mut *conn).await?;
    Ok(ids)
}

/// The [`COLUMNS`] values of `row`, in order, as elements of `t`.
fn row_columns<T: serde::ser::SerializeTuple>(row: &NewRow, t: &mut T) -> Result<(), T::Error> {
    let e = &row.entry;
    let doc = e.document.as_ref();
    t.serialize_element(&row.at)?;
    t.serialize_element(&row.finished_at)?;
    t.serialize_element(row.source)?;
    t.serialize_element(&e.agent_run_id)?;
    t.serialize_element(&e.tool_call_id)?;
    t.serialize_element(&e.tool_name)?;
    t.serialize_element(&e.user_id)?;
    t.serialize_element(&e.branch_id)?;
    t.serialize_element(&e.branch_code)?;
    t.serialize_element(&e.arguments)?;
    t.serialize_element(&e.outcome)?;
    t.serialize_element(&e.message)?;
    let (doc_id, doc_text_id) = DocumentId::columns(doc.map(|d| &d.id));
    t.serialize_element(&doc.map(|d| &d.doc_type))?;
    t.serialize_element(&doc_id)?;
    t.serialize_element(&doc.map(|d| &d.number))?;
    t.serialize_element(&e.model)?;
    t.serialize_element(&e.prompt_version)?;
    t.serialize_element(&e.step)?;
    t.serialize_element(&e.action_signature)?;
    t.serialize_element(&row.replica_id.as_deref())?;
    t.serialize_element(&e.surface)?;
    t.serialize_element(&doc_text_id)?;
    link_columns(row.link.as_ref(), t)
}

/// The `chain_id`, `chain_seq` and `chain_hash` of `link`, as elements of `t`.
fn link_columns<T: serde::ser::SerializeTuple>(
    link: Option<&Link>,
    t: &mut T,
) -> Result<(), T::Error> {
    t.serialize_element(&link.map(|l| &*l.chain))?;
    t.serialize_element(&link.map(|l| l.seq))?;
    t.serialize_element(&link.map(|l| &l.hash))
}

/// SQLite: inserts `rows` and applies `fins` with one statement ([`SQLITE_WRITE`]);
/// returns the new rows' ids, in order.
pub(crate) async fn sqlite_write(
    conn: &mut sqlx::AnyConnection,
    rows: &[&NewRow],
    fins: &[(AuditId, &Final)],
) -> Result<Vec<AuditId>, sqlx::Error> {
    let items: Vec<WriteItem<'_>> = rows
        .iter()
        .map(|r| WriteItem::Insert(r))
        .chain(fins.iter().map(|(id, fin)| WriteItem::Finish(*id, fin)))
        .collect();
    let json = serde_json::to_string(&items).expect("audit rows serialize to JSON");
    let returned = sqlx::query(SQLITE_WRITE)
        .bind(json)
        .fetch_all(&mut *conn)
        .await?;
    // `RETURNING` names the updated rows too.
    let finished: std::collections::HashSet<AuditId> = fins.iter().map(|(id, _)| *id).collect();
    let mut ids = Vec::with_capacity(rows.len());
    for row in returned {
        let id = row.try_get::<i64, _>(0)?;
        if !finished.contains(&id) {
            ids.push(id);
        }
    }
    consecutive(ids, rows.len())
}

/// One element of [`SQLITE_WRITE`]'s parameter.
enum WriteItem<'a> {
    Insert(&'a NewRow),
    Finish(AuditId, &'a Final),
}

impl serde::Serialize for WriteItem<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let none: Option<&str> = None;
        let mut t = s.serialize_tuple(COLUMN_COUNT + 1)?;
        match self {
            WriteItem::Insert(row) => {
                t.serialize_element(&none)?;
                row_columns(row, &mut t)?;
            }
            WriteItem::Finish(id, fin) => {
                let doc = fin.document.as_ref();
                t.serialize_element(id)?;
                // at, finished_at, source, agent_run_id, tool_call_id, tool_name, user_id,
                // branch_id, branch_code, arguments: kept (placeholders for NOT NULL ones).
                t.serialize_element("")?;
                t.serialize_element(&fin.finished_at)?;
                t.serialize_element("")?;
                t.serialize_element("")?;
                t.serialize_element(&none)?;
                t.serialize_element(&none)?;
                t.serialize_element("")?;
                t.serialize_element(&none)?;
                t.serialize_element(&none)?;
                t.serialize_element(&none)?;
                t.serialize_element(fin.outcome.as_str())?;
                t.serialize_element(&fin.message)?;
                let (doc_id, doc_text_id) = DocumentId::columns(doc.map(|d| &d.id));
                t.serialize_element(&doc.map(|d| &d.doc_type))?;
                t.serialize_element(&doc_id)?;
                t.serialize_element(&doc.map(|d| &d.number))?;
                // model, prompt_version, step, action_signature, replica_id, surface: kept.
                for _ in 0..6 {
                    t.serialize_element(&none)?;
                }
                t.serialize_element(&doc_text_id)?;
                link_columns(fin.link.as_deref(), &mut t)?;
            }
        }
        t.end()
    }
}

/// Binds the columns of `row` (in `COLUMNS` order) to `query`.
fn bind_row<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    row: &NewRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    let e = &row.entry;
    let doc = e.document.as_ref();
    let (doc_id, doc_text_id) = DocumentId::columns(doc.map(|d| &d.id));
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
        .bind(doc_id)
        .bind(doc.map(|d| d.number.clone()))
        .bind(e.model.clone())
        .bind(e.prompt_version.clone())
        .bind(e.step)
        .bind(e.action_signature.clone())
        .bind(row.replica_id.as_deref().map(str::to_string))
        .bind(e.surface.clone())
        .bind(doc_text_id)
        .bind(row.link.as_ref().map(|l| l.chain.to_string()))
        .bind(row.link.as_ref().map(|l| l.seq))
        .bind(row.link.as_ref().map(|l| l.hash.clone()))
}

/// Applies the final outcomes `fins` (row id, outcome) with one statement (on PostgreSQL,
/// at most [`PG_ROWS_PER_STATEMENT`] of them).
pub(crate) async fn finish_many(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    fins: &[(AuditId, &Final)],
) -> Result<(), sqlx::Error> {
    match fins {
        [] => return Ok(()),
        // One: the single-row statement, the same text every time.
        [(id, fin)] => return finish(&mut *conn, *id, fin).await,
        _ => {}
    }
    if backend == Backend::Sqlite {
        return sqlite_write(conn, &[], fins).await.map(|_| ());
    }
    let mut sql = String::from(
        "UPDATE erp_audit_log SET outcome = v.column2, message = v.column3, \
         document_type = v.column4, document_id = v.column5, document_number = v.column6, \
         finished_at = v.column7, document_text_id = v.column8, chain_id = v.column9, \
         chain_seq = v.column10, chain_hash = v.column11 FROM (VALUES ",
    );
    push_tuples(&mut sql, fins.len(), 11);
    sql.push_str(") AS v WHERE erp_audit_log.id = v.column1");
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (id, fin) in fins {
        let doc = fin.document.as_ref();
        let (doc_id, doc_text_id) = DocumentId::columns(doc.map(|d| &d.id));
        query = query
            .bind(*id)
            .bind(fin.outcome.as_str())
            .bind(fin.message.clone())
            .bind(doc.map(|d| d.doc_type.clone()))
            .bind(doc_id)
            .bind(doc.map(|d| d.number.clone()))
            .bind(fin.finished_at.clone())
            .bind(doc_text_id)
            .bind(fin.link.as_ref().map(|l| l.chain.to_string()))
            .bind(fin.link.as_ref().map(|l| l.seq))
            .bind(fin.link.as_ref().map(|l| l.hash.clone()));
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
    let (doc_id, doc_text_id) = DocumentId::columns(document.map(|d| &d.id));
    sqlx::query(
        "UPDATE erp_audit_log SET outcome = $1, message = $2, document_type = $3, \
         document_id = $4, document_number = $5, finished_at = $6, document_text_id = $8, \
         chain_id = $9, chain_seq = $10, chain_hash = $11 WHERE id = $7",
    )
    .bind(fin.outcome.as_str())
    .bind(fin.message.clone())
    .bind(document.map(|d| d.doc_type.clone()))
    .bind(doc_id)
    .bind(document.map(|d| d.number.clone()))
    .bind(fin.finished_at.clone())
    .bind(id)
    .bind(doc_text_id)
    .bind(fin.link.as_ref().map(|l| l.chain.to_string()))
    .bind(fin.link.as_ref().map(|l| l.seq))
    .bind(fin.link.as_ref().map(|l| l.hash.clone()))
    .execute(executor)
    .await?;
    Ok(())
}

/// Writes what another system answered (`erp_outcome`, `erp_error`) on the rows of
/// `fins` that carry it; the audit writer runs it in the batch that finishes them.
pub(crate) async fn record_erp_answers(
    conn: &mut sqlx::AnyConnection,
    fins: &[(AuditId, &Final)],
) -> Result<(), sqlx::Error> {
    for (id, fin) in fins {
        let Some(erp) = &fin.erp else { continue };
        sqlx::query("UPDATE erp_audit_log SET erp_outcome = $1, erp_error = $2 WHERE id = $3")
            .bind(erp.outcome.clone())
            .bind(erp.error.clone())
            .bind(*id)
            .execute(&mut *conn)
            .await?;
    }
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

/// PostgreSQL: completes the claimed key row and finishes the call's audit row in one
/// statement (a data-modifying `WITH`), inside the draft's transaction, as of
/// `finished_at`. The audit writer links the row to its chain after the commit.
pub(crate) async fn complete_and_finish(
    conn: &mut sqlx::AnyConnection,
    key: &crate::idempotency::IdempotencyKey,
    done: &super::keys::Completed<'_>,
    finished_at: &str,
) -> Result<(), sqlx::Error> {
    super::keys::bind_completed(
        sqlx::query(
            "WITH k AS (UPDATE erp_idempotency_keys SET document_type = $1, document_id = $2, \
             document_number = $3, response = $4, response_text = $5, audit_id = $6, \
             document_text_id = $7 \
             WHERE agent_run_id = $8 AND client_ref = $9 RETURNING 1) \
             UPDATE erp_audit_log SET outcome = $10, message = NULL, document_type = $1, \
             document_id = $2, document_number = $3, finished_at = $11, document_text_id = $7 \
             WHERE id = $6",
        ),
        done,
    )
    .bind(key.agent_run_id.clone())
    .bind(key.client_ref.clone())
    .bind(crate::audit::Outcome::Ok.as_str())
    .bind(finished_at.to_string())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Closes the row `id` as `interrupted` with `message`, linked to the document that
/// committed (type, id, number) if one did, unless it is no longer at `attempt`.
/// Returns how many rows changed (0 or 1).
pub(crate) async fn close_interrupted(
    pool: &sqlx::AnyPool,
    id: AuditId,
    message: &str,
    document: Option<&DocumentRef>,
) -> Result<u64, sqlx::Error> {
    let (doc_id, doc_text_id) = DocumentId::columns(document.map(|d| &d.id));
    let updated = sqlx::query(
        "UPDATE erp_audit_log SET outcome = $1, finished_at = $2, message = $3, \
         document_type = $4, document_id = $5, document_number = $6, document_text_id = $9 \
         WHERE id = $7 AND outcome = $8",
    )
    .bind(Outcome::Interrupted.as_str())
    .bind(now_text())
    .bind(message)
    .bind(document.map(|d| d.doc_type.clone()))
    .bind(doc_id)
    .bind(document.map(|d| d.number.clone()))
    .bind(id)
    .bind(ATTEMPT)
    .bind(doc_text_id)
    .execute(pool)
    .await?;
    Ok(updated.rows_affected())
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
                 document_id, document_text_id, document_number, model, prompt_version, step, \
                 action_signature, surface FROM erp_audit_log"
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
    let document = document_of_row(row)?;
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
        surface: row.try_get("surface")?,
        call_key: None,
        result_text: None,
    })
}
