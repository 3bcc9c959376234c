//! Durable approvals: a run that pauses for approval is stored with the action it
//! proposes, so any process can list it, a person other than the one it acts for can
//! approve or reject it, and any process can resume it from the store.
//!
//! ```text
//!  Agent::run ──pauses──▶ erp_approvals (pending: tool, normalised arguments, signature,
//!                          reason, limits, the PausedRun)        expires after a set time
//!       reviewer (not the person the run acts for) ──approve / reject──▶ one wins
//!  ApprovalQueue::resume ──▶ Agent::resume with an Approval of exactly that signature
//!                            (once: a later resume is refused, nothing changes; two at
//!                             once run the draft once, its idempotency key replays it)
//! ```

use std::sync::Arc;
use std::time::Duration;

use super::clock::{Clock, SystemClock};
use super::notice::{APPROVAL_WAITING, ApprovalNotice};
use super::outbox::Outbox;
use super::outcome::{PausedRun, ResumeError};
use super::signature::action_digest;
use super::stored::{ApprovalStatus, StoredApproval};
use crate::audit::{AuditEntry, time_text};
use crate::runtime::PreviewHook;
use crate::runtime::preview::SharedHook;
use crate::store::approvals::{self as sql, NewApproval, Which};
use crate::tool::context::Principal;
use crate::{CallKey, Database, StoreError};

/// How long a pending approval can be decided, unless set with
/// [`ApprovalQueue::expire_after`]: 24 hours.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 3600);

/// Audit outcome recorded in the run's trail when a person approves a stored action.
pub const APPROVAL_GRANTED: &str = "approval_granted";
/// Audit outcome recorded in the run's trail when a person rejects a stored action.
pub const APPROVAL_REJECTED: &str = "approval_rejected";

/// Why a decision was not recorded. Nothing changed.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    /// No such approval in the reviewer's branch.
    #[error("approval {0} was not found in your branch")]
    NotFound(i64),
    /// Four eyes: the action was proposed on the reviewer's own behalf.
    #[error(
        "approval {0} is for an action proposed on your own behalf; another person must \
         decide it"
    )]
    OwnAction(i64),
    /// Nobody decided in time.
    #[error(
        "approval {id} expired at {expired_at} and can no longer be decided; the run has to \
         propose the action again"
    )]
    Expired {
        /// The approval.
        id: i64,
        /// When it expired.
        expired_at: String,
    },
    /// Someone decided first (a concurrent approve or reject lost).
    #[error("approval {id} was already {} by {by} at {at}", status.as_str())]
    AlreadyDecided {
        /// The approval.
        id: i64,
        /// The decision that stands.
        status: ApprovalStatus,
        /// Who made it.
        by: String,
        /// When.
        at: String,
    },
    /// A rejection must say why.
    #[error("a rejection needs a reason: say why, for the person the run acts for")]
    ReasonRequired,
    /// The store failed; nothing was decided.
    #[error("the approval store failed: {0}")]
    Store(#[from] StoreError),
}

/// Why a run could not be resumed from the store. Nothing was executed.
#[derive(Debug, thiserror::Error)]
pub enum StoredResumeError {
    /// No such approval.
    #[error("approval {0} was not found")]
    NotFound(i64),
    /// Only an approved action can be resumed.
    #[error("approval {id} is {}; only an approved action can be resumed", status.as_str())]
    NotApproved {
        /// The approval.
        id: i64,
        /// Where it stands.
        status: ApprovalStatus,
    },
    /// A run already went on from this approval: its action ran and the run ended (or
    /// stopped again) after it. Nothing was run and nothing changed.
    #[error(
        "approval {id} was acted on already: the run resumed from it at {at} and then stood \
         `{status}`; nothing was run or changed"
    )]
    AlreadyResumed {
        /// The approval.
        id: i64,
        /// When the run first resumed from it.
        at: String,
        /// How the run stood after that resume (`done`, `awaiting_approval`, ...).
        status: String,
    },
    /// The loop refused to resume (another principal, a mismatching approval, ...).
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The stored paused run cannot be read.
    #[error("the paused run of approval {id} cannot be read: {detail}")]
    Unreadable {
        /// The approval.
        id: i64,
        /// What is wrong.
        detail: String,
    },
    /// The store failed.
    #[error("the approval store failed: {0}")]
    Store(#[from] StoreError),
}

/// Durable approvals on the application database (`erp_approvals`). Cheap to clone.
///
/// Give it to the agent with [`Agent::approval_queue`](super::Agent::approval_queue): every run that pauses for approval
/// is then stored, found by any process through [`pending`](Self::pending), decided with
/// [`approve`](Self::approve) / [`reject`](Self::reject), and resumed with
/// [`resume`](Self::resume).
///
/// ```no_run
/// # async fn demo(agent: erp_tools_core::agent::Agent, db: erp_tools_core::Database,
/// #     buyer: std::sync::Arc<erp_tools_core::Principal>, reviewer: erp_tools_core::Principal,
/// #     mut model: erp_tools_core::agent::ScriptedModel) -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use erp_tools_core::agent::ApprovalQueue;
///
/// let queue = ApprovalQueue::new(db).expire_after(Duration::from_secs(4 * 3600));
/// let agent = agent.approval_queue(queue.clone());
/// let out = agent.run(&buyer, &mut model, "Pay V-0001's invoice 7").await;
/// // In any process, a reviewer of the same branch (not the buyer) decides:
/// let waiting = queue.pending(reviewer.branch_id()).await?;
/// queue.approve(waiting[0].id, &reviewer, None).await?;
/// // And the run resumes, executing exactly the approved action once:
/// let done = queue.resume(&agent, &buyer, &mut model, waiting[0].id).await?;
/// # let _ = (out, done); Ok(()) }
/// ```
#[derive(Clone)]
pub struct ApprovalQueue {
    pub(super) db: Database,
    ttl: Duration,
    clock: Arc<dyn Clock>,
    pub(super) hooks: Arc<std::collections::HashMap<String, SharedHook>>,
    outbox: Option<Outbox>,
}

impl std::fmt::Debug for ApprovalQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalQueue")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl ApprovalQueue {
    /// Approvals stored in `db`, expiring after [`DEFAULT_APPROVAL_TTL`], timed by the
    /// system clock.
    pub fn new(db: Database) -> Self {
        ApprovalQueue {
            db,
            ttl: DEFAULT_APPROVAL_TTL,
            clock: Arc::new(SystemClock::new()),
            hooks: Arc::default(),
            outbox: None,
        }
    }

    /// Tells approvers through `outbox`: every approval stored from now on records an
    /// [`APPROVAL_WAITING`](super::APPROVAL_WAITING) notification in the same transaction
    /// (and the outbox's worker records an expiry when it expires undecided).
    pub fn notify(mut self, outbox: Outbox) -> Self {
        self.outbox = Some(outbox);
        self
    }

    /// Previews calls of `tool` (a draft that does not write through the framework's
    /// transaction, such as a draft in an external ERP) with `hook` before they wait for
    /// approval, instead of a rolled-back run of the handler. The approved call runs only
    /// if the hook, asked again just before, still returns the same preview.
    pub fn preview_hook(mut self, tool: impl Into<String>, hook: impl PreviewHook) -> Self {
        Arc::make_mut(&mut self.hooks).insert(tool.into(), Arc::new(hook));
        self
    }

    /// Pending approvals stored from now on can be decided for `ttl`, then expire.
    pub fn expire_after(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Uses `clock` for creation, expiry and decision times.
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// How long a pending approval can be decided.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The database the approvals are stored in.
    pub fn database(&self) -> &Database {
        &self.db
    }

    pub(super) fn now(&self) -> String {
        time_text(self.clock.utc())
    }

    /// Stores the action `paused` waits for; returns the approval's id (the same id if it
    /// was stored before).
    pub(crate) async fn keep(
        &self,
        paused: &PausedRun,
        branch_code: &str,
        limits: Option<String>,
    ) -> Result<i64, StoreError> {
        let p = &paused.pending;
        let now = self.clock.utc();
        let expires = now + chrono::Duration::from_std(self.ttl).unwrap_or(chrono::Duration::MAX);
        let paused_json = serde_json::to_string(paused)
            .map_err(|e| StoreError::Sqlx(sqlx::Error::Protocol(e.to_string())))?;
        // The same action with another preview (a price changed) is another approval.
        let mut digest = action_digest(&p.tool, &p.arguments);
        let preview = match &p.preview {
            Some(preview) => {
                digest =
                    crate::validate::canonical_hash(&serde_json::json!([digest, preview.digest]));
                let json = serde_json::to_string(preview)
                    .map_err(|e| StoreError::Sqlx(sqlx::Error::Protocol(e.to_string())))?;
                Some((json, preview.digest.clone()))
            }
            None => None,
        };
        let notice = |id: i64| ApprovalNotice {
            id,
            run_id: p.run_id.clone(),
            tool: p.tool.clone(),
            reason: p.reason.clone(),
            requested_for: paused.on_behalf_of.clone(),
            branch_code: branch_code.to_string(),
            expires_at: time_text(expires),
        };
        let notify = self.outbox.as_ref().map(|outbox| {
            move |id: i64| {
                let mut n = outbox.notification(APPROVAL_WAITING, notice(id));
                n.branch_id = paused.branch_id;
                n
            }
        });
        let new = NewApproval {
            run_id: &p.run_id,
            call_id: &p.call_id,
            tool: &p.tool,
            arguments: p.arguments.to_string(),
            signature: &p.signature,
            digest,
            reason: &p.reason,
            limits,
            user_id: &paused.on_behalf_of,
            branch_id: paused.branch_id,
            branch_code,
            paused_run: paused_json,
            preview,
            created_at: time_text(now),
            expires_at: time_text(expires),
        };
        let notify = notify
            .as_ref()
            .map(|f| f as &(dyn Fn(i64) -> crate::store::outbox::NewNotification + Send + Sync));
        Ok(sql::insert(self.db.pool(), new, notify).await?)
    }

    /// Approval `id`, whatever its branch (for the application's own resume step).
    pub async fn get(&self, id: i64) -> Result<Option<StoredApproval>, StoreError> {
        let now = self.now();
        Ok(sql::get(self.db.pool(), id).await?.map(|a| a.seen_at(&now)))
    }

    /// The actions of `branch_id` waiting for a decision (not expired), newest first.
    pub async fn pending(&self, branch_id: i64) -> Result<Vec<StoredApproval>, StoreError> {
        self.list(branch_id, None, Which::Open, 500).await
    }

    /// The latest `limit` approvals of `branch_id` that were decided or expired, newest
    /// first.
    pub async fn decided(
        &self,
        branch_id: i64,
        limit: i64,
    ) -> Result<Vec<StoredApproval>, StoreError> {
        self.list(branch_id, None, Which::Closed, limit).await
    }

    /// Every approval of run `run_id` in `branch_id`, newest first.
    pub async fn for_run(
        &self,
        branch_id: i64,
        run_id: &str,
    ) -> Result<Vec<StoredApproval>, StoreError> {
        let mut all = self.list(branch_id, Some(run_id), Which::Open, 500).await?;
        all.extend(
            self.list(branch_id, Some(run_id), Which::Closed, 500)
                .await?,
        );
        all.sort_by_key(|a| std::cmp::Reverse(a.id));
        Ok(all)
    }

    async fn list(
        &self,
        branch_id: i64,
        run_id: Option<&str>,
        which: Which,
        limit: i64,
    ) -> Result<Vec<StoredApproval>, StoreError> {
        let now = self.now();
        let rows = sql::list(self.db.pool(), branch_id, run_id, which, &now, limit).await?;
        Ok(rows.into_iter().map(|a| a.seen_at(&now)).collect())
    }

    /// `reviewer` approves action `id`, with an optional note. The reviewer must be of the
    /// action's branch and not the person it was proposed for (four eyes); the action
    /// must be pending and not expired. Of two concurrent decisions one wins; the other
    /// gets [`DecisionError::AlreadyDecided`].
    pub async fn approve(
        &self,
        id: i64,
        reviewer: &Principal,
        note: Option<&str>,
    ) -> Result<StoredApproval, DecisionError> {
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        self.decide(id, reviewer, ApprovalStatus::Approved, note)
            .await
    }

    /// `reviewer` rejects action `id`, saying `why` (required). The same rules as
    /// [`approve`](Self::approve).
    pub async fn reject(
        &self,
        id: i64,
        reviewer: &Principal,
        why: &str,
    ) -> Result<StoredApproval, DecisionError> {
        let why = why.trim();
        if why.is_empty() {
            return Err(DecisionError::ReasonRequired);
        }
        self.decide(id, reviewer, ApprovalStatus::Rejected, Some(why))
            .await
    }

    async fn decide(
        &self,
        id: i64,
        reviewer: &Principal,
        status: ApprovalStatus,
        note: Option<&str>,
    ) -> Result<StoredApproval, DecisionError> {
        let pool = self.db.pool();
        let stored = match sql::get(pool, id).await.map_err(StoreError::from)? {
            Some(a) if a.branch_id == reviewer.branch_id() => a,
            _ => return Err(DecisionError::NotFound(id)),
        };
        if stored.user_id == reviewer.user_id() {
            return Err(DecisionError::OwnAction(id));
        }
        let now = self.now();
        let won = sql::decide(pool, id, status, reviewer.user_id(), &now, note)
            .await
            .map_err(StoreError::from)?;
        let current = sql::get(pool, id)
            .await
            .map_err(StoreError::from)?
            .ok_or(DecisionError::NotFound(id))?
            .seen_at(&now);
        if !won {
            return Err(match current.status {
                ApprovalStatus::Expired | ApprovalStatus::Pending => DecisionError::Expired {
                    id,
                    expired_at: current.expires_at,
                },
                status => DecisionError::AlreadyDecided {
                    id,
                    status,
                    by: current.decided_by.unwrap_or_default(),
                    at: current.decided_at.unwrap_or_default(),
                },
            });
        }
        self.record_decision(&current, reviewer).await?;
        Ok(current)
    }

    /// The decision in the run's audit trail, next to the events of the loop.
    async fn record_decision(
        &self,
        decided: &StoredApproval,
        reviewer: &Principal,
    ) -> Result<(), StoreError> {
        let (outcome, message) = match decided.status {
            ApprovalStatus::Rejected => (
                APPROVAL_REJECTED,
                format!(
                    "rejected by {}: {}",
                    reviewer.user_id(),
                    decided.note.as_deref().unwrap_or_default()
                ),
            ),
            _ => (
                APPROVAL_GRANTED,
                format!("approved by {}", reviewer.user_id()),
            ),
        };
        let owner = Principal::builder(
            decided.user_id.clone(),
            decided.branch_id,
            decided.branch_code.clone(),
        )
        .build();
        // The decision joins the loop's events of the same call: its key needs the step
        // the run paused at.
        let step = sql::paused_run(self.db.pool(), decided.id)
            .await?
            .and_then(|text| serde_json::from_str::<PausedRun>(&text).ok())
            .map(|paused| paused.steps);
        let mut entry = AuditEntry::new(&owner, decided.run_id.clone(), outcome)
            .tool(decided.tool.clone(), decided.call_id.clone())
            .arguments(&decided.arguments)
            .action_signature(decided.signature.clone())
            .message(message);
        entry.call_key = step.map(|step| CallKey::loop_call(step, &decided.call_id).into_string());
        self.db.record_event(entry).await.map(|_| ())
    }
}
