//! A sketch of the fix measured for the read-call overhead: audit rows handed to a
//! background writer over a bounded channel and written in batches (multi-row `INSERT`s,
//! one transaction per batch), instead of two committed statements on the call path.
//! Used only to measure what such a writer would cost per call; the framework does not
//! use it.

use erp_tools_core::sqlx;
use erp_tools_core::{AuditEntry, Database};
use tokio::sync::mpsc;

use crate::audit_columns::AuditColumns;
use crate::fixtures::{SOURCE_RUNTIME, now_text};

/// Largest batch written in one transaction.
pub const MAX_BATCH: usize = 256;
/// Rows per multi-row `INSERT` (17 parameters each).
const ROWS_PER_STATEMENT: usize = 64;

/// Inserts `rows` as finished `ok` rows of the runtime with one multi-row `INSERT`.
async fn insert_rows(
    conn: &mut sqlx::AnyConnection,
    rows: &[AuditEntry],
    now: &str,
) -> Result<(), sqlx::Error> {
    let mut sql = String::from(
        "INSERT INTO bench_audit_log (at, finished_at, source, agent_run_id, tool_call_id, \
         tool_name, user_id, branch_id, branch_code, arguments, outcome, message, \
         document_type, document_id, document_number, model, prompt_version) VALUES ",
    );
    for r in 0..rows.len() {
        if r > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        for c in 0..17 {
            if c > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("${}", r * 17 + c + 1));
        }
        sql.push(')');
    }
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
    for e in rows {
        query = query
            .bind(now.to_string())
            .bind(Some(now.to_string()))
            .bind(SOURCE_RUNTIME)
            .call_columns(e)
            .bind(e.message.clone())
            .bind(None::<String>)
            .bind(None::<i64>)
            .bind(None::<String>)
            .model_columns(e);
    }
    query.execute(conn).await?;
    Ok(())
}

/// The sending side of the background audit writer.
#[derive(Clone)]
pub struct AuditBatcher {
    tx: mpsc::Sender<AuditEntry>,
}

impl AuditBatcher {
    /// Starts the writer on `db`; it ends (returning the rows written) when every sender
    /// is dropped.
    pub fn start(db: Database) -> (AuditBatcher, tokio::task::JoinHandle<u64>) {
        let (tx, mut rx) = mpsc::channel::<AuditEntry>(4 * MAX_BATCH);
        let writer = tokio::spawn(async move {
            let mut written = 0u64;
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                let now = now_text();
                let mut txn = db.pool().begin().await.expect("begin audit batch");
                for chunk in batch.chunks(ROWS_PER_STATEMENT) {
                    insert_rows(&mut txn, chunk, &now)
                        .await
                        .expect("insert audit rows");
                    written += chunk.len() as u64;
                }
                txn.commit().await.expect("commit audit batch");
                batch.clear();
            }
            written
        });
        (AuditBatcher { tx }, writer)
    }

    /// Queues one row; waits only when the writer is `4 × MAX_BATCH` rows behind.
    pub async fn record(&self, entry: AuditEntry) {
        self.tx
            .send(entry)
            .await
            .expect("the audit writer is running");
    }
}
