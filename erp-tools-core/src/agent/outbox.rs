//! The notification outbox: approvers are told that an approval waits (or expired) by a
//! row written in the same transaction as the approval, delivered apart from the loop.
//!
//! ```text
//!  ApprovalQueue::keep ──one transaction──▶ erp_approvals + erp_outbox (pending)
//!  Outbox::deliver_due (a worker, every few seconds, any replica)
//!     claim due rows ──▶ Delivery::deliver ──ok──▶ delivered
//!                                       └─fail──▶ retry after 1 s, 2 s, 4 s ... (capped)
//!                                                  └─ after max_attempts ──▶ dead
//!  dead letters: listed (Outbox::dead_letters, the console), sent again (Outbox::resend)
//! ```
//!
//! Delivery is at least once: a worker that dies after the receiver accepted but before
//! the row was marked delivered sends it again. Every attempt carries the notification's
//! delivery id ([`Notification::id`]), which the receiver deduplicates on.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Serialize;

use super::notice::{APPROVAL_EXPIRED, APPROVAL_WAITING, ApprovalNotice, Notification};
use super::stored::StoredApproval;
use crate::audit::time_text;
use crate::store::approvals as approvals_sql;
use crate::store::outbox::{self as sql, NewNotification, OutboxRow};
use crate::{Database, StoreError};

/// Delivers one notification (a webhook, a chat relay, a mail gateway). `Err` with why
/// it failed: the outbox retries later.
pub trait Delivery: Send + Sync {
    /// Delivers `notification`, whose JSON body is `body`.
    fn deliver<'a>(
        &'a self,
        notification: &'a Notification,
        body: &'a str,
    ) -> BoxFuture<'a, Result<(), String>>;
}

/// How failed deliveries are retried: after `first_retry`, doubling up to `max_backoff`,
/// until `max_attempts` attempts failed; then the notification is a dead letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts before a notification is dead (at least 1). Default 8.
    pub max_attempts: u32,
    /// Wait before the first retry. Default 1 s.
    pub first_retry: Duration,
    /// Longest wait between attempts. Default 1 h.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 8,
            first_retry: Duration::from_secs(1),
            max_backoff: Duration::from_secs(3600),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based), `None` after the last.
    pub fn backoff(&self, attempt: u32) -> Option<Duration> {
        if attempt >= self.max_attempts.max(1) {
            return None;
        }
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(31));
        Some(
            self.first_retry
                .saturating_mul(factor)
                .min(self.max_backoff),
        )
    }
}

/// Where a notification stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutboxEntry {
    /// The row's id (what [`Outbox::resend`] names).
    pub id: i64,
    /// `pending`, `delivered` or `dead`.
    pub status: String,
    /// Attempts made.
    pub attempts: i64,
    /// When the next attempt is due (pending).
    pub next_attempt_at: String,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was recorded.
    pub created_at: String,
    /// When it was delivered.
    pub delivered_at: Option<String>,
    /// The notification.
    pub notification: Notification,
}

/// What one [`Outbox::deliver_due`] pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryPass {
    /// Notifications delivered.
    pub delivered: u32,
    /// Attempts that failed and will be retried.
    pub retrying: u32,
    /// Notifications that became dead letters.
    pub dead: u32,
    /// Expiries newly recorded.
    pub expiries: u32,
}

/// The notification outbox on the application database. Cheap to clone. Give it to the
/// [`ApprovalQueue`](super::ApprovalQueue) with
/// [`notify`](super::ApprovalQueue::notify), and run [`deliver_due`](Self::deliver_due)
/// (or [`run`](Self::run)) in a worker.
#[derive(Clone)]
pub struct Outbox {
    db: Database,
    retry: RetryPolicy,
    console: Option<Arc<str>>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("retry", &self.retry)
            .field("console", &self.console)
            .finish_non_exhaustive()
    }
}

impl Outbox {
    /// The outbox in `db`, with the default [`RetryPolicy`].
    pub fn new(db: Database) -> Self {
        Outbox {
            db,
            retry: RetryPolicy::default(),
            console: None,
        }
    }

    /// Retries failed deliveries as `retry` says.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The review console's base URL (e.g. `https://erp.example/review`): notifications
    /// link to its approvals page.
    pub fn console_url(mut self, url: impl Into<String>) -> Self {
        self.console = Some(url.into().into());
        self
    }

    /// The notification about `approval` of `event`, as recorded now.
    pub(super) fn notification(&self, event: &str, approval: ApprovalNotice) -> NewNotification {
        let n = Notification::about(
            event,
            approval,
            self.console.as_deref(),
            time_text(chrono::Utc::now()),
        );
        let kind = if event == APPROVAL_EXPIRED {
            APPROVAL_EXPIRED
        } else {
            APPROVAL_WAITING
        };
        NewNotification {
            delivery_id: n.id.clone(),
            kind,
            branch_id: 0,
            payload: serde_json::to_string(&n).unwrap_or_default(),
            now: n.created_at,
        }
    }

    /// One delivery pass: records the expiry of approvals that expired undecided, then
    /// claims the notifications due (at most 100; each by one worker) and delivers them
    /// with `delivery`, one after the other.
    pub async fn deliver_due(&self, delivery: &dyn Delivery) -> Result<DeliveryPass, StoreError> {
        let pool = self.db.pool();
        let mut pass = DeliveryPass {
            expiries: self.record_expiries().await?,
            ..DeliveryPass::default()
        };
        let now = chrono::Utc::now();
        let until = now + chrono::Duration::seconds(60);
        let due = sql::claim_due(pool, &time_text(now), &time_text(until), 100).await?;
        for row in due {
            let attempt = row.attempts + 1;
            let result = match serde_json::from_str::<Notification>(&row.payload) {
                Ok(n) => delivery.deliver(&n, &row.payload).await,
                Err(e) => Err(format!("the stored notification is unreadable: {e}")),
            };
            let now = time_text(chrono::Utc::now());
            match result {
                Ok(()) => {
                    sql::delivered(pool, row.id, attempt, &now).await?;
                    pass.delivered += 1;
                }
                Err(error) => {
                    let tries = u32::try_from(attempt).unwrap_or(u32::MAX);
                    let retry_at = self.retry.backoff(tries).map(|wait| {
                        let wait = chrono::Duration::from_std(wait).unwrap_or_default();
                        time_text(chrono::Utc::now() + wait)
                    });
                    if retry_at.is_some() {
                        pass.retrying += 1;
                    } else {
                        pass.dead += 1;
                        tracing::warn!(delivery = %row.delivery_id, %error,
                            "notification is a dead letter after its last attempt");
                    }
                    sql::failed(pool, row.id, attempt, &error, retry_at.as_deref()).await?;
                }
            }
        }
        Ok(pass)
    }

    /// Runs [`deliver_due`](Self::deliver_due) every `every`, forever (spawn it); a
    /// failing pass is logged and the next one runs.
    pub async fn run(self, delivery: Arc<dyn Delivery>, every: Duration) {
        loop {
            if let Err(e) = self.deliver_due(delivery.as_ref()).await {
                tracing::warn!(error = %e, "the notification outbox pass failed");
            }
            tokio::time::sleep(every).await;
        }
    }

    async fn record_expiries(&self) -> Result<u32, StoreError> {
        let pool = self.db.pool();
        let now = time_text(chrono::Utc::now());
        let mut n = 0;
        for id in approvals_sql::expired_unannounced(pool, &now, 100).await? {
            let Some(a) = approvals_sql::get(pool, id).await? else {
                continue;
            };
            let mut new = self.notification(APPROVAL_EXPIRED, notice_of(&a));
            new.branch_id = a.branch_id;
            n += u32::from(sql::insert(pool, new).await?);
        }
        Ok(n)
    }

    /// The dead letters of `branch_id`, newest first.
    pub async fn dead_letters(
        &self,
        branch_id: i64,
        limit: i64,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        self.list(branch_id, "dead", limit).await
    }

    /// The notifications of `branch_id` with `status` (`pending`, `delivered`, `dead`),
    /// newest first.
    pub async fn list(
        &self,
        branch_id: i64,
        status: &str,
        limit: i64,
    ) -> Result<Vec<OutboxEntry>, StoreError> {
        let rows = sql::list(self.db.pool(), branch_id, status, limit).await?;
        Ok(rows.into_iter().filter_map(entry).collect())
    }

    /// The notification with delivery id `delivery_id`.
    pub async fn get(&self, delivery_id: &str) -> Result<Option<OutboxEntry>, StoreError> {
        Ok(sql::get(self.db.pool(), delivery_id).await?.and_then(entry))
    }

    /// Sends dead letter `id` of `branch_id` again (same delivery id, attempts counted
    /// afresh); `false` if there is no such dead letter.
    pub async fn resend(&self, id: i64, branch_id: i64) -> Result<bool, StoreError> {
        let now = time_text(chrono::Utc::now());
        Ok(sql::resend(self.db.pool(), id, branch_id, &now).await?)
    }
}

/// What a notification says about stored approval `a`.
pub(super) fn notice_of(a: &StoredApproval) -> ApprovalNotice {
    ApprovalNotice {
        id: a.id,
        run_id: a.run_id.clone(),
        tool: a.tool.clone(),
        reason: a.reason.clone(),
        requested_for: a.user_id.clone(),
        branch_code: a.branch_code.clone(),
        expires_at: a.expires_at.clone(),
    }
}

fn entry(row: OutboxRow) -> Option<OutboxEntry> {
    let notification = serde_json::from_str(&row.payload).ok()?;
    Some(OutboxEntry {
        id: row.id,
        status: row.status,
        attempts: row.attempts,
        next_attempt_at: row.next_attempt_at,
        last_error: row.last_error,
        created_at: row.created_at,
        delivered_at: row.delivered_at,
        notification,
    })
}
