//! Checking the audit log's hash chains (`store/chain.rs`): [`verify`] walks every chain
//! and recomputes each link; [`heads`] gives the last link of every chain, for an
//! auditor to keep elsewhere.

use std::collections::HashMap;

use futures::TryStreamExt;
use sqlx::Row;

use super::archive_record::AuditArchive;
use super::chain::{CHAINED, Hash, fields, link_hash, parse_hash, read_chained};
use super::chain_head::ChainHead;
use crate::audit::AuditId;

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
    /// An open call's `attempt` row does not match the hash written with it: it was
    /// changed while the call ran.
    AttemptAltered {
        /// The row.
        audit_id: AuditId,
    },
    /// An open call's `attempt` row has no hash: it was inserted behind the framework's
    /// back (or written by a version before attempt hashes; the recovery pass closes it).
    AttemptUnsealed {
        /// The row.
        audit_id: AuditId,
    },
    /// A chained row has an id at or below `erp_audit_chain_origin` (the last row written
    /// before the chain existed): the origin was raised, so that rows inserted since
    /// look older than the chain.
    OriginMoved {
        /// The lowest chained row.
        audit_id: AuditId,
        /// The origin as found.
        origin: AuditId,
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
                 framework's back, or its link was removed (or a process stopped before \
                 linking it: the next start links it, then verify again)"
            ),
            ChainProblem::AttemptAltered { audit_id } => write!(
                f,
                "row {audit_id} (a call still open) does not match the hash written with it: \
                 it was altered while the call ran"
            ),
            ChainProblem::AttemptUnsealed { audit_id } => write!(
                f,
                "row {audit_id} (a call still open) has no attempt hash: it was inserted \
                 behind the framework's back (or by a version before attempt hashes)"
            ),
            ChainProblem::OriginMoved { audit_id, origin } => write!(
                f,
                "erp_audit_chain_origin says rows up to {origin} predate the chain, but row \
                 {audit_id} is chained: the origin was raised to hide the rows \
                 inserted since (they are listed as in no chain)"
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
    /// Rows written before the chain existed (ids up to `erp_audit_chain_origin`): not
    /// vouched for by any link.
    pub before_chain: u64,
    /// The oldest calls still open (at most 20), with their age: not yet in a chain.
    pub open_calls: Vec<OpenCall>,
    /// The first problem of each chain, then finished rows in no chain (at most 20 of
    /// those); empty when the log is intact.
    pub problems: Vec<ChainProblem>,
}

/// A call whose `attempt` row is not finished yet (running, or left by a stopped process
/// until the recovery pass closes it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenCall {
    /// The row.
    pub audit_id: AuditId,
    /// When the call began.
    pub at: String,
    /// How long ago that was, in seconds.
    pub age_secs: i64,
}

impl ChainReport {
    /// Whether nothing was found wrong.
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Walks every chain of the audit log on `pool` (read-only is enough) and checks every
/// link; checks `known` heads (exported earlier) against the chains.
pub(crate) async fn verify(
    pool: &sqlx::AnyPool,
    known: &[ChainHead],
) -> Result<ChainReport, sqlx::Error> {
    verify_with(pool, known, None).await
}

/// [`verify`], with the heads of archived chains taken from `archived` (claims signed in
/// a digest) instead of `erp_audit_archives`.
pub(crate) async fn verify_with(
    pool: &sqlx::AnyPool,
    known: &[ChainHead],
    archived: Option<HashMap<String, ChainHead>>,
) -> Result<ChainReport, sqlx::Error> {
    let mut report = ChainReport::default();
    let sql = format!(
        "SELECT id, {}, chain_id, chain_seq, chain_hash FROM erp_audit_log \
         WHERE chain_id IS NOT NULL ORDER BY chain_id, chain_seq",
        *CHAINED
    );
    let after = 1 + super::audit_row::chained().count();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(pool);
    // Per chain: (prev hash, last seq, problem found).
    let mut current: Option<(String, Hash, i64, bool)> = None;
    let mut ends: HashMap<String, (i64, String)> = HashMap::new();
    while let Some(row) = rows.try_next().await? {
        let id: AuditId = row.try_get(0)?;
        let stored = read_chained(&row, 1)?;
        let chain: String = row.try_get(after)?;
        let seq: i64 = row.try_get(after + 1)?;
        let hash_text: String = row.try_get(after + 2)?;
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
            let fields = fields(&stored);
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
    let archived = match archived {
        Some(given) => given,
        None => archived_heads(pool).await?,
    };
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
    super::chain_outside::check(pool, &mut report).await?;
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
        let archive: AuditArchive = serde_json::from_str(&record)
            .map_err(|e| sqlx::Error::Protocol(format!("an archive record is not valid: {e}")))?;
        for head in archive.heads {
            heads.insert(head.chain.clone(), head);
        }
    }
    Ok(heads)
}
