//! Idempotency key retention: purging keys past their retention, once or in the
//! background, and counting them.

use std::time::Duration;

use super::error::StoreError;
use super::{Database, MIN_KEY_RETENTION, keys};

impl Database {
    /// Deletes idempotency keys created more than `older_than` ago and returns how many
    /// were deleted. `older_than` must be at least [`Database::MIN_KEY_RETENTION`] (24
    /// hours); the default policy is [`Database::DEFAULT_KEY_RETENTION`] (7 days). After a
    /// key is purged, a retry with its `client_ref` creates a new draft.
    pub async fn purge_idempotency_keys(&self, older_than: Duration) -> Result<u64, StoreError> {
        if older_than < MIN_KEY_RETENTION {
            return Err(StoreError::RetentionTooShort {
                min_hours: MIN_KEY_RETENTION.as_secs() / 3600,
                asked_secs: older_than.as_secs(),
            });
        }
        Ok(keys::purge(self.pool(), older_than).await?)
    }

    /// Starts a background task that purges keys older than `retention` every `every`
    /// (first run after one interval). A `retention` below [`Database::MIN_KEY_RETENTION`]
    /// is raised to it. Failures are logged and retried at the next interval; abort the
    /// returned handle to stop. Needs a Tokio runtime.
    pub fn spawn_idempotency_reaper(
        &self,
        retention: Duration,
        every: Duration,
    ) -> tokio::task::JoinHandle<()> {
        let db = self.clone();
        let retention = retention.max(MIN_KEY_RETENTION);
        let every = every.max(Duration::from_secs(1));
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                match db.purge_idempotency_keys(retention).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(purged = n, "purged expired idempotency keys"),
                    Err(e) => tracing::warn!(error = %e, "could not purge idempotency keys"),
                }
            }
        })
    }

    /// How many idempotency keys are stored (for reports and tests).
    pub async fn idempotency_key_count(&self) -> Result<i64, StoreError> {
        Ok(keys::count(self.pool()).await?)
    }
}
