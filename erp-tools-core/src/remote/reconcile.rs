//! The recovery pass of remote drafts: the pending keys of calls that were interrupted
//! (their process killed mid-call, or a call that ended without an answer and was never
//! retried) are reconciled by looking their document up by its marker, as a retry would.
//! [`reconcile`] runs it to the end; [`reconcile_in_background`] runs it beside the
//! server, which serves meanwhile (a retry of a key the pass holds is told the call is in
//! progress; a key a retry settled first is left to it) and reports its progress on
//! `/readyz` ([`HttpConfig::with_reconciliation`](crate::mcp::HttpConfig)).

use std::sync::Arc;
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
/// Run it at start-up, after [`Database::open`](crate::Database::open): before serving, or
/// beside the server with [`reconcile_in_background`]. On SQLite the file has one server
/// process, so every pending key is a stopped call's.
/// On PostgreSQL with several replicas, a key whose live owner still holds its lease is
/// left alone.
pub async fn reconcile(
    db: &Database,
    lookups: &[(&str, &dyn RemoteLookup)],
    limit: i64,
    max_wait: Duration,
) -> Result<Reconciled, StoreError> {
    reconcile_reporting(db, lookups, limit, max_wait, &mut |_, _| {}).await
}

/// [`reconcile`], telling `progress` after each key what was done and how many keys are
/// left.
async fn reconcile_reporting(
    db: &Database,
    lookups: &[(&str, &dyn RemoteLookup)],
    limit: i64,
    max_wait: Duration,
    progress: &mut (dyn FnMut(Reconciled, u64) + Send),
) -> Result<Reconciled, StoreError> {
    let pool = db.pool();
    let pending = keys::pending(pool, limit).await?;
    let mut left = pending.len() as u64;
    progress(Reconciled::default(), left);
    let mut done = Reconciled::default();
    let deadline = tokio::time::Instant::now() + max_wait;
    let owner = format!("{}/reconcile", db.replica_id());
    for p in pending {
        reconcile_key(db, lookups, &p, &owner, deadline, &mut done).await?;
        left -= 1;
        progress(done, left);
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

/// Reconciles one pending key, counting what happened in `done`.
async fn reconcile_key(
    db: &Database,
    lookups: &[(&str, &dyn RemoteLookup)],
    p: &PendingKey,
    owner: &str,
    deadline: tokio::time::Instant,
    done: &mut Reconciled,
) -> Result<(), StoreError> {
    let pool = db.pool();
    let Some((_, lookup)) = lookups.iter().find(|(t, _)| *t == p.tool_name) else {
        done.unresolved += 1;
        return Ok(());
    };
    let timeout = super::timeout::remote_timeout();
    if p.state == "claimed" {
        // Nothing was sent: no request to wait for.
        if keys::take_over_claimed(pool, &p.key, owner, &after(timeout)).await? {
            let outcome = reconcile_one(db, p, *lookup, owner, timeout).await?;
            done.released += 1;
            audit(db, p, &outcome).await?;
        } else if still_pending(db, p).await? {
            done.unresolved += 1;
        }
        return Ok(());
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
    if !keys::take_over(pool, &p.key, owner, &after(timeout * 2), None).await? {
        // Held by a live call (a retry that came first reconciles it itself).
        if still_pending(db, p).await? {
            done.unresolved += 1;
        }
        return Ok(());
    }
    let outcome = reconcile_one(db, p, *lookup, owner, timeout).await?;
    match &outcome {
        Outcome::Found(_) => done.found += 1,
        Outcome::Released(_) => done.released += 1,
        Outcome::Unresolved(_) => done.unresolved += 1,
    }
    audit(db, p, &outcome).await?;
    Ok(())
}

/// Whether `p`'s key is still pending (not settled, found or freed by a call meanwhile).
async fn still_pending(db: &Database, p: &PendingKey) -> Result<bool, StoreError> {
    let key = keys::load(db.pool(), &p.key).await?;
    Ok(key.is_some_and(|k| {
        k.state
            .as_deref()
            .is_some_and(|s| s == "claimed" || s == "sending" || s == "unknown")
    }))
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

/// Where a [`reconcile_in_background`] pass is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReconcileProgress {
    /// Still running: what was done so far and how many keys are left to look at.
    Running {
        /// Done so far.
        done: Reconciled,
        /// Pending keys not looked at yet.
        left: u64,
    },
    /// Finished: every pending key was looked at.
    Finished(Reconciled),
    /// Stopped by an error of erp-tools' store (retries still reconcile their own keys).
    Failed(String),
}

impl std::fmt::Display for ReconcileProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReconcileProgress::Running { done, left } => write!(
                f,
                "reconciling remote drafts: {left} pending key(s) left, {} found, {} freed, {} left pending",
                done.found, done.released, done.unresolved
            ),
            ReconcileProgress::Finished(done) => write!(
                f,
                "remote drafts reconciled: {} found, {} freed, {} left pending",
                done.found, done.released, done.unresolved
            ),
            ReconcileProgress::Failed(e) => write!(f, "the reconcile of remote drafts failed: {e}"),
        }
    }
}

/// A [`reconcile`] pass running beside the server: its progress for `/readyz` and the
/// logs, and its end. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Reconciliation {
    progress: tokio::sync::watch::Receiver<ReconcileProgress>,
}

impl Reconciliation {
    /// Where the pass is now.
    pub fn progress(&self) -> ReconcileProgress {
        self.progress.borrow().clone()
    }

    /// Waits until the pass has ended: what it did, or the store's error.
    pub async fn finished(&self) -> Result<Reconciled, String> {
        let mut rx = self.progress.clone();
        let ended = rx
            .wait_for(|p| !matches!(p, ReconcileProgress::Running { .. }))
            .await
            .map(|p| p.clone());
        match ended {
            Ok(ReconcileProgress::Finished(done)) => Ok(done),
            Ok(ReconcileProgress::Failed(e)) => Err(e),
            Ok(ReconcileProgress::Running { .. }) | Err(_) => {
                Err("the reconcile pass stopped without an outcome".into())
            }
        }
    }
}

/// Runs [`reconcile`] on a task of its own, so the server can listen at once: a retry of
/// a pending key meanwhile is exactly-once all the same (the pass and the retry each take
/// the key's lease with one conditional `UPDATE`; the one that does not get it is told the
/// call is in progress, or leaves the key to the one that settled it). Pass the result to
/// [`HttpConfig::with_reconciliation`](crate::mcp::HttpConfig) to report it on `/readyz`.
///
/// `lookups` are tool name → lookup, as for [`reconcile`].
pub fn reconcile_in_background(
    db: Database,
    lookups: Vec<(String, Arc<dyn RemoteLookup>)>,
    limit: i64,
    max_wait: Duration,
) -> Reconciliation {
    let (tx, rx) = tokio::sync::watch::channel(ReconcileProgress::Running {
        done: Reconciled::default(),
        left: 0,
    });
    tokio::spawn(async move {
        let borrowed: Vec<(&str, &dyn RemoteLookup)> = lookups
            .iter()
            .map(|(t, l)| (t.as_str(), l.as_ref()))
            .collect();
        let mut report = |done: Reconciled, left: u64| {
            tx.send_replace(ReconcileProgress::Running { done, left });
        };
        let ended = reconcile_reporting(&db, &borrowed, limit, max_wait, &mut report).await;
        tx.send_replace(match ended {
            Ok(done) => ReconcileProgress::Finished(done),
            Err(e) => ReconcileProgress::Failed(e.to_string()),
        });
    });
    Reconciliation { progress: rx }
}
