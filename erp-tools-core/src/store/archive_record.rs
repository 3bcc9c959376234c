//! The record of one archived month of the audit log.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::chain_head::ChainHead;

/// One archived month of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditArchive {
    /// The month, `YYYY-MM` (rows whose `at` falls in it).
    pub month: String,
    /// The rows, one JSON object per line (`erp_audit_log_YYYY-MM.jsonl`): every column
    /// by name, in chain order (chain, then position), rows in no chain last.
    pub file: PathBuf,
    /// How many rows the file holds.
    pub rows: u64,
    /// SHA-256 of the file (hex), for the warehouse to check what it loads.
    pub sha256: String,
    /// The last link of every chain of the month: what a later
    /// [`Database::verify_audit_chain`](crate::Database::verify_audit_chain) is checked against, and what the file's rows
    /// must end with.
    pub heads: Vec<ChainHead>,
}
