//! A per-caller rate limit on `tools/call`: a token bucket per principal (user and
//! branch), GCRA. On SQLite (one server process) `governor`'s in-process limiter; on
//! PostgreSQL one bucket per principal in the database, shared by every replica
//! (`store/rate_buckets.rs`), so a caller gets the rate plus the burst in total however
//! many replicas serve it. A call over the limit is answered `429 Too Many Requests`
//! with `Retry-After` (whole seconds) before it reaches the tool, so nothing runs and
//! nothing is written. Other requests (`tools/list`, `initialize`, notifications) are not
//! counted.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::tool::context::Principal;

/// How many tool calls one principal may make: `per_minute` on average, up to `burst`
/// at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Calls per minute, on average.
    pub per_minute: u32,
    /// Calls that may be made at once before the average applies.
    pub burst: u32,
}

impl Default for RateLimit {
    /// 120 calls a minute, 30 at once: far above a person's agent, far below a loop gone
    /// wrong.
    fn default() -> Self {
        RateLimit {
            per_minute: 120,
            burst: 30,
        }
    }
}

/// The buckets of every principal seen.
pub(crate) struct CallLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

/// Forget idle buckets once this many principals were seen.
const PRUNE_ABOVE: usize = 10_000;

impl CallLimiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let per_minute = NonZeroU32::new(limit.per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(limit.burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_minute(per_minute).allow_burst(burst);
        CallLimiter {
            limiter: RateLimiter::keyed(quota),
            clock: DefaultClock::default(),
        }
    }

    /// `Ok` when `principal` may call now, otherwise how long to wait.
    pub(crate) fn check(&self, principal: &Principal) -> Result<(), Duration> {
        let key = format!("{}@{}", principal.user_id(), principal.branch_id());
        let verdict = self.limiter.check_key(&key);
        if self.limiter.len() > PRUNE_ABOVE {
            self.limiter.retain_recent();
        }
        verdict.map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// The limiter of a router: in-process, or shared through the database.
pub(crate) enum Limiter {
    Local(CallLimiter),
    Shared {
        db: crate::store::Database,
        limit: RateLimit,
        /// Used when the database cannot be asked.
        fallback: CallLimiter,
    },
}

impl Limiter {
    /// Shared through `db` on PostgreSQL, in-process on SQLite.
    pub(crate) fn for_database(limit: RateLimit, db: &crate::store::Database) -> Limiter {
        match db.backend() {
            crate::tool::handles::Backend::Postgres => Limiter::Shared {
                db: db.clone(),
                limit,
                fallback: CallLimiter::new(limit),
            },
            crate::tool::handles::Backend::Sqlite => Limiter::Local(CallLimiter::new(limit)),
        }
    }

    /// `Ok` when `principal` may call now, otherwise how long to wait.
    pub(crate) async fn check(&self, principal: &Principal) -> Result<(), Duration> {
        match self {
            Limiter::Local(limiter) => limiter.check(principal),
            Limiter::Shared {
                db,
                limit,
                fallback,
            } => {
                let key = format!("{}@{}", principal.user_id(), principal.branch_id());
                let interval = Duration::from_secs(60) / limit.per_minute.max(1);
                let take = crate::store::rate_buckets::take(db.pool(), &key, interval, limit.burst);
                match take.await {
                    Ok(verdict) => verdict,
                    Err(e) => {
                        tracing::warn!(error = %e, "the shared rate limit is unavailable; this replica's own limit applies");
                        fallback.check(principal)
                    }
                }
            }
        }
    }
}

/// Whether a JSON-RPC body holds a `tools/call` request (alone or in a batch).
pub(crate) fn is_tool_call(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Message {
        #[serde(default)]
        method: Option<String>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Body {
        One(Message),
        Batch(Vec<Message>),
    }
    match serde_json::from_slice::<Body>(body) {
        Ok(Body::One(m)) => m.method.as_deref() == Some("tools/call"),
        Ok(Body::Batch(ms)) => ms.iter().any(|m| m.method.as_deref() == Some("tools/call")),
        Err(_) => false,
    }
}

/// `Retry-After` for a wait: whole seconds, at least 1.
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_a_wait_per_principal() {
        let limiter = CallLimiter::new(RateLimit {
            per_minute: 60,
            burst: 3,
        });
        let alice = Principal::builder("7", 1, "SBY-01").build();
        let bob = Principal::builder("9", 2, "JKT-01").build();
        for _ in 0..3 {
            assert!(limiter.check(&alice).is_ok());
        }
        let wait = limiter.check(&alice).unwrap_err();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        assert_eq!(retry_after_secs(wait), 1);
        assert!(
            limiter.check(&bob).is_ok(),
            "another principal has its own bucket"
        );
    }

    #[test]
    fn only_tool_calls_are_counted() {
        assert!(is_tool_call(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#
        ));
        assert!(is_tool_call(
            br#"[{"method":"tools/list"},{"method":"tools/call"}]"#
        ));
        assert!(!is_tool_call(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        ));
        assert!(!is_tool_call(b"not json"));
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(3)), 3);
    }
}
