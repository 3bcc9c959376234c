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
}
