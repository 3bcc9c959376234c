//! Writing signed digests of the audit log (`store/digest.rs`): what a digest reads from
//! the log, the digest chain of one [`Database`], and its background task.

use std::sync::{Arc, Weak};

use super::digest::{AuditDigest, DIGEST_FORMAT, Digests, SignedDigest};
use super::error::StoreError;
use super::{Database, Inner, chain_verify, digest_read};
use crate::audit::AuditId;

/// Writes a digest every `every` while the database is open.
pub(crate) async fn run(inner: Weak<Inner>, every: std::time::Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let db = Database { inner };
        if let Err(e) = write(&db, false).await {
            tracing::error!(error = %e, "could not write the audit digest");
        }
    }
}

/// The digest `options` writes every so often.
pub(crate) fn every(digests: &Digests) -> std::time::Duration {
    digests.options.every
}

/// Writes the next digest of `db`'s chain (`last`: as it shuts down).
pub(crate) async fn write(db: &Database, last: bool) -> Result<SignedDigest, StoreError> {
    let Some(digests) = db.inner.digests.as_ref() else {
        return Err(StoreError::BadInput(
            "this database writes no audit digests: open it with \
             DatabaseOptions::audit_digests"
                .into(),
        ));
    };
    let mut state = digests.last.lock().await;
    let digest = collect(
        db.audit_pool(),
        db.replica_id(),
        state.0 + 1,
        state.1.clone(),
        digests.options.every.as_secs(),
        last,
    )
    .await?;
    let signed = digests.options.key.sign(digest);
    let bytes = serde_json::to_vec_pretty(&signed).expect("a digest serialises");
    let (sink, name) = (digests.options.sink.clone(), signed.digest.file_name());
    tokio::task::spawn_blocking(move || sink.put(&name, &bytes))
        .await
        .map_err(|e| StoreError::AuditWrite(format!("the digest sink stopped: {e}")))?
        .map_err(StoreError::AuditWrite)?;
    *state = (signed.digest.seq, Some(signed.digest.sha256()));
    Ok(signed)
}

/// What the log holds now, as digest `seq` of `replica`'s chain after `previous`.
async fn collect(
    pool: &sqlx::AnyPool,
    replica: &str,
    seq: u64,
    previous: Option<String>,
    every_secs: u64,
    last: bool,
) -> Result<AuditDigest, sqlx::Error> {
    let at = crate::audit::now_text();
    let origin: Option<AuditId> =
        sqlx::query_scalar("SELECT MAX(last_unchained_id) FROM erp_audit_chain_origin")
            .fetch_one(pool)
            .await?;
    let max_audit_id: Option<AuditId> = sqlx::query_scalar("SELECT MAX(id) FROM erp_audit_log")
        .fetch_one(pool)
        .await?;
    let max_audit_id = max_audit_id.unwrap_or(0);
    let chains = chain_verify::heads(pool, None).await?;
    let origin = origin.unwrap_or(0);
    let unlinked = digest_read::unlinked(pool, origin, max_audit_id).await?;
    let archives = digest_read::archives(pool).await?;
    Ok(AuditDigest {
        format: DIGEST_FORMAT.into(),
        replica: replica.into(),
        seq,
        at,
        every_secs,
        last,
        previous_sha256: previous,
        origin,
        max_audit_id,
        chains,
        unlinked,
        archives,
    })
}

impl Database {
    /// Writes a signed digest of the audit log now (see [`DatabaseOptions::audit_digests`](super::DatabaseOptions::audit_digests))
    /// after committing what the audit writer holds, and returns it. An error when the
    /// database was opened without digests, or the sink refused the file.
    pub async fn write_audit_digest(&self) -> Result<SignedDigest, StoreError> {
        self.flush_audit().await?;
        write(self, false).await
    }

    /// Starts the digest task if digests are on.
    pub(super) fn start_digests(inner: &Arc<Inner>) {
        if let Some(digests) = inner.digests.as_ref() {
            let task = tokio::spawn(run(Arc::downgrade(inner), every(digests)));
            *digests.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        }
    }

    /// At shutdown, after the audit writer stopped: stops the task and writes the last
    /// digest of this replica's chain.
    pub(super) async fn last_digest(&self) {
        let Some(digests) = self.inner.digests.as_ref() else {
            return;
        };
        let task = digests
            .task
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = task {
            task.abort();
        }
        if let Err(e) = write(self, true).await {
            tracing::error!(error = %e, "could not write the last audit digest at shutdown");
        }
    }
}
