//! The last link of one hash chain of the audit log.

use serde::{Deserialize, Serialize};

use crate::audit::AuditId;

/// The last link of one chain, for an auditor to keep elsewhere and give back to
/// [`Database::verify_audit_chain`](crate::Database::verify_audit_chain).
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
