//! Drafts whose document lives in another system: an ERP the team does not own, reached
//! over its API (SPEC R11).
//!
//! A local draft is exactly-once because its idempotency key is claimed in the same
//! transaction as the document. A document written over HTTP cannot share that
//! transaction, and the classic failure follows: the ERP commits, the answer is lost (a
//! timeout, a proxy's 502, a killed process), the agent retries, and a second purchase
//! exists. A draft tool that takes [`RemoteDraft`] instead of [`DraftTx`](crate::DraftTx)
//! gets the protocol that prevents it (described on [`RemoteDraft`]): the key is claimed
//! *pending* before anything is sent, the document carries a marker derived from the key,
//! and a pending key is reconciled by looking the document up by its marker, on retry and
//! in the start-up pass ([`reconcile`]).
//!
//! The application implements two small traits for its system: [`RemoteWrite`]
//! (`find_by_marker`, `create`: per call, with the caller's credentials) and
//! [`RemoteLookup`] (`find_by_marker` for a stored caller, for [`reconcile`] and
//! [`reconcile_in_background`]), both returning a [`BoxFuture`]. It maps its HTTP
//! client's failures and the system's answers to [`RemoteError`], one mapping for reads
//! and writes, whose variant decides what the model is told: a read says truthfully
//! whether it was not sent, refused (the system's text quoted), timed out, answered
//! without a result or lost ([`RemoteError::to_read_error`]); for a create, a refusal or
//! an unreachable system says no draft was created, and every other failure says what
//! happened, that nothing is confirmed, and to retry with the same `client_ref`.
//!
//! Document ids are the system's own ([`DocumentId`](crate::DocumentId): a number, or a
//! string such as ERPNext's `PUR-ORD-2026-00042`), kept unchanged in the audit log, the
//! review console and the cards.
//!
//! The outcome of every request to the other system is on the call's audit row
//! (`erp_outcome`: created, found by marker, refused with its status, unknown; `erp_error`:
//! the system's own text, as data) next to the document's id and number.
//!
//! The guide's chapter: *Drafts, idempotency and remote ERPs* (`guide/src/drafts.md` in the repository).

pub(crate) mod error;
pub(crate) mod handle;
#[cfg(feature = "runtime")]
pub(crate) mod keys;
#[cfg(feature = "runtime")]
mod reconcile;
mod timeout;

pub use error::{RemoteError, quoted};
/// The boxed future [`RemoteWrite`] and [`RemoteLookup`] return (`futures`' own), so an
/// implementation needs no `futures` dependency: `Box::pin(async move { .. })`.
pub use futures::future::BoxFuture;
pub use handle::{RemoteDraft, RemoteWrite};
#[cfg(feature = "runtime")]
pub use reconcile::{
    ReconcileProgress, Reconciled, Reconciliation, RemoteCaller, RemoteLookup, reconcile,
    reconcile_in_background,
};
#[cfg(feature = "runtime")]
pub(crate) use timeout::remote_timeout;
pub use timeout::{request_timeout, retry_wait, sending_lease, set_request_timeout};

/// The marker a remote draft's document carries: `erp-tools:` and the first 24 hex
/// digits of the sha256 of the key (`agent_run_id`, a newline, `client_ref`). The same key
/// always gives the same marker; it names neither the run nor the `client_ref`.
pub fn marker(agent_run_id: &str, client_ref: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(agent_run_id.as_bytes());
    h.update(b"\n");
    h.update(client_ref.as_bytes());
    format!("erp-tools:{}", &hex::encode(h.finalize())[..24])
}

/// The marker of an idempotency key.
#[cfg(feature = "runtime")]
pub(crate) fn marker_for(key: &crate::idempotency::IdempotencyKey) -> String {
    marker(&key.agent_run_id, &key.client_ref)
}

/// How many remote drafts' keys are still pending (claimed, sending or unknown): zero
/// once every interrupted call was reconciled or retried.
#[cfg(feature = "runtime")]
pub async fn pending_keys(db: &crate::Database) -> Result<i64, crate::StoreError> {
    Ok(keys::pending_count(db.pool()).await?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_marker_is_derived_from_the_key_alone() {
        let a = super::marker("run-1", "po-1");
        assert_eq!(a, super::marker("run-1", "po-1"));
        assert_ne!(a, super::marker("run-1", "po-2"));
        assert_ne!(a, super::marker("run-2", "po-1"));
        assert!(a.starts_with("erp-tools:") && a.len() == 34, "{a}");
        assert!(!a.contains("po-1"));
    }
}
