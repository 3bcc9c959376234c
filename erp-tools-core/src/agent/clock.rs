//! Time for the timeout brake: an injectable [`Clock`], so the brake can be tested
//! without sleeping.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;

/// The loop's source of time.
///
/// `now` is monotonic time since an arbitrary origin (only differences matter); `utc` is
/// wall-clock time for audit events; `sleep` completes once `now` has advanced by at least
/// the given duration, and is what bounds a model or tool call that hangs.
pub trait Clock: Send + Sync {
    /// Monotonic time since the clock's origin.
    fn now(&self) -> Duration;
    /// Wall-clock time, for audit events.
    fn utc(&self) -> DateTime<Utc>;
    /// Completes once `now()` has advanced by `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// The real clock: [`Instant`] for `now`, the system time for `utc`, Tokio's timer for
/// `sleep`.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn utc(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that moves only when told to, for tests: [`advance`](Self::advance) it from a
/// scripted model or a tool to simulate a slow step. Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use erp_tools_core::agent::{Clock, ManualClock};
///
/// let clock = ManualClock::new();
/// let before = clock.now();
/// clock.advance(Duration::from_secs(90));
/// assert_eq!(clock.now() - before, Duration::from_secs(90));
/// ```
#[derive(Clone, Debug)]
pub struct ManualClock {
    start_utc: DateTime<Utc>,
    now: Arc<tokio::sync::watch::Sender<Duration>>,
}

impl ManualClock {
    /// A clock at zero whose wall time starts at 2026-01-01T00:00:00Z.
    pub fn new() -> Self {
        Self::starting_at(DateTime::from_timestamp(1_767_225_600, 0).unwrap_or_default())
    }

    /// A clock at zero whose wall time starts at `start`.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        let (tx, _rx) = tokio::sync::watch::channel(Duration::ZERO);
        ManualClock {
            start_utc: start,
            now: Arc::new(tx),
        }
    }

    /// Moves time forward by `by`, waking every sleep whose deadline has passed.
    pub fn advance(&self, by: Duration) {
        self.now.send_modify(|t| *t += by);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        *self.now.borrow()
    }
    fn utc(&self) -> DateTime<Utc> {
        let offset = chrono::Duration::from_std(self.now()).unwrap_or(chrono::Duration::MAX);
        self.start_utc + offset
    }
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        let deadline = self.now().saturating_add(duration);
        let mut rx = self.now.subscribe();
        Box::pin(async move {
            // The sender lives as long as any clone of the clock; if every clone is gone,
            // time can no longer advance and the sleep never completes, like a real one
            // that is never polled again.
            if rx.wait_for(|t| *t >= deadline).await.is_err() {
                futures::future::pending::<()>().await;
            }
        })
    }
}
