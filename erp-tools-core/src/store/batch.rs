//! One batch of the audit writer (`store/writer.rs`): rows inserted, outcomes applied,
//! rows finished elsewhere linked into the hash chain (`store/chain.rs`), atomically.

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection};

use super::audit;
use super::audit_row::{Final, NewRow};
use super::chain::{self, Chain};
use crate::audit::AuditId;
use crate::tool::handles::Backend;

/// What one batch writes.
#[derive(Default)]
pub(super) struct Work {
    /// New rows (given their links here when finished).
    pub(super) rows: Vec<NewRow>,
    /// Outcomes of rows this writer inserted (given their links here).
    pub(super) fins: Vec<(AuditId, Final)>,
    /// Rows finished outside the writer, to link.
    pub(super) links: Vec<(AuditId, Option<Final>)>,
    /// A sweep for unlinked rows, but those of these live replicas.
    pub(super) sweep: Option<Vec<String>>,
    /// How many rows the sweep linked.
    pub(super) swept: u64,
}

impl Work {
    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
            && self.fins.is_empty()
            && self.links.is_empty()
            && self.sweep.is_none()
    }
}

/// [`commit_on`] a connection of `pool`.
pub(super) async fn commit(
    pool: &AnyPool,
    backend: Backend,
    chain: &tokio::sync::Mutex<Chain>,
    work: &mut Work,
) -> Result<Vec<AuditId>, sqlx::Error> {
    let conn = pool.acquire().await?;
    let mut chain = chain.lock().await;
    commit_closing_on_error(conn, backend, &mut chain, work).await
}

/// [`commit_on`] `conn`, closed if the batch fails: the audit pool does not test a
/// connection before handing it out (that is a round trip per batch), so a broken one must
/// not go back to it. The chain's head is read again after a failure.
pub(super) async fn commit_closing_on_error(
    mut conn: PoolConnection<Any>,
    backend: Backend,
    chain: &mut Chain,
    work: &mut Work,
) -> Result<Vec<AuditId>, sqlx::Error> {
    let result = commit_on(&mut conn, backend, chain, work).await;
    if result.is_err() {
        chain.failed();
        let _ = conn.close().await;
    }
    result
}

/// Gives the finished rows and outcomes of `work` their links in `chain` (see
/// `store/chain.rs`), reading the heads of chains not known yet on `conn`; returns the
/// outcomes of rows this writer does not know (linked after they are written, from what
/// the table holds).
async fn assign_links(
    conn: &mut AnyConnection,
    chain: &Chain,
    batch: &mut chain::Batch,
    work: &mut Work,
) -> Result<Vec<AuditId>, sqlx::Error> {
    for row in &mut work.rows {
        row.link = None;
        row.attempt_hash = None;
        if row.finished_at.is_some() {
            let name = chain.chain_for(&row.at);
            Chain::load(batch, conn, &name).await?;
            let link = batch.link(&name, &row.chained());
            row.link = Some(link);
        } else if chain.enabled() {
            row.attempt_hash = Some(hex::encode(chain::attempt_hash(&row.chained())));
        }
    }
    let mut unknown = Vec::new();
    for (id, fin) in &mut work.fins {
        fin.link = None;
        match chain.finished_row(*id, fin) {
            Some(row) => {
                let name = chain.chain_for(&row.at);
                Chain::load(batch, conn, &name).await?;
                let link = batch.link(&name, &row.chained());
                fin.link = Some(Box::new(link));
                fin.row_at = Some(row.at);
            }
            None => unknown.push(*id),
        }
    }
    Ok(unknown)
}

/// `work` written atomically: rows inserted (their ids returned in order), outcomes
/// applied, rows finished elsewhere linked, each finished row given its link.
///
/// SQLite: every batch of rows and outcomes is one statement (one row, one update, or
/// [`audit::sqlite_write`] for anything more). PostgreSQL: one row, or up to
/// [`audit::PG_ROWS_PER_STATEMENT`] updates alone, is one statement run on its own (a
/// single statement commits atomically, and the `BEGIN` and `COMMIT` round trips would be
/// most of a lone caller's cost); anything more is a transaction of multi-row statements.
/// Links of rows finished elsewhere (and a sweep) are one statement each, in a
/// transaction with the rest.
async fn commit_on(
    conn: &mut AnyConnection,
    backend: Backend,
    chain: &mut Chain,
    work: &mut Work,
) -> Result<Vec<AuditId>, sqlx::Error> {
    if !chain.enabled() {
        return write_batch(conn, backend, &work.rows, &work.fins).await;
    }
    let mut batch = chain.begin();
    let unknown = assign_links(conn, chain, &mut batch, work).await?;
    let linking = !work.links.is_empty() || !unknown.is_empty() || work.sweep.is_some();
    if !linking {
        let ids = write_batch(conn, backend, &work.rows, &work.fins).await?;
        let finished = work.fins.iter().map(|(id, _)| *id);
        chain.committed(batch, ids.iter().copied().zip(&work.rows), finished);
        return Ok(ids);
    }
    let mut tx = conn.begin().await?;
    let ids = write_all(&mut tx, backend, &work.rows, &work.fins).await?;
    let mut linked = Vec::new();
    // Rows this writer knows (a PostgreSQL draft's, finished in its own transaction): all
    // linked by multi-row statements; if another replica linked one first, one by one.
    let mut one_by_one: Vec<(AuditId, Option<NewRow>)> =
        unknown.iter().map(|id| (*id, None)).collect();
    let before = batch.clone();
    let mut links = Vec::new();
    let mut rows = Vec::new();
    for (id, fin) in &work.links {
        match fin.as_ref().and_then(|f| chain.finished_row(*id, f)) {
            Some(row) => {
                let name = chain.chain_for(&row.at);
                Chain::load(&mut batch, &mut tx, &name).await?;
                links.push((*id, row.at.clone(), batch.link(&name, &row.chained())));
                rows.push((*id, Some(row)));
            }
            None => one_by_one.push((*id, None)),
        }
    }
    if !links.is_empty() {
        sqlx::query("SAVEPOINT erp_links").execute(&mut *tx).await?;
        if chain::write_links(&mut tx, &links).await? == links.len() as u64 {
            linked.extend(links.iter().map(|(id, _, _)| *id));
        } else {
            sqlx::query("ROLLBACK TO SAVEPOINT erp_links")
                .execute(&mut *tx)
                .await?;
            batch = before;
            one_by_one.extend(rows);
        }
    }
    for (id, row) in one_by_one {
        if chain::link_finished(&mut tx, backend, chain, &mut batch, id, row.as_ref()).await? {
            linked.push(id);
        }
    }
    if let Some(live) = &work.sweep {
        for (id, replica) in chain::unlinked(&mut tx, SWEEP_LIMIT).await? {
            if replica.is_some_and(|r| live.contains(&r)) {
                continue;
            }
            if chain::link_finished(&mut tx, backend, chain, &mut batch, id, None).await? {
                work.swept += 1;
                linked.push(id);
            }
        }
    }
    tx.commit().await?;
    let finished = work.fins.iter().map(|(id, _)| *id).chain(linked);
    chain.committed(batch, ids.iter().copied().zip(&work.rows), finished);
    Ok(ids)
}

/// Most unlinked rows one sweep links.
const SWEEP_LIMIT: i64 = 1000;

/// `rows` inserted and `fins` applied atomically (see [`commit_on`]).
async fn write_batch(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[NewRow],
    fins: &[(AuditId, Final)],
) -> Result<Vec<AuditId>, sqlx::Error> {
    let one_statement = match backend {
        Backend::Sqlite => true,
        Backend::Postgres => {
            (fins.is_empty() && rows.len() == 1)
                || (rows.is_empty() && fins.len() <= audit::PG_ROWS_PER_STATEMENT)
        }
    };
    if one_statement {
        return write_all(conn, backend, rows, fins).await;
    }
    let mut tx = conn.begin().await?;
    let ids = write_all(&mut tx, backend, rows, fins).await?;
    tx.commit().await?;
    Ok(ids)
}

/// The statements that insert `rows` and apply `fins` (one on SQLite).
async fn write_all(
    conn: &mut AnyConnection,
    backend: Backend,
    rows: &[NewRow],
    fins: &[(AuditId, Final)],
) -> Result<Vec<AuditId>, sqlx::Error> {
    let rows: Vec<&NewRow> = rows.iter().collect();
    let fins: Vec<(AuditId, &Final)> = fins.iter().map(|(id, f)| (*id, f)).collect();
    if backend == Backend::Sqlite && rows.len() + fins.len() > 1 {
        return audit::sqlite_write(conn, &rows, &fins).await;
    }
    let mut ids = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(audit::PG_ROWS_PER_STATEMENT) {
        ids.extend(audit::insert_many(conn, backend, chunk).await?);
    }
    for chunk in fins.chunks(audit::PG_ROWS_PER_STATEMENT) {
        audit::finish_many(conn, backend, chunk).await?;
    }
    Ok(ids)
}
