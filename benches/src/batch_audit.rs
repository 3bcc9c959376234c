//! A sketch of the fix measured for the read-call overhead: audit rows handed to a
//! background writer over a bounded channel and written in batches, one transaction per
//! batch, instead of two committed statements on the call path. Used only to measure what
//! such a writer would cost per call; the framework does not use it.

use erp_tools_core::Database;
use erp_tools_core::audit::{self, AuditEntry};
use tokio::sync::mpsc;

/// Largest batch written in one transaction.
pub const MAX_BATCH: usize = 256;

/// The sending side of the background audit writer.
#[derive(Clone)]
pub struct AuditBatcher {
    tx: mpsc::Sender<AuditEntry>,
}

impl AuditBatcher {
    /// Starts the writer on `db`; it ends (returning the rows written) when every sender
    /// is dropped.
    pub fn start(db: Database) -> (AuditBatcher, tokio::task::JoinHandle<u64>) {
        let (tx, mut rx) = mpsc::channel::<AuditEntry>(4 * MAX_BATCH);
        let writer = tokio::spawn(async move {
            let mut written = 0u64;
            let mut batch = Vec::with_capacity(MAX_BATCH);
            while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                let now = audit::now_text();
                let mut txn = db.pool().begin().await.expect("begin audit batch");
                for entry in batch.drain(..) {
                    crate::fixtures::audit_insert(&mut *txn, &entry, &now, None, None)
                        .await
                        .expect("insert audit row");
                    written += 1;
                }
                txn.commit().await.expect("commit audit batch");
            }
            written
        });
        (AuditBatcher { tx }, writer)
    }

    /// Queues one row; waits only when the writer is `4 × MAX_BATCH` rows behind.
    pub async fn record(&self, entry: AuditEntry) {
        self.tx
            .send(entry)
            .await
            .expect("the audit writer is running");
    }
}
