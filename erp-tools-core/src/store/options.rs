//! [`DatabaseOptions`]: how to open a [`Database`](super::Database).

use std::time::Duration;

/// How to open a [`Database`](crate::Database); [`Database::open`](crate::Database::open)
/// uses the defaults.
#[derive(Clone, Debug)]
pub struct DatabaseOptions {
    pub(crate) url: String,
    pub(crate) read_url: Option<String>,
    pub(crate) max_connections: Option<u32>,
    pub(crate) busy_timeout: Duration,
    pub(crate) acquire_timeout: Duration,
    pub(crate) recovery_grace: Option<Duration>,
}

impl DatabaseOptions {
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Options for `url` (`sqlite://path` or `postgres://...`).
    pub fn new(url: impl Into<String>) -> Self {
        DatabaseOptions {
            url: url.into(),
            read_url: None,
            max_connections: None,
            busy_timeout: Duration::from_secs(10),
            acquire_timeout: Duration::from_secs(30),
            recovery_grace: None,
        }
    }

    /// PostgreSQL only: a separate URL for the read pool, typically a role granted only
    /// `SELECT`. Without it the read pool uses the main URL with read-only sessions.
    pub fn read_url(mut self, url: impl Into<String>) -> Self {
        self.read_url = Some(url.into());
        self
    }

    /// Size of the write pool. Defaults: 1 for SQLite (one writer at a time), 10 for
    /// PostgreSQL.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = Some(n.max(1));
        self
    }

    /// SQLite only: how long a writer waits for another process's write lock
    /// (default 10 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How long a call waits for a pooled connection (default 30 s).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }

    /// How old a call's `attempt` audit row must be before the start-up recovery pass
    /// closes it as `interrupted` (its server process was stopped while the call ran).
    /// Defaults: none for SQLite (one server process owns the file, so every open
    /// `attempt` row at start-up is a stopped call's), 10 minutes for PostgreSQL (other
    /// server processes sharing the database may still be running their calls). Set it
    /// to the longest a call may take in your deployment.
    pub fn recovery_grace(mut self, grace: Duration) -> Self {
        self.recovery_grace = Some(grace);
        self
    }

    /// The grace period of the recovery pass on `backend`.
    pub(crate) fn grace_for(&self, backend: crate::tool::handles::Backend) -> Duration {
        self.recovery_grace.unwrap_or(match backend {
            crate::tool::handles::Backend::Sqlite => Duration::ZERO,
            crate::tool::handles::Backend::Postgres => Duration::from_secs(600),
        })
    }
}
