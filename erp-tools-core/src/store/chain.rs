//! The audit log's hash chain: evidence that no finished row of `erp_audit_log` was
//! altered, inserted or removed behind the framework's back.
//!
//! # Design
//!
//! - **One chain per audit writer and month.** Each [`Database`](super::Database) has one
//!   audit writer (`store/writer.rs`) with one connection; its chains are named by the
//!   `Database`'s replica id and the month of the rows' `at` (`chain_id`,
//!   `<replica>/<YYYY-MM>`), so replicas sharing a PostgreSQL database never contend for a
//!   chain head, a process that starts again begins new chains, and a month's rows (one
//!   PostgreSQL partition) hold whole chains, archived together.
//! - **A row joins the chain when it is final.** A row's link is its position in its chain
//!   (`chain_seq`, from 1, no gaps) and `chain_hash`: SHA-256 over the hash of the link
//!   before it (32 zero bytes for position 1), the chain id, the position and every column
//!   of the row but its id (see [`CHAINED`]; each value length-prefixed, NULL marked).
//!   The writer computes it and writes it in the same statement or transaction as the
//!   row's final state: in the `INSERT` of a row that is finished when written, in the
//!   `UPDATE` that records a call's outcome. A row finished outside the writer (a
//!   PostgreSQL draft's outcome, committed with its document; a row closed by the recovery
//!   pass) is linked by the writer right after (a conditional `UPDATE ... WHERE chain_seq
//!   IS NULL`, so of two replicas linking it one does); a row that a stopped process left
//!   finished but unlinked is linked by the next lease pass of any replica. An `attempt`
//!   row (a call still running) has no link yet.
//! - **The id is not hashed**: it is given by the database when the row is inserted, after
//!   the hash is computed. The position in the chain is.
//! - **Verification** ([`verify`](super::chain_verify::verify)) walks every chain in order and recomputes each link.
//!   It reports, per chain, the first row whose columns were changed (its hash no longer
//!   matches; a row changed and given a new hash shows as the next row not matching), a
//!   row removed (a gap in the positions), a row inserted into a chain (a position taken
//!   twice, or a hash that does not match), and finished rows in no chain (inserted by
//!   hand).
//! - **The chain heads** ([`heads`](super::chain_verify::heads)) are the last link of every chain. Removing the last
//!   rows of a chain, or a whole chain, leaves a chain that is consistent in itself; kept
//!   elsewhere (exported to an auditor), the heads let [`verify`](super::chain_verify::verify) detect that too. Anyone
//!   who can write the table can also recompute every hash after a row they changed: the
//!   exported heads are what they cannot change.
//! - Rows written before the chain existed (ids up to `erp_audit_chain_origin`) are
//!   outside it.

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use sqlx::Row;

use super::audit_row::{CHAIN_V1_COLUMNS, Field, Final, Link, NewRow, Stored, chained, names};
use crate::audit::{ATTEMPT, AuditId};
use crate::tool::handles::Backend;

/// A link's hash.
pub(crate) type Hash = [u8; 32];

/// The columns a link hashes, in order ([`Column::chained`](super::audit_row::Column)).
pub(crate) static CHAINED: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| names(chained()));

/// A row's [`CHAINED`] columns as read back from the table, from column `first` of `row`
/// on.
pub(crate) fn read_chained(
    row: &sqlx::any::AnyRow,
    first: usize,
) -> Result<Vec<Stored>, sqlx::Error> {
    chained()
        .enumerate()
        .map(|(i, column)| Stored::read(row, first + i, column))
        .collect()
}

/// The values of [`read_chained`]'s columns.
pub(crate) fn fields(stored: &[Stored]) -> Vec<Field<'_>> {
    stored.iter().map(Stored::field).collect()
}

/// How many open rows the writer remembers for their finish link; beyond this it reads a
/// row back to link it.
const OPEN_ROWS_CAP: usize = 100_000;

fn text(h: &mut Sha256, value: Option<&str>) {
    match value {
        None => h.update([0u8]),
        Some(s) => {
            h.update([1u8]);
            h.update((s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
    }
}

/// The hash of the link at `seq` of `chain` after `prev`, for a row of `fields`.
pub(crate) fn link_hash(prev: &Hash, chain: &str, seq: i64, fields: &[Field<'_>]) -> Hash {
    let mut h = Sha256::new();
    h.update(b"erp-tools audit chain v1\0");
    h.update(prev);
    text(&mut h, Some(chain));
    h.update(seq.to_le_bytes());
    for (i, field) in fields.iter().enumerate() {
        if i >= CHAIN_V1_COLUMNS {
            // A column added later: nothing while NULL, else its position and value.
            match *field {
                Field::Text(None) | Field::Int(None) => continue,
                _ => h.update([3u8, i as u8]),
            }
        }
        match *field {
            Field::Text(t) => text(&mut h, t),
            Field::Int(None) => h.update([0u8]),
            Field::Int(Some(i)) => {
                h.update([2u8]);
                h.update(i.to_le_bytes());
            }
        }
    }
    h.finalize().into()
}

/// The hash of an `attempt` row of `fields`, written with it: a link of no chain (chain
/// ids always hold a `/`), so it cannot pass for one.
pub(crate) fn attempt_hash(fields: &[Field<'_>]) -> Hash {
    link_hash(&[0u8; 32], "attempt", 0, fields)
}

/// The chain of the rows a writer (`replica`) links whose `at` falls in the month of
/// `at`: `<replica>/<YYYY-MM>`, so a month's rows (a PostgreSQL partition) hold whole
/// chains and can be archived without cutting one.
pub(crate) fn chain_of(replica: &str, at: &str) -> String {
    let month = at.get(..7).unwrap_or(at);
    format!("{replica}/{month}")
}

/// One writer's chains (one per month of the rows' `at`): their heads, and the rows it
/// inserted unfinished (to link them when their outcome comes without reading them back).
pub(crate) struct Chain {
    replica: Arc<str>,
    enabled: bool,
    /// `(seq, hash)` of the last committed link of each chain read so far; emptied after a
    /// batch whose commit may or may not have happened, so they are read again.
    heads: HashMap<Arc<str>, (i64, Hash)>,
    open: HashMap<AuditId, NewRow>,
}

/// The links a batch adds, before it commits: the heads of the chains it touches.
#[derive(Clone)]
pub(crate) struct Batch {
    heads: HashMap<Arc<str>, (i64, Hash)>,
}

impl Batch {
    /// The next link of `chain` (its head loaded with [`Chain::load`]), for a row of
    /// `fields`.
    pub(crate) fn link(&mut self, chain: &str, fields: &[Field<'_>]) -> Link {
        let (name, head) = self
            .heads
            .get_key_value(chain)
            .map(|(k, v)| (k.clone(), *v))
            .expect("the chain's head is loaded before its rows are linked");
        let seq = head.0 + 1;
        let hash = link_hash(&head.1, &name, seq, fields);
        self.heads.insert(name.clone(), (seq, hash));
        Link {
            chain: name,
            seq,
            hash: hex::encode(hash),
        }
    }

    /// Takes back the last link of `link.chain` (its row was not written): the head is the
    /// link before it, `before`.
    fn unlink(&mut self, link: &Link, before: (i64, Hash)) {
        self.heads.insert(link.chain.clone(), before);
    }

    fn head(&self, chain: &str) -> Option<(i64, Hash)> {
        self.heads.get(chain).copied()
    }
}

impl Chain {
    /// The chains of the writer of `replica`; `enabled: false` writes no links.
    pub(crate) fn new(replica: Arc<str>, enabled: bool) -> Chain {
        Chain {
            replica,
            enabled,
            heads: HashMap::new(),
            open: HashMap::new(),
        }
    }

    /// Whether rows get links.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The chain a row written at `at` joins.
    pub(crate) fn chain_for(&self, at: &str) -> String {
        chain_of(&self.replica, at)
    }

    /// A batch starting from the committed heads.
    pub(crate) fn begin(&self) -> Batch {
        Batch {
            heads: self.heads.clone(),
        }
    }

    /// Reads the head of `chain` from the table into `batch` unless it is there.
    pub(crate) async fn load(
        batch: &mut Batch,
        conn: &mut sqlx::AnyConnection,
        chain: &str,
    ) -> Result<(), sqlx::Error> {
        if batch.heads.contains_key(chain) {
            return Ok(());
        }
        let row = sqlx::query(
            "SELECT chain_seq, chain_hash FROM erp_audit_log WHERE chain_id = $1 \
             ORDER BY chain_seq DESC LIMIT 1",
        )
        .bind(chain.to_string())
        .fetch_optional(&mut *conn)
        .await?;
        let head = match row {
            None => (0, [0u8; 32]),
            Some(row) => {
                let hash: String = row.try_get(1)?;
                (row.try_get(0)?, parse_hash(&hash)?)
            }
        };
        batch.heads.insert(Arc::from(chain), head);
        Ok(())
    }

    /// The batch committed: its heads are the chains' heads; `inserted` rows that are
    /// still open are remembered, `finished` ones forgotten.
    pub(crate) fn committed<'r>(
        &mut self,
        batch: Batch,
        inserted: impl Iterator<Item = (AuditId, &'r NewRow)>,
        finished: impl Iterator<Item = AuditId>,
    ) {
        self.heads = batch.heads;
        for id in finished {
            self.open.remove(&id);
        }
        for (id, row) in inserted {
            if row.finished_at.is_none() {
                if self.open.len() >= OPEN_ROWS_CAP {
                    self.open.clear();
                }
                self.open.insert(id, row.clone());
            }
        }
    }

    /// The batch failed: whether it committed is not known, so the heads are read again.
    pub(crate) fn failed(&mut self) {
        self.heads.clear();
    }

    /// The open row `id` finished with `fin`, if this writer inserted it.
    pub(crate) fn finished_row(&self, id: AuditId, fin: &Final) -> Option<NewRow> {
        let mut row = self.open.get(&id)?.clone();
        row.apply(fin.clone());
        Some(row)
    }
}

pub(crate) fn parse_hash(hex_text: &str) -> Result<Hash, sqlx::Error> {
    let bytes = hex::decode(hex_text).map_err(|e| bad_hash(hex_text, e))?;
    bytes
        .try_into()
        .map_err(|_| bad_hash(hex_text, "not 32 bytes"))
}

fn bad_hash(hex_text: &str, e: impl std::fmt::Display) -> sqlx::Error {
    sqlx::Error::Protocol(format!(
        "the audit chain hash {hex_text:?} is not valid: {e}"
    ))
}

/// Links row `id`, finished outside the writer, as the next link of its chain in `batch`
/// if it is finished and still unlinked: from `known` (the row as this writer knows it)
/// or read back. Returns whether it was linked (another replica may have linked it first).
pub(crate) async fn link_finished(
    conn: &mut sqlx::AnyConnection,
    backend: Backend,
    chain: &Chain,
    batch: &mut Batch,
    id: AuditId,
    known: Option<&NewRow>,
) -> Result<bool, sqlx::Error> {
    let read;
    let (fields, at): (Vec<Field<'_>>, &str) = match known {
        Some(row) => (row.chained(), &row.at),
        None => {
            let lock = if backend == Backend::Postgres {
                " FOR UPDATE"
            } else {
                ""
            };
            let sql = format!(
                "SELECT id, {} FROM erp_audit_log WHERE id = $1 AND chain_seq IS NULL{lock}",
                *CHAINED
            );
            let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
            else {
                return Ok(false);
            };
            read = read_chained(&row, 1)?;
            let text = |name: &str| {
                let i = chained()
                    .position(|c| c.name == name)
                    .expect("a chained column");
                match &read[i] {
                    Stored::Text(t) => t.as_deref(),
                    Stored::Int(_) => None,
                }
            };
            if text("outcome") == Some(ATTEMPT) {
                return Ok(false);
            }
            (fields(&read), text("at").unwrap_or_default())
        }
    };
    let name = chain.chain_for(at);
    Chain::load(batch, conn, &name).await?;
    let before = batch.head(&name).expect("loaded");
    let link = batch.link(&name, &fields);
    let update = |sql: &'static str| {
        sqlx::query(sql)
            .bind(link.chain.to_string())
            .bind(link.seq)
            .bind(link.hash.clone())
            .bind(id)
            .bind(ATTEMPT)
    };
    const LINK: &str = "UPDATE erp_audit_log SET chain_id = $1, chain_seq = $2, \
         chain_hash = $3 WHERE id = $4 AND chain_seq IS NULL AND outcome <> $5";
    // A row this writer knows is looked for in its month's partition alone (PostgreSQL).
    let mut done = match known {
        Some(row) => {
            static LINK_AT: std::sync::LazyLock<String> =
                std::sync::LazyLock::new(|| format!("{LINK} AND at = $6"));
            update(LINK_AT.as_str())
                .bind(row.at.clone())
                .execute(&mut *conn)
                .await?
                .rows_affected()
        }
        None => 0,
    };
    if done == 0 {
        done = update(LINK).execute(&mut *conn).await?.rows_affected();
    }
    if done == 1 {
        Ok(true)
    } else {
        batch.unlink(&link, before);
        Ok(false)
    }
}

/// Writes `links` (row id, row `at`, link) on their rows (finished, not yet linked), 64 a
/// statement; returns how many rows took their link (fewer when another replica linked one
/// first). With its `at`, PostgreSQL looks for each row in its month's partition alone.
pub(crate) async fn write_links(
    conn: &mut sqlx::AnyConnection,
    links: &[(AuditId, String, Link)],
) -> Result<u64, sqlx::Error> {
    let mut written = 0;
    for chunk in links.chunks(64) {
        let mut sql = String::from(
            "UPDATE erp_audit_log SET chain_id = v.column2, chain_seq = v.column3, \
             chain_hash = v.column4 FROM (VALUES ",
        );
        for i in 0..chunk.len() {
            if i > 0 {
                sql.push_str(", ");
            }
            let n = i * 5;
            sql.push_str(&format!(
                "(${}, ${}, ${}, ${}, ${})",
                n + 1,
                n + 2,
                n + 3,
                n + 4,
                n + 5
            ));
        }
        sql.push_str(
            ") AS v WHERE erp_audit_log.id = v.column1 AND erp_audit_log.at = v.column5 \
             AND erp_audit_log.chain_seq IS NULL AND erp_audit_log.outcome <> 'attempt'",
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (id, at, link) in chunk {
            query = query
                .bind(*id)
                .bind(link.chain.to_string())
                .bind(link.seq)
                .bind(link.hash.clone())
                .bind(at.clone());
        }
        written += query.execute(&mut *conn).await?.rows_affected();
    }
    Ok(written)
}

/// Finished rows without a link (ids after the chain's origin), oldest first, at most
/// `limit`, with their replica: what the lease pass links.
pub(crate) async fn unlinked(
    conn: &mut sqlx::AnyConnection,
    limit: i64,
) -> Result<Vec<(AuditId, Option<String>)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, replica_id FROM erp_audit_log WHERE chain_seq IS NULL \
         AND id > (SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin) \
         AND outcome <> $1 ORDER BY id LIMIT $2",
    )
    .bind(ATTEMPT)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}
