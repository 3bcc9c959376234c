//! The audit log's SQL, all of what writes `erp_audit_log`: rows inserted in batches by
//! the audit writer (`store/writer.rs`), finished in batches or inside a draft's
//! transaction (with its idempotency key, PostgreSQL), closed by the recovery pass
//! (`store/recover.rs`, which reads the open rows itself), and read back for reports and
//! the review of a run. Every statement that writes a row is built from the one column
//! table, [`COLUMNS`](super::audit_row::COLUMNS).

use std::sync::LazyLock;

use sqlx::Row;

use super::audit_row::{COLUMNS, Field, Final, NewRow, names, on_finish};
use super::document::document_of_row;
use crate::audit::{ATTEMPT, AuditId, AuditRecord, Outcome, SOURCE_RUNTIME, now_text};
use crate::tool::handles::{Backend, DocumentId, DocumentRef};

/// Rows (or outcome updates) per multi-row statement on PostgreSQL (28 parameters each at
/// most). On SQLite any number is one statement with one parameter ([`SQLITE_WRITE`]).
pub(crate) const PG_ROWS_PER_STATEMENT: usize = 64;

/// One row inserted, its id returned: the same text for every call, so prepared once.
static INSERT_ONE: LazyLock<String> = LazyLock::new(|| values_insert(1, false));

/// SQLite: every batch of more than one row or outcome update, new rows and updates alike,
/// is this one statement, so it needs no transaction. Its one parameter is a JSON array
/// of `[id, <COLUMNS values>]`: `id` null for a new row; for an update the row's id, its
/// outcome columns, and placeholders for the rest, which `DO UPDATE` leaves as they are.
/// An update whose row is not there is skipped (as an `UPDATE` would), never inserted.
///
/// One text for every batch keeps it prepared once in the connection's statement cache;
/// a `VALUES` list of `n` rows × 27 `$N` parameters is a new text for every `n`, parsed
/// again whenever it has left the cache, and SQLite's parse and sqlx's binding of numbered
/// parameters grow with the square of their count.
static SQLITE_WRITE: LazyLock<String> = LazyLock::new(|| {
    let values: Vec<String> = (0..=COLUMNS.len())
        .map(|i| format!("value ->> {i}"))
        .collect();
    let updates: Vec<String> = on_finish()
        .map(|(c, _)| format!("{0} = excluded.{0}", c.name))
        .collect();
    format!(
        "INSERT INTO erp_audit_log (id, {}) SELECT {} FROM jsonb_each($1) \
         WHERE value ->> 0 IS NULL \
            OR EXISTS (SELECT 1 FROM erp_audit_log AS a WHERE a.id = value ->> 0) \
         ORDER BY key ON CONFLICT (id) DO UPDATE SET {} RETURNING id",
        names(COLUMNS.iter()),
        values.join(", "),
        updates.join(", ")
    )
});

/// One call's outcome written on its row (`$1..` the outcome columns, then the id).
static FINISH_ONE: LazyLock<String> = LazyLock::new(|| {
    let sets: Vec<String> = on_finish()
        .enumerate()
        .map(|(i, (c, _))| format!("{} = ${}", c.name, i + 1))
        .collect();
    format!(
        "UPDATE erp_audit_log SET {} WHERE id = ${}",
        sets.join(", "),
        sets.len() + 1
    )
});

/// The same, for a row whose `at` is known: PostgreSQL looks in its month's partition
/// alone instead of in every partition (`$1..` the outcome columns, then the id and `at`).
static FINISH_ONE_AT: LazyLock<String> =
    LazyLock::new(|| format!("{} AND at = ${}", *FINISH_ONE, on_finish().count() + 2));

/// Inserts `rows` with one statement and returns their ids, in order.
///
/// - One row, either backend: `VALUES` ([`INSERT_ONE`]), its id from `RETURNING`.
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
        ([row], _) => bind_row(sqlx::query(INSERT_ONE.as_str()), row),
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
fn values_insert(rows: usize, with_ids: bool) -> String {
    let per_row = COLUMNS.len() + usize::from(with_ids);
    let mut sql = String::with_capacity(300 + rows * per_row * 5);
    sql.push_str("INSERT INTO erp_audit_log (");
    if with_ids {
        sql.push_str("id, ");
    }
    sql.push_str(&names(COLUMNS.iter()));
    sql.push_str(") VALUES ");
    push_tuples(&mut sql, rows, per_row);
    if !with_ids {
        sql.push_str(" RETURNING id");
    }
    sql
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
    let mut query = sqlx::query(sqlx::AssertSqlSafe(values_insert(rows.len(), true)));
    for (id, row) in ids.iter().zip(rows) {
        query = bind_row(query.bind(*id), row);
    }
    query.execute(&mut *conn).await?;
    Ok(ids)
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
    let returned = sqlx::query(SQLITE_WRITE.as_str())
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
        let mut t = s.serialize_tuple(COLUMNS.len() + 1)?;
        match self {
            WriteItem::Insert(row) => {
                t.serialize_element(&None::<i64>)?;
                for column in COLUMNS {
                    t.serialize_element(&(column.of_row)(row))?;
                }
            }
            WriteItem::Finish(id, fin) => {
                t.serialize_element(id)?;
                for column in COLUMNS {
                    // Columns the outcome does not set are kept by `DO UPDATE`: only
                    // placeholders (for `NOT NULL` ones, a value).
                    match (column.of_final, column.required) {
                        (Some(get), _) => t.serialize_element(&get(fin))?,
                        (None, true) => t.serialize_element("")?,
                        (None, false) => t.serialize_element(&Field::Text(None))?,
                    }
                }
            }
        }
        t.end()
    }
}

/// Binds the columns of `row` (in [`COLUMNS`] order) to `query`.
fn bind_row<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    row: &NewRow,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    for column in COLUMNS {
        query = (column.of_row)(row).bind(query);
    }
    query
}

/// Binds the outcome columns of `fin` to `query`.
fn bind_final<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
    fin: &Final,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    for (_, get) in on_finish() {
        query = get(fin).bind(query);
    }
    query
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
    let sets: Vec<String> = on_finish()
        .enumerate()
        .map(|(i, (c, _))| format!("{} = v.column{}", c.name, i + 2))
        .collect();
    // With every row's `at` known, each is looked for in its month's partition alone.
    let ats: Option<Vec<&String>> = fins.iter().map(|(_, f)| f.row_at.as_ref()).collect();
    let per_row = sets.len() + 1 + usize::from(ats.is_some());
    let mut sql = format!("UPDATE erp_audit_log SET {} FROM (VALUES ", sets.join(", "));
    push_tuples(&mut sql, fins.len(), per_row);
    sql.push_str(") AS v WHERE erp_audit_log.id = v.column1");
    if ats.is_some() {
        sql.push_str(&format!(" AND erp_audit_log.at = v.column{per_row}"));
    }
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (id, fin) in fins {
        query = bind_final(query.bind(*id), fin);
        if let Some(at) = fin.row_at.as_ref().filter(|_| ats.is_some()) {
            query = query.bind(at.clone());
        }
    }
    let done = query.execute(&mut *conn).await?.rows_affected();
    if ats.is_some() && done < fins.len() as u64 {
        // A row not in the partition its `at` names: each by its id alone.
        for (id, fin) in fins {
            let mut by_id = (*fin).clone();
            by_id.row_at = None;
            finish(&mut *conn, *id, &by_id).await?;
        }
    }
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

/// Sets the final outcome of a tool call's row on `conn` (a draft's transaction on
/// PostgreSQL, where audit and documents share the database): in its month's partition
/// when the writer knows the row's `at`, anywhere otherwise (or if it was not there).
pub(crate) async fn finish(
    conn: &mut sqlx::AnyConnection,
    id: AuditId,
    fin: &Final,
) -> Result<(), sqlx::Error> {
    if let Some(at) = &fin.row_at {
        let done = bind_final(sqlx::query(FINISH_ONE_AT.as_str()), fin)
            .bind(id)
            .bind(at.clone())
            .execute(&mut *conn)
            .await?;
        if done.rows_affected() > 0 {
            return Ok(());
        }
    }
    bind_final(sqlx::query(FINISH_ONE.as_str()), fin)
        .bind(id)
        .execute(&mut *conn)
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

/// PostgreSQL: completes the claimed key row and finishes the call's audit row in one
/// statement (a data-modifying `WITH`), inside the draft's transaction, as of
/// `finished_at`. The audit writer links the row to its chain after the commit.
pub(crate) async fn complete_and_finish(
    conn: &mut sqlx::AnyConnection,
    key: &crate::idempotency::IdempotencyKey,
    done: &super::keys::Completed<'_>,
    fin: &Final,
) -> Result<(), sqlx::Error> {
    const COMPLETE: &str = "WITH k AS (UPDATE erp_idempotency_keys SET document_type = $1, \
         document_id = $2, document_number = $3, response = $4, response_text = $5, \
         audit_id = $6, document_text_id = $7 \
         WHERE agent_run_id = $8 AND client_ref = $9 RETURNING 1) \
         UPDATE erp_audit_log SET outcome = $10, message = NULL, document_type = $1, \
         document_id = $2, document_number = $3, finished_at = $11, document_text_id = $7 \
         WHERE id = $6";
    // With the row's `at`, in its month's partition alone; by its id if it was not there.
    static COMPLETE_AT: LazyLock<String> = LazyLock::new(|| format!("{COMPLETE} AND at = $12"));
    let statement = |sql: &'static str| {
        super::keys::bind_completed(sqlx::query(sql), done)
            .bind(key.agent_run_id.clone())
            .bind(key.client_ref.clone())
            .bind(crate::audit::Outcome::Ok.as_str())
            .bind(fin.finished_at.clone())
    };
    if let Some(at) = &fin.row_at {
        let finished = statement(COMPLETE_AT.as_str())
            .bind(at.clone())
            .execute(&mut *conn)
            .await?;
        if finished.rows_affected() > 0 {
            return Ok(());
        }
    }
    statement(COMPLETE).execute(&mut *conn).await?;
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
                 action_signature, surface, call_key, result_text, result_tokens FROM erp_audit_log"
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
        call_key: row.try_get("call_key")?,
        result_text: row.try_get("result_text")?,
        result_tokens: row.try_get("result_tokens")?,
    })
}
