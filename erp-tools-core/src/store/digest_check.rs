//! Checking the audit log against its signed digests (`store/digest.rs`):
//! [`AuditReader::verify_digests`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use sha2::{Digest as _, Sha256};
use sqlx::Row;

use super::audit_reader::AuditReader;
use super::chain_head::ChainHead;
use super::chain_report::ChainReport;
use super::chain_verify;
use super::digest::{AuditDigest, DigestPublicKey, SignedDigest};
use super::digest_read;
use super::error::StoreError;
use crate::audit::AuditId;

/// Something the digests show the log does not keep, or that the digests themselves were
/// tampered with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DigestFinding {
    /// The directory holds no digest.
    NoDigests,
    /// A digest file that is not a digest.
    Unreadable {
        /// The file.
        file: String,
        /// Why.
        error: String,
    },
    /// A digest whose signature is not the public key's: edited, or signed with another key.
    BadSignature {
        /// The file.
        file: String,
    },
    /// Digests `from..=to` of a replica's chain are missing.
    Missing {
        /// The replica.
        replica: String,
        /// First missing position.
        from: u64,
        /// Last missing position.
        to: u64,
    },
    /// A digest does not name the one before it as that one now is: it was replaced.
    Replaced {
        /// The replica.
        replica: String,
        /// The digest replaced (the one before `seq + 1`).
        seq: u64,
    },
    /// A chain goes on after the head its writer's last digest (written at shutdown) named.
    AfterLast {
        /// The chain.
        chain: String,
        /// The head its writer's last digest named (0: none).
        digested: i64,
        /// Its last position now.
        now: i64,
    },
    /// A chain older than the newest digest that no digest names.
    ChainNotCovered {
        /// The chain.
        chain: String,
    },
    /// A row in no chain, older than the newest digest, that it does not list.
    RowNotCovered {
        /// The row.
        audit_id: AuditId,
    },
    /// A row in no chain whose columns differ from what the newest digest recorded.
    RowChanged {
        /// The row.
        audit_id: AuditId,
    },
    /// An archive claim (`erp_audit_archives`) no digest names.
    ArchiveNotCovered {
        /// The month claimed archived.
        month: String,
    },
    /// A digested archive file that cannot be read.
    ArchiveFileMissing {
        /// The month.
        month: String,
        /// The file.
        file: String,
    },
    /// A digested archive file whose SHA-256 is not the digested one.
    ArchiveFileDiffers {
        /// The month.
        month: String,
        /// The file.
        file: String,
    },
    /// `erp_audit_chain_origin` is not what the newest digest recorded.
    OriginChanged {
        /// The digested origin.
        digested: AuditId,
        /// The origin now.
        now: AuditId,
    },
}

impl std::fmt::Display for DigestFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use DigestFinding::*;
        match self {
            NoDigests => write!(
                f,
                "no digest found: nothing outside the database vouches for the log"
            ),
            Unreadable { file, error } => write!(f, "digest {file} cannot be read: {error}"),
            BadSignature { file } => write!(
                f,
                "digest {file} is not signed by the public key: it was edited or re-signed \
                 with another key"
            ),
            Missing { replica, from, to } => write!(
                f,
                "digests {from} to {to} of replica {replica} are missing: they were deleted"
            ),
            Replaced { replica, seq } => write!(
                f,
                "digest {seq} of replica {replica} is not the one digest {} names as its \
                 previous: it was replaced or re-signed",
                seq + 1
            ),
            AfterLast {
                chain,
                digested,
                now,
            } => write!(
                f,
                "chain {chain} ends at position {now}, but its writer's last digest (written \
                 at shutdown) names position {digested}: the rows after it were added behind \
                 the framework's back"
            ),
            ChainNotCovered { chain } => write!(
                f,
                "chain {chain} is older than the newest digest but no digest names it: it was \
                 added behind the framework's back"
            ),
            RowNotCovered { audit_id } => write!(
                f,
                "row {audit_id} is in no chain and older than the newest digest, which does not \
                 list it: it was inserted (or its link removed) behind the framework's back"
            ),
            RowChanged { audit_id } => write!(
                f,
                "row {audit_id} (in no chain) differs from what the newest digest recorded: it \
                 was altered"
            ),
            ArchiveNotCovered { month } => write!(
                f,
                "the archive claim for {month} is in no digest: it was added behind the \
                 framework's back (check the rows of {month} against the archive file)"
            ),
            ArchiveFileMissing { month, file } => write!(
                f,
                "the archive file of {month} ({file}) cannot be read: restore it from a copy"
            ),
            ArchiveFileDiffers { month, file } => write!(
                f,
                "the archive file of {month} ({file}) has another SHA-256 than its digest \
                 recorded: it was modified"
            ),
            OriginChanged { digested, now } => write!(
                f,
                "erp_audit_chain_origin is {now}, the newest digest recorded {digested}: it was \
                 changed to hide rows"
            ),
        }
    }
}

/// What [`AuditReader::verify_digests`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DigestReport {
    /// Valid digests read.
    pub digests: usize,
    /// Replicas whose digests they are.
    pub replicas: usize,
    /// The newest digest's file and time.
    pub newest: Option<(String, String)>,
    /// Rows newer than the newest digest (no digest can vouch for them yet).
    pub newer_rows: u64,
    /// The chains walked, checked against the digested heads.
    pub chain: ChainReport,
    /// What the digests show; empty when they vouch for the log.
    pub findings: Vec<DigestFinding>,
}

impl DigestReport {
    /// Whether neither the chains nor the digests show anything wrong.
    pub fn is_intact(&self) -> bool {
        self.findings.is_empty() && self.chain.is_intact()
    }
}

/// The digest files of `dir`, read and checked: the valid ones, by replica and position.
fn read_digests(
    dir: &Path,
    key: &DigestPublicKey,
    findings: &mut Vec<DigestFinding>,
) -> Result<Vec<(String, SignedDigest)>, StoreError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| StoreError::BadInput(format!("cannot read {}: {e}", dir.display())))?;
    let mut valid = Vec::new();
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("digest-") && n.ends_with(".json"))
        .collect();
    names.sort();
    for name in names {
        let text = std::fs::read(dir.join(&name)).map_err(|e| e.to_string());
        let parsed = text
            .and_then(|t| serde_json::from_slice::<SignedDigest>(&t).map_err(|e| e.to_string()));
        match parsed {
            Err(error) => findings.push(DigestFinding::Unreadable { file: name, error }),
            Ok(d) if !d.signed_by(key) => findings.push(DigestFinding::BadSignature { file: name }),
            Ok(d) => valid.push((name, d)),
        }
    }
    let mut by_replica: BTreeMap<String, Vec<&SignedDigest>> = BTreeMap::new();
    for (_, d) in &valid {
        by_replica
            .entry(d.digest.replica.clone())
            .or_default()
            .push(d);
    }
    for (replica, mut chain) in by_replica {
        chain.sort_by_key(|d| d.digest.seq);
        let mut before: Option<&AuditDigest> = None;
        for d in chain {
            let expected = before.map_or(1, |b| b.seq + 1);
            if d.digest.seq > expected {
                findings.push(DigestFinding::Missing {
                    replica: replica.clone(),
                    from: expected,
                    to: d.digest.seq - 1,
                });
            } else if d.digest.previous_sha256 != before.map(AuditDigest::sha256) {
                findings.push(DigestFinding::Replaced {
                    replica: replica.clone(),
                    seq: d.digest.seq - 1,
                });
            }
            before = Some(&d.digest);
        }
    }
    Ok(valid)
}

/// The replica of a chain id (`<replica>/<YYYY-MM>`).
fn replica_of(chain: &str) -> &str {
    chain.rsplit_once('/').map_or(chain, |(r, _)| r)
}

impl AuditReader {
    /// Checks the log against the signed digests in `dir` (signed by the key of `key`): the digests' own chain (none
    /// missing, replaced or re-signed), every chain a digest names still there up to its
    /// head and unchanged, nothing older than the newest digest that it does not cover
    /// (rows newer are counted), each digested archive file's SHA-256 (read from where
    /// the claim says, or from `archives` when given), and the chains' own links.
    pub async fn verify_digests(
        &self,
        dir: &Path,
        key: &DigestPublicKey,
        archives: Option<&Path>,
    ) -> Result<DigestReport, StoreError> {
        let mut report = DigestReport::default();
        let valid = read_digests(dir, key, &mut report.findings)?;
        report.digests = valid.len();
        let replicas: HashSet<&str> = valid
            .iter()
            .map(|(_, d)| d.digest.replica.as_str())
            .collect();
        report.replicas = replicas.len();
        let Some((newest_file, newest)) = valid
            .iter()
            .max_by(|a, b| a.1.digest.at.cmp(&b.1.digest.at))
            .map(|(f, d)| (f.clone(), d.digest.clone()))
        else {
            report.findings.push(DigestFinding::NoDigests);
            report.chain = self.verify(&[]).await?;
            return Ok(report);
        };
        report.newest = Some((newest_file, newest.at.clone()));
        // The highest digested head of each chain, and the digested archive claims.
        let mut heads: HashMap<String, ChainHead> = HashMap::new();
        let mut claims: BTreeMap<String, super::archive_record::AuditArchive> = BTreeMap::new();
        for (_, d) in &valid {
            for head in &d.digest.chains {
                if heads.get(&head.chain).is_none_or(|h| h.seq < head.seq) {
                    heads.insert(head.chain.clone(), head.clone());
                }
            }
            for claim in &d.digest.archives {
                claims.insert(claim.month.clone(), claim.clone());
            }
        }
        let archived: HashMap<String, ChainHead> = claims
            .values()
            .flat_map(|c| c.heads.iter().map(|h| (h.chain.clone(), h.clone())))
            .collect();
        let known: Vec<ChainHead> = heads.values().cloned().collect();
        let pool = self.pool();
        report.chain = chain_verify::verify_with(pool, &known, Some(archived)).await?;
        let now = chain_verify::heads(pool, None).await?;
        // The chains of replicas that shut down end where their last digest says.
        for (_, d) in valid.iter().filter(|(_, d)| d.digest.last) {
            for head in now
                .iter()
                .filter(|h| replica_of(&h.chain) == d.digest.replica)
            {
                let digested = d.digest.chains.iter().find(|h| h.chain == head.chain);
                let digested = digested.map_or(0, |h| h.seq);
                if head.seq > digested {
                    report.findings.push(DigestFinding::AfterLast {
                        chain: head.chain.clone(),
                        digested,
                        now: head.seq,
                    });
                }
            }
        }
        let firsts = sqlx::query(
            "SELECT chain_id, MIN(id) FROM erp_audit_log WHERE chain_id IS NOT NULL \
             GROUP BY chain_id ORDER BY chain_id",
        )
        .fetch_all(pool)
        .await?;
        for row in firsts {
            let (chain, first): (String, AuditId) = (row.try_get(0)?, row.try_get(1)?);
            if !heads.contains_key(&chain) && first <= newest.max_audit_id {
                report
                    .findings
                    .push(DigestFinding::ChainNotCovered { chain });
            }
        }
        let origin: Option<AuditId> =
            sqlx::query_scalar("SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin")
                .fetch_one(pool)
                .await?;
        let origin = origin.unwrap_or(0);
        if origin != newest.origin {
            report.findings.push(DigestFinding::OriginChanged {
                digested: newest.origin,
                now: origin,
            });
        }
        let listed: HashMap<AuditId, &str> = newest
            .unlinked
            .iter()
            .map(|r| (r.audit_id, r.hash.as_str()))
            .collect();
        let floor = origin.min(newest.origin);
        for row in digest_read::unlinked(pool, floor, newest.max_audit_id).await? {
            match listed.get(&row.audit_id) {
                None => report.findings.push(DigestFinding::RowNotCovered {
                    audit_id: row.audit_id,
                }),
                Some(hash) if *hash != row.hash => {
                    report.findings.push(DigestFinding::RowChanged {
                        audit_id: row.audit_id,
                    })
                }
                Some(_) => {}
            }
        }
        report.newer_rows =
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM erp_audit_log WHERE id > $1")
                .bind(newest.max_audit_id)
                .fetch_one(pool)
                .await? as u64;
        for claim in digest_read::archives(pool).await? {
            let covered = claims
                .get(&claim.month)
                .is_some_and(|c| c.sha256 == claim.sha256);
            if !covered {
                report
                    .findings
                    .push(DigestFinding::ArchiveNotCovered { month: claim.month });
            }
        }
        for claim in claims.values() {
            let path = match (archives, claim.file.file_name()) {
                (Some(dir), Some(name)) => dir.join(name),
                _ => claim.file.clone(),
            };
            let file = path.display().to_string();
            match std::fs::read(&path) {
                Err(_) => report.findings.push(DigestFinding::ArchiveFileMissing {
                    month: claim.month.clone(),
                    file,
                }),
                Ok(bytes) if hex::encode(Sha256::digest(&bytes)) != claim.sha256 => {
                    report.findings.push(DigestFinding::ArchiveFileDiffers {
                        month: claim.month.clone(),
                        file,
                    })
                }
                Ok(_) => {}
            }
        }
        Ok(report)
    }
}
