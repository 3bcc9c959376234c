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
    pub(crate) sqlite_synchronous_normal: bool,
    pub(crate) replica_lease: Duration,
    pub(crate) without_audit_chain: bool,
    pub(crate) digests: Option<super::digest::DigestOptions>,
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
            without_audit_chain: false,
            digests: None,
            sqlite_synchronous_normal: false,
            replica_lease: super::replicas::DEFAULT_LEASE,
        }
    }

    /// PostgreSQL only: a separate URL for the read pool, typically a role granted only
    /// `SELECT`. Without it the read pool uses the main URL with read-only sessions.
    pub fn read_url(mut self, url: impl Into<String>) -> Self {
        self.read_url = Some(url.into());
        self
    }

    /// Size of the write pool. Defaults: 1 for SQLite (one writer at a time), 10 for
    /// PostgreSQL. An agent's run log (`agent::RunLog`) keeps connections
    /// of its own besides, opened as runs need them: one on SQLite, up to four on
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

    /// The replica lease (default 15 s). Every `Database` holds a lease row in
    /// `erp_replicas`, renews it every third of the lease and, at the same time, closes as
    /// `interrupted` the open calls of replicas whose lease expired; so the calls of a
    /// killed replica are closed within about a lease and a third (20 s by default), and
    /// a live replica's calls are never touched. A replica that cannot renew its row for
    /// a whole lease (a database outage, a stalled process) is taken for dead; the
    /// replicas' clocks must agree to well within a lease.
    pub fn replica_lease(mut self, lease: Duration) -> Self {
        self.replica_lease = lease.max(Duration::from_millis(150));
        self
    }

    pub(crate) fn lease(&self) -> Duration {
        self.replica_lease
    }

    /// How old a call's `attempt` audit row written before replica leases (it names no
    /// replica) must be before the recovery pass closes it as `interrupted`. Rows that
    /// name their replica are closed when its lease expires
    /// ([`replica_lease`](Self::replica_lease)); set by hand, the grace also applies to
    /// them in the start-up pass (a single-server deployment sets `Duration::ZERO` to
    /// close a killed process's calls at once, without waiting for its lease). Defaults:
    /// none for SQLite (one server process owns the file, so at start-up every open
    /// `attempt` row of another replica is a stopped call's), 10 minutes for PostgreSQL.
    /// Set it to the longest a call may take in your deployment.
    pub fn recovery_grace(mut self, grace: Duration) -> Self {
        self.recovery_grace = Some(grace);
        self
    }

    /// SQLite only: commit with `PRAGMA synchronous = NORMAL` instead of the default
    /// `FULL`, on the database file and on its audit file.
    ///
    /// By default (`FULL`, in WAL mode) every commit is flushed to the disk (`fsync`)
    /// before the call answers, so a draft the model was told is "created", and its audit
    /// row, survive a process crash, an operating-system crash and a power loss. With
    /// `NORMAL` the write-ahead log is flushed only at checkpoints: a process crash still
    /// loses nothing, but an operating-system crash or a power loss can lose the last
    /// commits (documents whose "created" answer was already given, and their audit
    /// rows); the database stays consistent, never half-written. It makes a SQLite draft
    /// somewhat cheaper (measured in BENCHMARKS.md). Has no effect on PostgreSQL, whose
    /// durability is the server's `synchronous_commit` and `fsync` settings.
    pub fn sqlite_synchronous_normal_risks_last_commits(mut self) -> Self {
        self.sqlite_synchronous_normal = true;
        self
    }

    /// Writes audit rows without their hash chain (`store/chain.rs`): nothing shows
    /// afterwards that a row written now was not altered or removed, and
    /// [`Database::verify_audit_chain`](crate::Database::verify_audit_chain) reports these
    /// rows as in no chain. The chain is on by default; this exists to measure what it
    /// costs (the `audit_chain` benchmark).
    pub fn without_audit_chain_loses_tamper_evidence(mut self) -> Self {
        self.without_audit_chain = true;
        self
    }

    /// Writes signed digests of the audit log outside the database (see the guide's
    /// audit chapter): every so often, at [`Database::close`](crate::Database::close), and
    /// on [`Database::write_audit_digest`](crate::Database::write_audit_digest). Each
    /// names the head of every chain, the rows not yet linked and the archive claims,
    /// chained to this replica's digest before it and signed with the key of `digests`;
    /// [`AuditReader::verify_digests`](crate::AuditReader::verify_digests) checks the log
    /// against them.
    pub fn audit_digests(mut self, digests: super::digest::DigestOptions) -> Self {
        self.digests = Some(digests);
        self
    }

    /// The `PRAGMA synchronous` value of SQLite's writer connections.
    #[cfg(feature = "sqlite")]
    pub(crate) fn sqlite_synchronous(&self) -> &'static str {
        if self.sqlite_synchronous_normal {
            "NORMAL"
        } else {
            "FULL"
        }
    }

    /// The grace period of the recovery pass on `backend`.
    pub(crate) fn grace_for(&self, backend: crate::tool::handles::Backend) -> Duration {
        self.recovery_grace.unwrap_or(match backend {
            crate::tool::handles::Backend::Sqlite => Duration::ZERO,
            crate::tool::handles::Backend::Postgres => Duration::from_secs(600),
        })
    }
}
