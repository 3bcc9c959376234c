//! The audit log's growth: monthly partitions on PostgreSQL, and retention that archives
//! whole months instead of deleting rows ([`Database::archive_audit_log`]).
//!
//! A month's rows hold whole hash chains (one per writer and month, `store/chain.rs`), so
//! a month is archived with its chain heads and what stays verifies without it.

use std::io::Write;
use std::path::Path;

use futures::TryStreamExt;
use sqlx::{AnyPool, Row};

use super::archive_record::AuditArchive;
use super::audit_row::{COLUMNS, Stored};
use super::chain_verify;
use super::error::StoreError;
use super::partitions::{
    create_partition, first_of_month, month_text, next_month, parse_month, partition_name,
};
use super::{Database, replicas};
use crate::audit::ATTEMPT;
use crate::tool::handles::Backend;

/// Rows deleted per statement when SQLite's archived month is removed: each batch is a
/// short write the audit writer waits for at most once.
pub(crate) const SQLITE_DELETE_BATCH: i64 = 5_000;

impl Database {
    /// Archives every month of the audit log before `before` (`"YYYY-MM"`, at most the
    /// current month): each month's rows are written to `dir` as JSON lines
    /// (`erp_audit_log_YYYY-MM.jsonl`, every column by name, in chain order) with a
    /// heads file (`erp_audit_log_YYYY-MM.heads.json`: the month, the row count, the
    /// file's SHA-256 and the last link of each of its hash chains), recorded in
    /// `erp_audit_archives`, and then taken out of the live log: on PostgreSQL the month's
    /// partition is detached and kept as the table `erp_audit_archived_YYYY_MM` (drop it
    /// once the export is loaded where it belongs); on SQLite its rows are deleted in
    /// batches of 5 000, each a short write. Nothing is deleted before its file is
    /// written and flushed.
    ///
    /// A month with a call still open (`attempt`) or a finished row not yet in its chain
    /// is left for a later run (an error names it); the months before it are archived.
    /// Idempotency keys, agent runs and review sessions keep their own retention.
    pub async fn archive_audit_log(
        &self,
        before: &str,
        dir: &Path,
    ) -> Result<Vec<AuditArchive>, StoreError> {
        let invalid = |why: String| StoreError::Archive(why);
        let before = parse_month(before)
            .ok_or_else(|| invalid(format!("{before:?} is not a month: write it as YYYY-MM")))?;
        let this = first_of_month(chrono::Utc::now().date_naive());
        if before > this {
            return Err(invalid(format!(
                "{} is after the current month ({}): only past months can be archived",
                month_text(before),
                month_text(this)
            )));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| invalid(format!("cannot create {}: {e}", dir.display())))?;
        self.flush_audit().await?;
        // Rows a stopped process left finished but unlinked join their chains first.
        let live = replicas::live(self.pool(), self.replica_id(), chrono::Utc::now()).await?;
        self.inner.audit.link_handle().sweep(live).await?;
        let pool = &self.inner.audit_writer_pool;
        let oldest: Option<String> = sqlx::query_scalar("SELECT MIN(at) FROM erp_audit_log")
            .fetch_one(pool)
            .await?;
        let Some(mut month) = oldest
            .as_deref()
            .and_then(|at| at.get(..7))
            .and_then(parse_month)
        else {
            return Ok(Vec::new());
        };
        let mut done = Vec::new();
        while month < before {
            if let Some(archive) = self.archive_month(month, dir).await? {
                done.push(archive);
            }
            month = next_month(month);
        }
        Ok(done)
    }

    /// Loads audit rows written at other times: an earlier system's log, or generated
    /// traffic for a benchmark. Each `(at, entry)` becomes a finished row written at `at`
    /// (RFC 3339 UTC text with microseconds, as the framework writes times, e.g.
    /// `"2026-01-05T10:00:00.000000Z"`, not in the future) with `source = "backfill"`,
    /// linked by this `Database`'s audit writer into its hash chain of `at`'s month.
    /// On PostgreSQL a month without a partition goes to `erp_audit_log_default` (create
    /// the partitions first with [`Database::ensure_audit_partitions`]). Returns how many
    /// rows were written.
    pub async fn backfill_audit(
        &self,
        rows: impl IntoIterator<Item = (String, crate::AuditEntry)>,
    ) -> Result<u64, StoreError> {
        let now = crate::audit::now_text();
        let mut pending = Vec::new();
        let mut written = 0;
        for (at, entry) in rows {
            let parsed = chrono::DateTime::parse_from_rfc3339(&at).ok();
            if parsed.is_none() || at.len() != now.len() || !at.ends_with('Z') || at > now {
                return Err(StoreError::BadInput(format!(
                    "backfill: {at:?} is not a past time written as the framework writes them \
                     (RFC 3339 UTC with microseconds, like {now:?})"
                )));
            }
            let mut row = super::audit_row::NewRow::finished(entry, crate::audit::SOURCE_BACKFILL);
            row.finished_at = Some(at.clone());
            row.at = at;
            pending.push(self.inner.audit.insert(row).await?);
            if pending.len() >= super::writer::QUEUE_CAPACITY {
                for row in pending.drain(..) {
                    row.durable().await?;
                    written += 1;
                }
            }
        }
        for row in pending {
            row.durable().await?;
            written += 1;
        }
        Ok(written)
    }

    /// PostgreSQL: creates the audit log's monthly partitions from `from` to `to`
    /// (`YYYY-MM`, both included) unless they exist (every server creates this month's
    /// and the next one's by itself). Nothing to do on SQLite.
    pub async fn ensure_audit_partitions(&self, from: &str, to: &str) -> Result<(), StoreError> {
        let month = |text: &str| {
            parse_month(text).ok_or_else(|| {
                StoreError::BadInput(format!("{text:?} is not a month: write it as YYYY-MM"))
            })
        };
        let (mut m, last) = (month(from)?, month(to)?);
        if self.backend() == Backend::Postgres {
            while m <= last {
                create_partition(self.pool(), m).await?;
                m = next_month(m);
            }
        }
        Ok(())
    }

    /// Archives one month (see [`Database::archive_audit_log`]); `None` if it has no rows.
    async fn archive_month(
        &self,
        month: chrono::NaiveDate,
        dir: &Path,
    ) -> Result<Option<AuditArchive>, StoreError> {
        let pool = &self.inner.audit_writer_pool;
        let backend = self.backend();
        let (from, to) = (month_text(month), month_text(next_month(month)));
        let already: Option<String> =
            sqlx::query_scalar("SELECT heads FROM erp_audit_archives WHERE month = $1")
                .bind(from.clone())
                .fetch_optional(pool)
                .await?;
        if already.is_some() {
            // Archived before; on SQLite a deletion stopped half-way is finished.
            if backend == Backend::Sqlite {
                delete_month(pool, &from, &to).await?;
                forget_runs(&mut *pool.acquire().await?, &to).await?;
            }
            return Ok(None);
        }
        let (open, unlinked): (i64, i64) = {
            let row = sqlx::query(
                "SELECT COUNT(CASE WHEN outcome = $3 THEN 1 END), \
                 COUNT(CASE WHEN outcome <> $3 AND chain_seq IS NULL \
                   AND id > (SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin) THEN 1 END) \
                 FROM erp_audit_log WHERE at >= $1 AND at < $2",
            )
            .bind(from.clone())
            .bind(to.clone())
            .bind(ATTEMPT)
            .fetch_one(pool)
            .await?;
            (row.try_get(0)?, row.try_get(1)?)
        };
        if open > 0 || unlinked > 0 {
            return Err(StoreError::Archive(format!(
                "{from} has {open} call(s) still open and {unlinked} finished row(s) not yet in \
                 their chain: run the recovery pass (Database::recover_interrupted) and archive \
                 again"
            )));
        }
        let file = dir.join(format!("erp_audit_log_{from}.jsonl"));
        let (rows, sha256) = export_month(pool, &from, &to, &file).await?;
        if rows == 0 {
            let _ = std::fs::remove_file(&file);
            return Ok(None);
        }
        let heads = chain_verify::heads(pool, Some(&from)).await?;
        let archive = AuditArchive {
            month: from.clone(),
            file: file.clone(),
            rows,
            sha256,
            heads,
        };
        let record = serde_json::to_string(&archive).expect("an archive serializes");
        let heads_file = dir.join(format!("erp_audit_log_{from}.heads.json"));
        write_synced(&heads_file, record.as_bytes())?;
        match backend {
            Backend::Postgres => {
                let mut tx = pool.begin().await?;
                let count: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM erp_audit_log WHERE at >= $1 AND at < $2",
                )
                .bind(from.clone())
                .bind(to.clone())
                .fetch_one(&mut *tx)
                .await?;
                if count as u64 != rows {
                    return Err(StoreError::Archive(format!(
                        "{from} changed while it was exported ({rows} rows written, {count} \
                         now): archive again"
                    )));
                }
                record_archive(&mut tx, &archive, &record).await?;
                let partition = partition_name(month);
                let archived = format!("erp_audit_archived_{}", month.format("%Y_%m"));
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "ALTER TABLE erp_audit_log DETACH PARTITION {partition}; \
                     ALTER TABLE {partition} RENAME TO {archived}"
                )))
                .execute(&mut *tx)
                .await
                .map_err(|e| {
                    StoreError::Archive(format!(
                        "cannot detach the partition {partition} of {from} (rows of a month \
                         without a partition are in erp_audit_log_default and stay): {e}"
                    ))
                })?;
                forget_runs(&mut tx, &to).await?;
                tx.commit().await?;
            }
            Backend::Sqlite => {
                let mut conn = pool.acquire().await?;
                record_archive(&mut conn, &archive, &record).await?;
                drop(conn);
                delete_month(pool, &from, &to).await?;
                forget_runs(&mut *pool.acquire().await?, &to).await?;
            }
        }
        tracing::info!(month = %from, rows, file = %file.display(), "archived a month of the audit log");
        Ok(Some(archive))
    }
}

/// Removes the Runs page's lines of runs that ended before `to` (all their rows are
/// archived); a run that went on past it keeps its line, its counts with the archived
/// rows.
async fn forget_runs(conn: &mut sqlx::AnyConnection, to: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM erp_audit_run_tools WHERE agent_run_id IN \
         (SELECT agent_run_id FROM erp_audit_runs WHERE last_at < $1)",
    )
    .bind(to.to_string())
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM erp_audit_runs WHERE last_at < $1")
        .bind(to.to_string())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn record_archive(
    conn: &mut sqlx::AnyConnection,
    archive: &AuditArchive,
    record: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO erp_audit_archives (month, file, rows, heads, archived_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(archive.month.clone())
    .bind(archive.file.display().to_string())
    .bind(archive.rows as i64)
    .bind(record.to_string())
    .bind(crate::audit::now_text())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// SQLite: deletes the rows of the month `from..to` in batches of
/// [`SQLITE_DELETE_BATCH`], each its own statement.
async fn delete_month(pool: &AnyPool, from: &str, to: &str) -> Result<u64, sqlx::Error> {
    let mut deleted = 0;
    loop {
        let done = sqlx::query(
            "DELETE FROM erp_audit_log WHERE id IN (SELECT id FROM erp_audit_log \
             WHERE at >= $1 AND at < $2 LIMIT $3)",
        )
        .bind(from.to_string())
        .bind(to.to_string())
        .bind(SQLITE_DELETE_BATCH)
        .execute(pool)
        .await?;
        deleted += done.rows_affected();
        if done.rows_affected() == 0 {
            return Ok(deleted);
        }
        tokio::task::yield_now().await;
    }
}

/// Writes the rows of `from..to` to `file` as JSON lines, in chain order; returns how
/// many and the file's SHA-256.
async fn export_month(
    pool: &AnyPool,
    from: &str,
    to: &str,
    file: &Path,
) -> Result<(u64, String), StoreError> {
    use sha2::{Digest, Sha256};
    let io =
        |e: std::io::Error| StoreError::Archive(format!("cannot write {}: {e}", file.display()));
    let partial = file.with_extension("jsonl.partial");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&partial).map_err(io)?);
    let mut hash = Sha256::new();
    let sql = format!(
        "SELECT id, {} FROM erp_audit_log WHERE at >= $1 AND at < $2 \
         ORDER BY chain_id IS NULL, chain_id, chain_seq, id",
        super::audit_row::names(COLUMNS.iter())
    );
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(from.to_string())
        .bind(to.to_string())
        .fetch(pool);
    let mut count = 0u64;
    while let Some(row) = rows.try_next().await? {
        let mut line = serde_json::Map::new();
        line.insert("id".into(), row.try_get::<i64, _>(0)?.into());
        for (i, column) in COLUMNS.iter().enumerate() {
            let value = serde_json::to_value(Stored::read(&row, i + 1, column)?.field())
                .expect("a column serializes");
            line.insert(column.name.to_string(), value);
        }
        let mut text = serde_json::to_vec(&line).expect("a row serializes");
        text.push(b'\n');
        hash.update(&text);
        out.write_all(&text).map_err(io)?;
        count += 1;
    }
    let file_handle = out.into_inner().map_err(|e| io(e.into_error()))?;
    file_handle.sync_all().map_err(io)?;
    std::fs::rename(&partial, file).map_err(io)?;
    Ok((count, hex::encode(hash.finalize())))
}

/// Writes `bytes` to `path` and flushes it to the disk.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io =
        |e: std::io::Error| StoreError::Archive(format!("cannot write {}: {e}", path.display()));
    let mut file = std::fs::File::create(path).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)
}
