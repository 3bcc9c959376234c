//! What checking the audit log's hash chains found: [`ChainReport`] and its
//! [`ChainProblem`]s.

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
