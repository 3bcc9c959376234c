//! Executing a remote draft (a document written in another system, see
//! [`RemoteDraft`](crate::remote::RemoteDraft) for the protocol): the call's `attempt`
//! row is made durable, the key is claimed pending (or its stored result replayed, or a
//! pending key taken over once its lease ran out), the handler writes through the
//! handle, and the key is settled, kept pending or freed by what the handle saw.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::Value;

use super::answer::{Finished, panic_text};
use super::row::final_row;
use crate::audit::{AuditEntry, AuditId, Outcome};
use crate::idempotency::{Claim, IdempotencyKey, StoredKey, Verdict, request_hash};
use crate::remote::error::{in_progress, unknown_outcome};
use crate::remote::handle::{BeforeSend, RemoteDraft, Sent, Start};
use crate::remote::keys::{self, RemoteKey, after};
use crate::remote::{marker_for, remote_timeout, retry_wait, sending_lease};
use crate::store::{Database, ErpAnswer, StoreError};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::ToolContext;
use crate::tool::handler::RemoteHandlerFn;

/// What the other system did in one call, for the audit row's `erp_outcome`/`erp_error`.
type ErpOutcome = Option<(String, Option<String>)>;

/// Runs a remote draft call with its audit row. The `attempt` row is durable before
/// anything is sent to the other system, so nothing is ever sent by an unaudited call:
/// the key is claimed while the row commits, and the handler starts once both are done.
/// What the other system answered goes on the row with the call's outcome, written by the
/// audit writer after the answer. `Err` only when the attempt row could not be committed
/// (nothing was sent; a key this call claimed is freed).
pub(crate) async fn run_audited(
    db: &Database,
    handler: RemoteHandlerFn,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    args: Value,
    entry: &AuditEntry,
) -> Result<Finished, StoreError> {
    let pending = db.queue_attempt(entry).await?;
    let call = RemoteCall::new(db, ctx, key, &args);
    let (durable, claimed) = tokio::join!(pending.durable(), call.claim(None));
    let audit_id = match durable {
        Ok(id) => id,
        Err(e) => {
            if matches!(claimed, Ok(true)) {
                let _ = keys::release(db.pool(), key, &call.owner).await;
            }
            return Err(e);
        }
    };
    let (finished, erp) = match run(&call, handler, ctx, args, audit_id, claimed).await {
        Ok(done) => done,
        Err(e) => (
            Finished::failed(Outcome::ToolError, text::draft_transaction_failed(e)),
            None,
        ),
    };
    let mut fin = final_row(&finished);
    fin.erp = erp.map(|(outcome, error)| Box::new(ErpAnswer { outcome, error }));
    if let Err(e) = db.record_outcome(audit_id, fin).await {
        tracing::error!(error = %e, audit_id, "could not queue the outcome of a call");
    }
    Ok(finished)
}

/// One remote draft call's side of its key: who holds it, the marker, the lease.
struct RemoteCall<'a> {
    db: &'a Database,
    ctx: &'a ToolContext,
    key: &'a IdempotencyKey,
    hash: String,
    marker: String,
    owner: String,
    timeout: Duration,
}

impl<'a> RemoteCall<'a> {
    fn new(db: &'a Database, ctx: &'a ToolContext, key: &'a IdempotencyKey, args: &Value) -> Self {
        let hash = request_hash(args);
        RemoteCall {
            db,
            ctx,
            key,
            hash,
            marker: marker_for(key),
            owner: owner_token(db),
            timeout: remote_timeout(),
        }
    }

    /// The claim's lease: it covers the handler's reads; `sending` gets its own lease.
    fn claim_lease(&self) -> Duration {
        self.timeout * 3
    }

    /// Claims the key `claimed` for this call; `true` if it now holds it.
    async fn claim(&self, audit_id: Option<AuditId>) -> Result<bool, sqlx::Error> {
        let claim = Claim {
            key: self.key,
            request_hash: &self.hash,
            tool_name: self.ctx.tool_name(),
            user_id: self.ctx.user_id(),
            branch_id: self.ctx.branch_id(),
        };
        let lease = after(self.claim_lease());
        keys::claim(
            self.db.pool(),
            &claim,
            &self.marker,
            &self.owner,
            &lease,
            audit_id,
        )
        .await
    }
}

/// The key marked `sending` while the handler reads, so a create rarely waits for that
/// commit: started with the handler (for a call that may send), awaited before the
/// create, and renewed then when the reads took longer than the lease's slack (the lease
/// must still cover the whole create when it is sent). Marking early is safe: `sending`
/// only means a create may be in flight, and a call that sends nothing frees the key.
struct EarlyMark {
    marking: Arc<Mutex<Option<tokio::task::JoinHandle<Marked>>>>,
    pool: sqlx::AnyPool,
    key: IdempotencyKey,
    owner: String,
    lease: Duration,
}

/// When a mark was sent, and whether this call still held the key.
type Marked = (Instant, Result<bool, sqlx::Error>);

/// How long after its mark a create may still be sent without renewing it.
const MARK_SLACK: Duration = Duration::from_secs(1);

impl EarlyMark {
    fn start(call: &RemoteCall<'_>, start: &Start) -> Self {
        let lease = sending_lease(call.timeout) - MARK_SLACK;
        let (pool, key, owner) = (call.db.pool().clone(), call.key.clone(), call.owner.clone());
        let marking = (!matches!(start, Start::Known(_))).then(|| {
            let (pool, key, owner) = (pool.clone(), key.clone(), owner.clone());
            tokio::spawn(async move {
                let at = Instant::now();
                let until = after(lease + MARK_SLACK);
                (at, keys::mark(&pool, &key, &owner, "sending", &until).await)
            })
        });
        EarlyMark {
            marking: Arc::new(Mutex::new(marking)),
            pool,
            key,
            owner,
            lease,
        }
    }

    /// The handle's step before the create: the early mark, or a new one.
    fn before_send(&self) -> BeforeSend {
        let (marking, pool, key, owner, lease) = (
            self.marking.clone(),
            self.pool.clone(),
            self.key.clone(),
            self.owner.clone(),
            self.lease,
        );
        Box::new(move || {
            let early = marking.lock().unwrap_or_else(|p| p.into_inner()).take();
            let (pool, key, owner) = (pool.clone(), key.clone(), owner.clone());
            Box::pin(async move {
                if let Some(early) = early {
                    match early.await {
                        Ok((at, Ok(true))) if at.elapsed() < MARK_SLACK => return Ok(()),
                        Ok((_, Ok(false))) => return Err(TAKEN_OVER.to_string()),
                        // Too old, failed, or the task did not finish: mark now.
                        _ => {}
                    }
                }
                match keys::mark(&pool, &key, &owner, "sending", &after(lease + MARK_SLACK)).await {
                    Ok(true) => Ok(()),
                    Ok(false) => Err(TAKEN_OVER.to_string()),
                    Err(e) => Err(e.to_string()),
                }
            })
        })
    }

    /// Waits for a mark the create never waited for.
    async fn finish(&self) {
        let early = self
            .marking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(early) = early {
            let _ = early.await;
        }
    }
}

const TAKEN_OVER: &str = "another call took the key over";

/// The key's owner token for one call: the replica, then a number unique in the process.
fn owner_token(db: &Database) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}/{n}", db.replica_id())
}

/// How often a retry waiting for an earlier call's lease looks at the key again.
const LOOK_AGAIN: Duration = Duration::from_millis(250);

/// How long to wait for an earlier call's lease: until `lease_until`, at most `cap`.
fn wait_for(lease_until: Option<&str>, cap: Duration) -> Option<Duration> {
    let until = chrono::DateTime::parse_from_rfc3339(lease_until?).ok()?;
    let left = until.with_timezone(&chrono::Utc) - chrono::Utc::now();
    let left = left.to_std().ok()?;
    Some(left.min(cap))
}

async fn run(
    call: &RemoteCall<'_>,
    handler: RemoteHandlerFn,
    ctx: &ToolContext,
    args: Value,
    audit_id: AuditId,
    first_claim: Result<bool, sqlx::Error>,
) -> Result<(Finished, ErpOutcome), sqlx::Error> {
    let (db, key, hash) = (call.db, call.key, call.hash.as_str());
    let tool = ctx.tool_name();
    let pool = db.pool();
    let timeout = call.timeout;
    let (marker, owner) = (call.marker.clone(), call.owner.clone());
    let claim_lease = call.claim_lease();
    let mut first_claim = Some(first_claim);
    // Pending keys another call holds are waited for until their lease ends, within
    // `retry_wait` in all; the other turns (a key freed or taken meanwhile) are few.
    let began = Instant::now();
    let deadline = began + retry_wait(timeout);
    let mut turns = 0;
    let in_progress = || {
        let err = in_progress(&key.client_ref, began.elapsed());
        Ok((Finished::failed(Outcome::ToolError, err), None))
    };
    let start = loop {
        let claimed = match first_claim.take() {
            Some(claimed) => claimed?,
            None => call.claim(Some(audit_id)).await?,
        };
        if claimed {
            break Start::Fresh;
        }
        let Some(stored) = keys::load(pool, key).await? else {
            turns += 1;
            if turns >= 4 {
                return in_progress();
            }
            continue;
        };
        if let Some(refusal) = decided(&stored, ctx, key, tool, hash) {
            return Ok((refusal, None));
        }
        // Pending. An earlier call holds it (`claimed`, `sending`: its request may be in
        // flight, or its process died) or ended without an answer (`unknown`): wait until
        // its lease ends, looking again now and then (it may settle meanwhile), then take
        // it over and look the draft up by its marker (`RemoteDraft`, step 4).
        let left = deadline.saturating_duration_since(Instant::now());
        if let Some(wait) = wait_for(stored.lease_until.as_deref(), left)
            && !wait.is_zero()
        {
            tokio::time::sleep(wait.min(LOOK_AGAIN)).await;
            continue;
        }
        if keys::take_over(pool, key, &owner, &after(claim_lease), Some(audit_id)).await? {
            break match (stored.state.as_deref(), stored.document.clone()) {
                (Some("found"), Some(doc)) => Start::Known(doc),
                // The earlier owner never marked it sending: nothing was sent, and that
                // owner can no longer send (its `mark` names it as owner).
                (Some("claimed"), _) => Start::Fresh,
                _ => Start::MaybeSent,
            };
        }
        turns += 1;
        // Another retry took it first, or the lease outlasts the wait.
        if turns >= 4 || Instant::now() >= deadline {
            return in_progress();
        }
    };

    let early_mark = EarlyMark::start(call, &start);
    let mut draft = RemoteDraft {
        marker,
        start: start.clone(),
        sent: Sent::Nothing,
        timeout,
        agent_run_id: key.agent_run_id.clone(),
        user_id: ctx.user_id().to_string(),
        before_send: Some(early_mark.before_send()),
        system: None,
    };
    let ran = AssertUnwindSafe(handler(ctx, &mut draft, args))
        .catch_unwind()
        .await;
    // A mark still running must land before the key is settled or freed.
    early_mark.finish().await;
    let system = draft
        .system
        .clone()
        .unwrap_or_else(|| "the ERP".to_string());
    let document = draft.document().cloned();
    let sent = std::mem::replace(&mut draft.sent, Sent::Nothing);
    let erp: ErpOutcome = match &sent {
        Sent::Nothing | Sent::Sending => None,
        Sent::Created(d) => Some((
            format!("created {} {} ({})", d.doc_type, d.id, d.number),
            None,
        )),
        Sent::Found(d) => Some((
            format!("found by marker {} {} ({})", d.doc_type, d.id, d.number),
            None,
        )),
        Sent::Refused(e) | Sent::Unknown(e, _) => Some((e.outcome(), Some(e.detail().to_string()))),
    };
    let erp = erp.or_else(|| match &start {
        Start::Known(d) => Some((
            format!("known from recovery {} {} ({})", d.doc_type, d.id, d.number),
            None,
        )),
        _ => None,
    });
    let result = match ran {
        Ok(r) => r,
        Err(panic) => Err(text::handler_panicked(Tier::Draft, &panic_text(&panic))),
    };
    let finished = match (result, document) {
        (Ok(output), Some(doc)) => {
            if !keys::settle(
                pool,
                key,
                &owner,
                &doc,
                &output.value,
                output.text.as_deref(),
                audit_id,
            )
            .await?
            {
                tracing::warn!(key = %key, "a remote draft's key was taken over before it settled");
            }
            let replayed = !matches!(sent, Sent::Created(_));
            let mut f =
                Finished::succeeded(Tier::Draft, output.value, output.text, Some(doc), replayed);
            if replayed {
                f.audit_message = Some(format!(
                    "the document of client_ref {} already existed in {system}; settled without creating",
                    key.client_ref
                ));
            }
            f
        }
        (result, document) => {
            let err = match (&sent, document) {
                (Sent::Unknown(..) | Sent::Sending, _) => {
                    let lease = after(timeout);
                    keys::mark(pool, key, &owner, "unknown", &lease).await?;
                    match &sent {
                        Sent::Unknown(e, action) => unknown_outcome(&system, Some(e), action),
                        _ => unknown_outcome(&system, None, "draft"),
                    }
                }
                (_, Some(doc)) => {
                    // Written, then the handler failed: the key keeps the document.
                    keys::found(pool, key, &owner, &doc).await?;
                    let err = result
                        .err()
                        .unwrap_or_else(|| text::document_not_recorded(tool));
                    err.or_not_done(&format!(
                        "The draft {} exists in {system}; retry with the same client_ref to get its result.",
                        doc.number
                    ))
                }
                (_, None) if start == Start::MaybeSent && !matches!(sent, Sent::Refused(_)) => {
                    // The earlier attempt was never looked up: keep the key pending.
                    keys::mark(pool, key, &owner, "unknown", &after(Duration::ZERO)).await?;
                    let err = result
                        .err()
                        .unwrap_or_else(|| text::document_not_recorded(tool));
                    err.or_not_done(
                        "An earlier attempt with this client_ref may have created the draft; nothing is \
                         confirmed. Retry with the same client_ref.",
                    )
                }
                (_, None) => {
                    keys::release(pool, key, &owner).await?;
                    let err = result
                        .err()
                        .unwrap_or_else(|| text::document_not_recorded(tool));
                    err.or_not_done(&format!("No draft was created in {system}."))
                }
            };
            Finished::failed(Outcome::ToolError, err)
        }
    };
    Ok((finished, erp))
}

/// The answer for a key that is already decided: a replay of a settled key, or a refusal
/// for other arguments or another caller; `None` while it is pending for this call.
fn decided(
    stored: &RemoteKey,
    ctx: &ToolContext,
    key: &IdempotencyKey,
    tool: &str,
    hash: &str,
) -> Option<Finished> {
    let as_stored = StoredKey {
        request_hash: stored.request_hash.clone(),
        tool_name: stored.tool_name.clone(),
        user_id: stored.user_id.clone(),
        branch_id: stored.branch_id,
        document: stored.document.clone(),
        response: stored.response.clone(),
        response_text: stored.response_text.clone(),
    };
    match as_stored.verdict(ctx.user_id(), ctx.branch_id(), tool, hash) {
        Verdict::Mismatch { same_caller } => Some(Finished::failed(
            Outcome::ToolError,
            text::key_mismatch(key, &as_stored, tool, same_caller),
        )),
        Verdict::Replay if stored.settled() => {
            let mut f = Finished::succeeded(
                Tier::Draft,
                stored.response.clone().unwrap_or(Value::Null),
                stored.response_text.clone(),
                stored.document.clone(),
                true,
            );
            f.audit_message = Some(format!("replay of client_ref {}", key.client_ref));
            Some(f)
        }
        Verdict::Replay => None,
    }
}
