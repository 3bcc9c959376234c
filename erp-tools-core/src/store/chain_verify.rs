//! Checking the audit log's hash chains (`store/chain.rs`): [`verify`] walks every chain
//! and recomputes each link; [`heads`] gives the last link of every chain, for an
//! auditor to keep elsewhere.

use std::collections::HashMap;

use futures::TryStreamExt;
use sqlx::Row;

use super::archive_record::AuditArchive;
use super::chain::{CHAINED, Hash, fields, link_hash, parse_hash, read_chained};
use super::chain_head::ChainHead;
use super::chain_report::{ChainProblem, ChainReport};
use crate::audit::AuditId;

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
