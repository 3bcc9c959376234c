//! The recovery pass of remote drafts: the pending keys of calls that were interrupted
//! (their process killed mid-call, or a call that ended without an answer and was never
//! retried) are reconciled by looking their document up by its marker, as a retry would.

use std::time::Duration;

use futures::future::BoxFuture;

use super::error::RemoteError;
use super::keys::{self, PendingKey, after};
use crate::audit::AuditEntry;
use crate::store::{Database, StoreError};
use crate::tool::context::Principal;
use crate::tool::handles::DocumentRef;

/// The caller a pending key was claimed for: the lookup runs as that person, in that
/// branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteCaller {
    /// The person (the token's subject).
    pub user_id: String,
    /// Their branch.
    pub branch_id: i64,
    /// The tool that claimed the key.
    pub tool: String,
}

/// Looks a document up by its marker outside a call, for [`reconcile`]. The application
/// implements it with the same search as [`RemoteWrite::find_by_marker`](super::RemoteWrite::find_by_marker),
/// resolving the caller's own credentials for the other system.
pub trait RemoteLookup: Send + Sync {
    /// The document that carries `marker`, as `caller` sees it in the other system.
    fn find_by_marker<'a>(
        &'a self,
        caller: &'a RemoteCaller,
        marker: &'a str,
    ) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>>;
}

/// What one [`reconcile`] pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Keys whose document was found by its marker: a retry replays it.
    pub found: u64,
    /// Keys freed: nothing was sent, or the lookup found nothing (a retry creates it).
    pub released: u64,
    /// Keys left pending: no lookup for their tool, the lookup failed, or another call
    /// holds them; a retry reconciles them.
    pub unresolved: u64,
}

/// Reconciles up to `limit` pending keys of remote drafts, with `lookups` (tool name →
/// its lookup). A key whose lease has not run out (its request may still be in flight)
/// is waited for, `max_wait` in all at most (a key left `claimed` sent nothing and is freed
/// at once). Each reconciled key gets an audit row
/// (`remote_reconciled`, with the document when found) and a log line.
///
/// Run it at start-up, after [`Database::open`](crate::Database::open), before serving:
/// on SQLite the file has one server process, so every pending key is a stopped call's.
/// On PostgreSQL with several replicas, a key whose live owner still holds its lease is
/// left alone.
pub async fn reconcile(
    db: &Database,
    lookups: &[(&str, &dyn RemoteLookup)],
    limit: i64,
    max_wait: Duration,
) -> Result<Reconciled, StoreError> {
    let pool = db.pool();
    let pending = keys::pending(pool, limit).await?;
    let mut done = Reconciled::default();
    let deadline = tokio::time::Instant::now() + max_wait;
    let owner = format!("{}/reconcile", db.replica_id());
    for p in pending {
        let Some((_, lookup)) = lookups.iter().find(|(t, _)| *t == p.tool_name) else {
            done.unresolved += 1;
            continue;
        };
        let timeout = super::timeout::remote_timeout();
        if p.state == "claimed" {
            // Nothing was sent: no request to wait for.
            if keys::take_over_claimed(pool, &p.key, &owner, &after(timeout)).await? {
                let outcome = reconcile_one(db, &p, *lookup, &owner, timeout).await?;
                done.released += 1;
                audit(db, &p, &outcome).await?;
            } else {
                done.unresolved += 1;
            }
            continue;
        }
        if let Some(until) = p
            .lease_until
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            && let Ok(left) = (until.with_timezone(&chrono::Utc) - chrono::Utc::now()).to_std()
        {
            let wake = (tokio::time::Instant::now() + left).min(deadline);
            tokio::time::sleep_until(wake).await;
        }
        if !keys::take_over(pool, &p.key, &owner, &after(timeout * 2), None).await? {
            done.unresolved += 1;
            continue;
        }
        let outcome = reconcile_one(db, &p, *lookup, &owner, timeout).await?;
        match &outcome {
            Outcome::Found(_) => done.found += 1,
            Outcome::Released(_) => done.released += 1,
            Outcome::Unresolved(_) => done.unresolved += 1,
        }
        audit(db, &p, &outcome).await?;
    }
    if done != Reconciled::default() {
        tracing::warn!(
            found = done.found,
            released = done.released,
            unresolved = done.unresolved,
            "reconciled the pending keys of interrupted remote drafts"
        );
    }
    Ok(done)
}

/// How one key ended.
enum Outcome {
    Found(DocumentRef),
    Released(&'static str),
    Unresolved(String),
}

async fn reconcile_one(
    db: &Database,
    p: &PendingKey,
    lookup: &dyn RemoteLookup,
    owner: &str,
    timeout: Duration,
) -> Result<Outcome, StoreError> {
    let pool = db.pool();
    if p.state == "claimed" {
        // Never marked `sending`: nothing was sent.
        keys::release(pool, &p.key, owner).await?;
        return Ok(Outcome::Released("nothing had been sent"));
    }
    let caller = RemoteCaller {
        user_id: p.user_id.clone(),
        branch_id: p.branch_id,
        tool: p.tool_name.clone(),
    };
    let found = tokio::time::timeout(timeout, lookup.find_by_marker(&caller, &p.marker)).await;
    Ok(match found {
        Ok(Ok(Some(doc))) => {
            keys::found(pool, &p.key, owner, &doc).await?;
            Outcome::Found(doc)
        }
        Ok(Ok(None)) => {
            keys::release(pool, &p.key, owner).await?;
            Outcome::Released("the lookup by marker found nothing")
        }
        Ok(Err(e)) => {
            keys::mark(pool, &p.key, owner, "unknown", &after(Duration::ZERO)).await?;
            Outcome::Unresolved(e.to_string())
        }
        Err(_) => {
            keys::mark(pool, &p.key, owner, "unknown", &after(Duration::ZERO)).await?;
            Outcome::Unresolved(format!("no answer within {} ms", timeout.as_millis()))
        }
    })
}

/// The audit row of one reconciled key.
async fn audit(db: &Database, p: &PendingKey, outcome: &Outcome) -> Result<(), StoreError> {
    let who = Principal::builder(p.user_id.clone(), p.branch_id, "").build();
    let mut entry = AuditEntry::new(&who, p.key.agent_run_id.clone(), "remote_reconciled")
        .tool(p.tool_name.clone(), "");
    entry = match outcome {
        Outcome::Found(doc) => entry
            .message(format!(
                "client_ref {}: found by marker {} at start-up; a retry replays it",
                p.key.client_ref, p.marker
            ))
            .document(doc.clone()),
        Outcome::Released(why) => entry.message(format!(
            "client_ref {}: {why}; the key was freed, a retry creates the draft",
            p.key.client_ref
        )),
        Outcome::Unresolved(why) => entry.message(format!(
            "client_ref {}: still unknown ({why}); a retry looks it up again",
            p.key.client_ref
        )),
    };
    tracing::info!(key = %p.key, message = entry_message(outcome), "remote draft reconciled");
    db.record_event(entry).await?;
    Ok(())
}

fn entry_message(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Found(_) => "found",
        Outcome::Released(_) => "released",
        Outcome::Unresolved(_) => "unresolved",
    }
}
