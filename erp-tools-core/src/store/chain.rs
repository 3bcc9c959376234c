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
//! - **Verification** ([`verify`]) walks every chain in order and recomputes each link.
//!   It reports, per chain, the first row whose columns were changed (its hash no longer
//!   matches; a row changed and given a new hash shows as the next row not matching), a
//!   row removed (a gap in the positions), a row inserted into a chain (a position taken
//!   twice, or a hash that does not match), and finished rows in no chain (inserted by
//!   hand).
//! - **The chain heads** ([`heads`]) are the last link of every chain. Removing the last
//!   rows of a chain, or a whole chain, leaves a chain that is consistent in itself; kept
//!   elsewhere (exported to an auditor), the heads let [`verify`] detect that too. Anyone
//!   who can write the table can also recompute every hash after a row they changed: the
//!   exported heads are what they cannot change.
//! - Rows written before the chain existed (ids up to `erp_audit_chain_origin`) are
//!   outside it.

use std::collections::HashMap;
use std::sync::Arc;

use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::audit::{ErpAnswer, Final, NewRow};
use crate::audit::{ATTEMPT, AuditId};
use crate::tool::handles::Backend;

/// A link's hash.
pub(crate) type Hash = [u8; 32];

/// The columns a link hashes, in order.
pub(crate) const CHAINED: &str = "at, finished_at, source, agent_run_id, tool_call_id, \
     tool_name, user_id, branch_id, branch_code, arguments, outcome, message, document_type, \
     document_id, document_number, model, prompt_version, step, action_signature, replica_id, \
     erp_outcome, erp_error, surface, document_text_id";

/// How many open rows the writer remembers for their finish link; beyond this it reads a
/// row back to link it.
const OPEN_ROWS_CAP: usize = 100_000;

/// How long a finished row may wait for its link before [`verify`] reports it.
const LINK_DELAY: chrono::Duration = chrono::Duration::minutes(2);

/// One value of a [`CHAINED`] column.
#[derive(Clone, Copy)]
pub(crate) enum Field<'a> {
    Text(Option<&'a str>),
    Int(Option<i64>),
}

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
    for field in fields {
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

/// The [`CHAINED`] values of `row` as the writer stores it, with `erp` as its
/// `erp_outcome` and `erp_error`.
pub(crate) fn fields_of<'a>(row: &'a NewRow, erp: Option<&'a ErpAnswer>) -> [Field<'a>; 24] {
    let e = &row.entry;
    let doc = e.document.as_ref();
    [
        Field::Text(Some(&row.at)),
        Field::Text(row.finished_at.as_deref()),
        Field::Text(Some(row.source)),
        Field::Text(Some(&e.agent_run_id)),
        Field::Text(e.tool_call_id.as_deref()),
        Field::Text(e.tool_name.as_deref()),
        Field::Text(Some(&e.user_id)),
        Field::Int(e.branch_id),
        Field::Text(e.branch_code.as_deref()),
        Field::Text(e.arguments.as_deref()),
        Field::Text(Some(&e.outcome)),
        Field::Text(e.message.as_deref()),
        Field::Text(doc.map(|d| d.doc_type.as_str())),
        Field::Int(doc.and_then(|d| d.id.as_i64())),
        Field::Text(doc.map(|d| d.number.as_str())),
        Field::Text(e.model.as_deref()),
        Field::Text(e.prompt_version.as_deref()),
        Field::Int(e.step),
        Field::Text(e.action_signature.as_deref()),
        Field::Text(row.replica_id.as_deref()),
        Field::Text(erp.map(|a| a.outcome.as_str())),
        Field::Text(erp.and_then(|a| a.error.as_deref())),
        Field::Text(e.surface.as_deref()),
        Field::Text(doc.and_then(|d| d.id.as_text())),
    ]
}

/// A row's [`CHAINED`] columns as read back from the table.
struct StoredRow {
    texts: [Option<String>; 20],
    ints: [Option<i64>; 3],
    outcome: String,
}

/// Indexes of the integer columns in [`CHAINED`] order.
const INT_COLUMNS: [usize; 3] = [7, 13, 17];
/// Index of `outcome` in [`CHAINED`] order.
const OUTCOME_COLUMN: usize = 10;

impl StoredRow {
    fn read(row: &sqlx::any::AnyRow, first: usize) -> Result<StoredRow, sqlx::Error> {
        let mut texts: [Option<String>; 20] = Default::default();
        let mut ints = [None; 3];
        let (mut t, mut n) = (0, 0);
        let mut outcome = String::new();
        for column in 0..24 {
            if INT_COLUMNS.contains(&column) {
                ints[n] = row.try_get::<Option<i64>, _>(first + column)?;
                n += 1;
            } else if column == OUTCOME_COLUMN {
                outcome = row.try_get(first + column)?;
            } else {
                texts[t] = row.try_get::<Option<String>, _>(first + column)?;
                t += 1;
            }
        }
        Ok(StoredRow {
            texts,
            ints,
            outcome,
        })
    }

    fn fields(&self) -> Vec<Field<'_>> {
        let (mut t, mut n) = (0, 0);
        (0..24)
            .map(|column| {
                if INT_COLUMNS.contains(&column) {
                    n += 1;
                    Field::Int(self.ints[n - 1])
                } else if column == OUTCOME_COLUMN {
                    Field::Text(Some(&self.outcome))
                } else {
                    t += 1;
                    Field::Text(self.texts[t - 1].as_deref())
                }
            })
            .collect()
    }
}

/// A link to write with a row: its chain, position and hash (hex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    pub chain: Arc<str>,
    pub seq: i64,
    pub hash: String,
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

fn parse_hash(hex_text: &str) -> Result<Hash, sqlx::Error> {
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
    known: Option<(&NewRow, Option<&ErpAnswer>)>,
) -> Result<bool, sqlx::Error> {
    let read;
    let (fields, at): (Vec<Field<'_>>, &str) = match known {
        Some((row, erp)) => (fields_of(row, erp).to_vec(), &row.at),
        None => {
            let lock = if backend == Backend::Postgres {
                " FOR UPDATE"
            } else {
                ""
            };
            let sql = format!(
                "SELECT id, {CHAINED} FROM erp_audit_log WHERE id = $1 AND chain_seq IS NULL{lock}"
            );
            let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
            else {
                return Ok(false);
            };
            read = StoredRow::read(&row, 1)?;
            if read.outcome == ATTEMPT {
                return Ok(false);
            }
            (read.fields(), read.texts[0].as_deref().unwrap_or_default())
        }
    };
    let name = chain.chain_for(at);
    Chain::load(batch, conn, &name).await?;
    let before = batch.head(&name).expect("loaded");
    let link = batch.link(&name, &fields);
    let done = sqlx::query(
        "UPDATE erp_audit_log SET chain_id = $1, chain_seq = $2, chain_hash = $3 \
         WHERE id = $4 AND chain_seq IS NULL AND outcome <> $5",
    )
    .bind(link.chain.to_string())
    .bind(link.seq)
    .bind(link.hash.clone())
    .bind(id)
    .bind(ATTEMPT)
    .execute(&mut *conn)
    .await?;
    if done.rows_affected() == 1 {
        Ok(true)
    } else {
        batch.unlink(&link, before);
        Ok(false)
    }
}

/// Writes `links` on their rows (finished, not yet linked), 64 a statement; returns how
/// many rows took their link (fewer when another replica linked one first).
pub(crate) async fn write_links(
    conn: &mut sqlx::AnyConnection,
    links: &[(AuditId, Link)],
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
            let n = i * 4;
            sql.push_str(&format!("(${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4));
        }
        sql.push_str(
            ") AS v WHERE erp_audit_log.id = v.column1 AND erp_audit_log.chain_seq IS NULL \
             AND erp_audit_log.outcome <> 'attempt'",
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (id, link) in chunk {
            query = query
                .bind(*id)
                .bind(link.chain.to_string())
                .bind(link.seq)
                .bind(link.hash.clone());
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

/// The last link of one chain, for an auditor to keep elsewhere and give back to
/// [`Database::verify_audit_chain`](super::Database::verify_audit_chain).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainHead {
    /// The chain (the replica id of the writer that wrote it).
    pub chain: String,
    /// The position of its last row (the number of rows in the chain).
    pub seq: i64,
    /// That row's hash (SHA-256, hex).
    pub hash: String,
    /// That row's id in `erp_audit_log`.
    pub audit_id: AuditId,
    /// When that row was written.
    pub at: String,
}

/// The first thing [`Database::verify_audit_chain`](crate::Database::verify_audit_chain) found wrong in one chain (or outside every chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainProblem {
    /// The row's columns do not match its hash: it was changed after it was written (or
    /// the row before it was changed and given a new hash, which this row no longer
    /// follows).
    Altered {
        /// The row.
        audit_id: AuditId,
        /// Its chain.
        chain: String,
        /// Its position.
        seq: i64,
    },
    /// Positions `from..=to` of the chain are missing: those rows were removed.
    Removed {
        /// The chain.
        chain: String,
        /// First missing position.
        from: i64,
        /// Last missing position.
        to: i64,
        /// The row after the gap, if any.
        next_audit_id: Option<AuditId>,
    },
    /// Two rows claim one position: one of them was inserted.
    Duplicate {
        /// The second row at that position.
        audit_id: AuditId,
        /// The chain.
        chain: String,
        /// The position.
        seq: i64,
    },
    /// A finished row in no chain, older than the writer's delay for linking it: it was
    /// inserted behind the framework's back (or its link was removed).
    Unchained {
        /// The row.
        audit_id: AuditId,
    },
    /// The chain ends before the exported head: its last rows were removed.
    Truncated {
        /// The chain.
        chain: String,
        /// Its last position now (0: the whole chain is gone).
        last: i64,
        /// The exported head's position.
        exported: i64,
    },
    /// The row at the exported head's position has another hash: the chain was rewritten.
    HeadDiffers {
        /// The chain.
        chain: String,
        /// The exported head's position.
        seq: i64,
    },
}

impl std::fmt::Display for ChainProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainProblem::Altered {
                audit_id,
                chain,
                seq,
            } => write!(
                f,
                "row {audit_id} (chain {chain}, position {seq}) was altered: its columns do \
                 not match its hash (or the row before it was altered and re-hashed)"
            ),
            ChainProblem::Removed {
                chain,
                from,
                to,
                next_audit_id,
            } => {
                let what = if from == to {
                    format!("the row at position {from} was removed")
                } else {
                    format!("the rows at positions {from} to {to} were removed")
                };
                write!(f, "chain {chain}: {what}")?;
                match next_audit_id {
                    Some(id) => write!(f, " (the next row present is {id})"),
                    None => Ok(()),
                }
            }
            ChainProblem::Duplicate {
                audit_id,
                chain,
                seq,
            } => write!(
                f,
                "row {audit_id} was inserted: chain {chain} has another row at position {seq}"
            ),
            ChainProblem::Unchained { audit_id } => write!(
                f,
                "row {audit_id} is finished but in no chain: it was inserted behind the \
                 framework's back, or its link was removed"
            ),
            ChainProblem::Truncated {
                chain,
                last,
                exported,
            } => write!(
                f,
                "chain {chain} ends at position {last} but its exported head is at position \
                 {exported}: rows after position {last} were removed"
            ),
            ChainProblem::HeadDiffers { chain, seq } => write!(
                f,
                "chain {chain}: the row at position {seq} does not match the exported head: \
                 the chain was rewritten"
            ),
        }
    }
}

/// What [`Database::verify_audit_chain`](crate::Database::verify_audit_chain) found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainReport {
    /// Chains walked.
    pub chains: usize,
    /// Rows checked in them.
    pub rows: u64,
    /// Rows still at `attempt` (calls running, or left by a stopped process): not yet in
    /// a chain.
    pub open: u64,
    /// Finished rows waiting for their link (finished in the last two minutes).
    pub pending: u64,
    /// The first problem of each chain, then finished rows in no chain (at most 20 of
    /// those); empty when the log is intact.
    pub problems: Vec<ChainProblem>,
}

impl ChainReport {
    /// Whether nothing was found wrong.
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Most [`ChainProblem::Unchained`] rows listed.
const MAX_UNCHAINED: usize = 20;

/// Walks every chain of the audit log on `pool` (read-only is enough) and checks every
/// link; checks `known` heads (exported earlier) against the chains.
pub(crate) async fn verify(
    pool: &sqlx::AnyPool,
    known: &[ChainHead],
) -> Result<ChainReport, sqlx::Error> {
    let mut report = ChainReport::default();
    let sql = format!(
        "SELECT id, {CHAINED}, chain_id, chain_seq, chain_hash FROM erp_audit_log \
         WHERE chain_id IS NOT NULL ORDER BY chain_id, chain_seq"
    );
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    // Per chain: (prev hash, last seq, problem found).
    let mut current: Option<(String, Hash, i64, bool)> = None;
    let mut ends: HashMap<String, (i64, String)> = HashMap::new();
    while let Some(row) = rows.try_next().await? {
        let id: AuditId = row.try_get(0)?;
        let stored = StoredRow::read(&row, 1)?;
        let chain: String = row.try_get(25)?;
        let seq: i64 = row.try_get(26)?;
        let hash_text: String = row.try_get(27)?;
        if current.as_ref().is_none_or(|c| c.0 != chain) {
            if let Some((name, _, last, _)) = current.take() {
                report.chains += 1;
                ends.entry(name).or_insert((last, String::new()));
            }
            current = Some((chain.clone(), [0u8; 32], 0, false));
        }
        let Some((name, prev, last, found)) = current.as_mut() else {
            continue;
        };
        report.rows += 1;
        ends.insert(name.clone(), (seq, hash_text.clone()));
        if *found {
            continue;
        }
        let problem = if seq == *last {
            Some(ChainProblem::Duplicate {
                audit_id: id,
                chain: chain.clone(),
                seq,
            })
        } else if seq > *last + 1 {
            Some(ChainProblem::Removed {
                chain: chain.clone(),
                from: *last + 1,
                to: seq - 1,
                next_audit_id: Some(id),
            })
        } else {
            let fields = stored.fields();
            let stored_hash = parse_hash(&hash_text).ok();
            let recomputed = link_hash(prev, &chain, seq, &fields);
            if stored_hash == Some(recomputed) {
                None
            } else {
                Some(ChainProblem::Altered {
                    audit_id: id,
                    chain: chain.clone(),
                    seq,
                })
            }
        };
        match problem {
            Some(p) => {
                report.problems.push(p);
                *found = true;
            }
            None => {
                *prev = parse_hash(&hash_text)?;
                *last = seq;
            }
        }
    }
    if current.is_some() {
        report.chains += 1;
    }
    drop(rows);
    let archived = archived_heads(pool).await?;
    for head in known {
        if !ends.contains_key(&head.chain)
            && let Some(kept) = archived.get(&head.chain)
        {
            // Archived: the archive's head must be this one or later.
            if kept.seq < head.seq {
                report.problems.push(ChainProblem::Truncated {
                    chain: head.chain.clone(),
                    last: kept.seq,
                    exported: head.seq,
                });
            } else if kept.seq == head.seq && kept.hash != head.hash {
                report.problems.push(ChainProblem::HeadDiffers {
                    chain: head.chain.clone(),
                    seq: head.seq,
                });
            }
            continue;
        }
        match ends.get(&head.chain) {
            None => report.problems.push(ChainProblem::Truncated {
                chain: head.chain.clone(),
                last: 0,
                exported: head.seq,
            }),
            Some((last, _)) if *last < head.seq => report.problems.push(ChainProblem::Truncated {
                chain: head.chain.clone(),
                last: *last,
                exported: head.seq,
            }),
            Some(_) => {
                let at: Option<String> = sqlx::query_scalar(
                    "SELECT chain_hash FROM erp_audit_log WHERE chain_id = $1 AND chain_seq = $2",
                )
                .bind(head.chain.clone())
                .bind(head.seq)
                .fetch_optional(pool)
                .await?;
                if at.as_deref() != Some(head.hash.as_str()) {
                    report.problems.push(ChainProblem::HeadDiffers {
                        chain: head.chain.clone(),
                        seq: head.seq,
                    });
                }
            }
        }
    }
    let cutoff = crate::audit::time_text(chrono::Utc::now() - LINK_DELAY);
    let outside = sqlx::query(
        "SELECT id, outcome, finished_at FROM erp_audit_log WHERE chain_seq IS NULL \
         AND id > (SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin) ORDER BY id",
    )
    .fetch_all(pool)
    .await?;
    let mut unchained = 0;
    for row in outside {
        let outcome: String = row.try_get(1)?;
        let finished_at: Option<String> = row.try_get(2)?;
        if outcome == ATTEMPT {
            report.open += 1;
        } else if finished_at.as_deref().is_some_and(|f| f > cutoff.as_str()) {
            report.pending += 1;
        } else if unchained < MAX_UNCHAINED {
            unchained += 1;
            report.problems.push(ChainProblem::Unchained {
                audit_id: row.try_get(0)?,
            });
        }
    }
    Ok(report)
}

/// The last link of every chain, or of the chains of `month` (`YYYY-MM`) only.
pub(crate) async fn heads(
    pool: &sqlx::AnyPool,
    month: Option<&str>,
) -> Result<Vec<ChainHead>, sqlx::Error> {
    let pattern = month.map_or_else(|| "%".to_string(), |m| format!("%/{m}"));
    let rows = sqlx::query(
        "SELECT a.chain_id, a.chain_seq, a.chain_hash, a.id, a.at FROM erp_audit_log AS a \
         JOIN (SELECT chain_id, MAX(chain_seq) AS seq FROM erp_audit_log \
               WHERE chain_id LIKE $1 GROUP BY chain_id) AS h \
         ON a.chain_id = h.chain_id AND a.chain_seq = h.seq ORDER BY a.chain_id",
    )
    .bind(pattern)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ChainHead {
                chain: r.try_get(0)?,
                seq: r.try_get(1)?,
                hash: r.try_get(2)?,
                audit_id: r.try_get(3)?,
                at: r.try_get(4)?,
            })
        })
        .collect()
}

/// The heads of the chains of archived months (`erp_audit_archives`).
async fn archived_heads(pool: &sqlx::AnyPool) -> Result<HashMap<String, ChainHead>, sqlx::Error> {
    let records: Vec<String> = sqlx::query_scalar("SELECT heads FROM erp_audit_archives")
        .fetch_all(pool)
        .await?;
    let mut heads = HashMap::new();
    for record in records {
        let archive: super::archive::AuditArchive = serde_json::from_str(&record)
            .map_err(|e| sqlx::Error::Protocol(format!("an archive record is not valid: {e}")))?;
        for head in archive.heads {
            heads.insert(head.chain.clone(), head);
        }
    }
    Ok(heads)
}
