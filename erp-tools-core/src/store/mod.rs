//! Storage (see [`Database`]): one file per backend, migrations, and the SQL of the
//! audit log, the idempotency keys and run ownership.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::AnyPool;

use crate::audit::Outcome;
use crate::idempotency::{DEFAULT_KEY_RETENTION, MIN_KEY_RETENTION};
use crate::tool::context::Principal;
use crate::tool::handles::{Backend, ReadDb};

#[cfg(feature = "agent")]
pub(crate) mod approvals;
mod archive;
mod archive_record;
pub(crate) mod audit;
mod audit_log;
mod audit_reader;
mod audit_row;
mod batch;
mod chain;
mod chain_head;
mod chain_outside;
mod chain_report;
mod chain_verify;
mod digest;
mod digest_check;
mod digest_read;
mod digest_write;
mod document;
#[cfg(feature = "mcp")]
pub(crate) mod documents;
mod error;
pub(crate) mod keys;
mod migrate;
mod options;
#[cfg(feature = "agent")]
pub(crate) mod outbox;
mod partitions;
#[cfg(all(test, feature = "postgres"))]
mod pg_test;
mod pools;
#[cfg(feature = "postgres")]
mod postgres;
pub(crate) mod rate_buckets;
mod recover;
#[cfg(feature = "agent")]
pub(crate) mod relaxed;
mod replicas;
#[cfg(feature = "mcp")]
pub(crate) mod request_states;
mod retention;
#[cfg(feature = "review")]
pub(crate) mod review;
#[cfg(feature = "review")]
mod review_runs;
#[cfg(feature = "review")]
pub(crate) mod review_sessions;
#[cfg(feature = "agent")]
pub(crate) mod run_log;
mod run_story;
#[cfg(feature = "agent")]
pub(crate) mod run_turn;
mod runs;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "mcp")]
pub(crate) mod tasks;
mod writer;

pub(crate) use audit_row::{ErpAnswer, Final};
use pools::Pools;
pub(crate) use pools::backend_of;
use writer::AuditWriter;
pub(crate) use writer::PendingRow;

pub use archive_record::AuditArchive;
pub use audit_reader::AuditReader;
pub use chain_head::ChainHead;
pub use chain_report::{ChainProblem, ChainReport, OpenCall};
pub use digest::{
    AuditDigest, DIGEST_FORMAT, DigestKey, DigestOptions, DigestPublicKey, DigestSink,
    DirectorySink, SignedDigest, UnlinkedRow,
};
pub use digest_check::{DigestFinding, DigestReport};
pub use error::StoreError;
pub use options::DatabaseOptions;
pub use recover::Recovered;
pub use runs::RunOwner;

/// Most (run, owner) pairs remembered per [`Database`]; the set is emptied when full.
const KNOWN_RUNS_CAP: usize = 100_000;

struct Inner {
    backend: Backend,
    write: AnyPool,
    read: ReadDb,
    audit_writer_pool: AnyPool,
    audit_pool: AnyPool,
    audit_file: Option<PathBuf>,
    audit: AuditWriter,
    /// This `Database`'s lease row in `erp_replicas` (its id stamps its calls' audit rows).
    replica: Arc<str>,
    /// The recovery pass's grace for rows written before leases.
    grace: Duration,
    /// The background task renewing the lease and closing dead replicas' rows.
    heartbeat: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// (run, user, branch) pairs already checked against `erp_agent_runs`. A run's owner
    /// never changes, so remembering a positive answer is safe; a refusal is never cached.
    known_runs: Mutex<HashSet<(String, String, i64)>>,
    /// The run log's own connections.
    #[cfg(feature = "agent")]
    journal: relaxed::Journal,
    /// SQLite: the turn of the framework's writers (drafts, previews, the run log) at the
    /// file's one write lock, taken in order here instead of by retrying a busy lock.
    write_gate: tokio::sync::Semaphore,
    /// The signed digests this replica writes, if on.
    digests: Option<digest::Digests>,
}

/// A connection to the application database: the write pool, the read-only pool, the
/// idempotency keys and the audit log. Cheap to clone.
///
/// One interface over two backends:
///
/// - **SQLite** (`sqlite://path/to/file.db`): the zero set-up default. The file is created
///   if missing and put in WAL mode; every connection gets a busy timeout and foreign keys.
///   Writes go through a single-connection pool (SQLite has one writer at a time), reads
///   through a separate read-only pool (`mode=ro` plus `PRAGMA query_only`), so reads
///   never wait for a write.
/// - **PostgreSQL** (`postgres://user@host/db`): for several server processes sharing one
///   database. The read pool's sessions have `default_transaction_read_only = on`; for a
///   hard guarantee give [`DatabaseOptions::read_url`] a role that only has `SELECT`.
///
/// Opening a database applies the framework's own migrations (shipped in the crate under
/// `migrations/sqlite/` and `migrations/postgres/`), which create:
///
/// - `erp_idempotency_keys`: one row per claimed `agent_run_id:client_ref` key, with the
///   request hash, the document created and the response returned (see
///   [`Database::purge_idempotency_keys`] for the retention policy);
/// - `erp_audit_log`: one row per tool call and per agent-loop event (see [`AuditEntry`](crate::AuditEntry)),
///   written by one group-commit audit writer per `Database` (below); on SQLite in a
///   file of its own, `<database file>-audit` ([`Database::audit_file`]);
/// - `erp_agent_runs`: which principal (user and branch) each agent run belongs to (see
///   [`Database::claim_agent_run`]).
///
/// **The audit writer.** Every audit row goes through one writer task per `Database`,
/// which commits whatever has queued as one multi-row transaction and wakes each caller
/// whose row it carried. The guarantee: no read result leaves the server, and no draft
/// commits, before that call's `attempt` row is durable; every call ends with exactly one
/// finished row (a row left at `attempt` by a crash is closed at the next start); no row
/// is ever dropped: when the writer falls behind, callers wait. [`Database::close`]
/// commits what is queued before it returns. On SQLite the audit log has a file and a
/// writer connection of its own, so audit rows never wait for a draft's write
/// transaction on the main file.
///
/// Applications add their own tables with [`Database::apply_migrations`]. All SQL goes
/// through `sqlx`'s `Any` driver with `$1, $2, ...` placeholders (SQLite accepts them too).
/// Store decimals and dates as `TEXT` (`"1234.50"`, `"2026-12-01"`) so one schema and one
/// handler body serve both backends.
///
/// ```no_run
/// # async fn demo() -> Result<(), erp_tools_core::StoreError> {
/// use erp_tools_core::Database;
///
/// let db = Database::open("sqlite://distributor.db").await?;
/// db.apply_migrations(&[(
///     "0001_purchase_orders",
///     "CREATE TABLE IF NOT EXISTS purchase_orders (id INTEGER PRIMARY KEY, number TEXT NOT NULL)",
/// )])
/// .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Database {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("backend", &self.inner.backend)
            .finish_non_exhaustive()
    }
}

/// The write pool and the read-only pool of `backend`, if this build includes it.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(unused_variables)
)]
async fn open_pools(backend: Backend, options: &DatabaseOptions) -> Result<Pools, StoreError> {
    match backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => sqlite::open(options).await,
        #[cfg(feature = "postgres")]
        Backend::Postgres => postgres::open(options).await,
        #[allow(unreachable_patterns)]
        other => Err(StoreError::BackendNotEnabled(other)),
    }
}

/// Applies the framework migrations for `backend` (SQLite: moving an old audit table into
/// the audit file on the way).
#[cfg_attr(not(feature = "sqlite"), allow(unused_variables))]
async fn migrate_framework(
    backend: Backend,
    pools: &Pools,
    options: &DatabaseOptions,
) -> Result<(), StoreError> {
    match backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite => sqlite::migrate_main(pools, sqlite::sqlite_path(options.url())?).await,
        _ => migrate::run(&pools.write, backend, migrate::framework(backend)).await,
    }
}

/// Note on a draft's audit row finished at start-up from its key row.
const RECONCILED: &str = "finished at start-up from the idempotency key row: the draft \
     committed, the process stopped before its audit row was finished";

/// SQLite: finishes the `attempt` rows of drafts whose document committed (their key row
/// names the audit row) before the process stopped. Runs before the writer starts.
async fn reconcile_drafts(pools: &Pools) -> Result<u64, StoreError> {
    let open = audit::open_attempts(&pools.audit).await?;
    if open.is_empty() {
        return Ok(0);
    }
    let done = keys::documents_of_calls(&pools.write, &open).await?;
    let mut conn = pools.audit.acquire().await?;
    for (id, document) in &done {
        let fin = Final::new(Outcome::Ok, Some(RECONCILED.into()), Some(document.clone()));
        audit::finish(&mut conn, *id, &fin).await?;
    }
    Ok(done.len() as u64)
}

impl Database {
    /// Default retention of idempotency keys: 7 days.
    pub const DEFAULT_KEY_RETENTION: Duration = DEFAULT_KEY_RETENTION;
    /// Shortest retention [`Database::purge_idempotency_keys`] accepts: 24 hours.
    pub const MIN_KEY_RETENTION: Duration = MIN_KEY_RETENTION;

    /// Opens (and for SQLite creates) the database at `url` with default
    /// [`DatabaseOptions`], and applies the framework migrations.
    ///
    /// - `sqlite://data/erp.db` (relative path), `sqlite:///var/lib/erp.db` (absolute);
    /// - `postgres://root@127.0.0.1:5432/test`, optionally with
    ///   `?options=-c%20search_path%3Dmy_schema`.
    pub async fn open(url: &str) -> Result<Database, StoreError> {
        Self::connect(DatabaseOptions::new(url)).await
    }

    /// Opens the database described by `options` and applies the framework migrations.
    pub async fn connect(options: DatabaseOptions) -> Result<Database, StoreError> {
        sqlx::any::install_default_drivers();
        let url = options.url();
        let backend = backend_of(url).ok_or_else(|| StoreError::UnsupportedUrl(url.to_string()))?;
        let pools = open_pools(backend, &options).await?;
        migrate_framework(backend, &pools, &options).await?;
        if pools.audit_file.is_some() {
            let n = reconcile_drafts(&pools).await?;
            if n > 0 {
                tracing::info!(
                    rows = n,
                    "finished the audit rows of drafts committed before a stop"
                );
            }
        }
        let replica: Arc<str> = replicas::new_id().into();
        let lease = options.lease();
        replicas::register(&pools.write, &replica, lease).await?;
        // Before the writer starts: nothing else of this process writes the audit log yet.
        let grace = options.grace_for(backend);
        let others = recover::Others::at_start_up(backend, grace, options.recovery_grace.is_some());
        recover::recover(&pools.audit, &pools.write, &replica, others).await?;
        if backend == Backend::Postgres {
            partitions::ensure_partitions(&pools.write).await?;
        }
        let chain = chain::Chain::new(replica.clone(), !options.without_audit_chain);
        let audit = AuditWriter::start(pools.audit.clone(), backend, chain);
        // The rows the passes above finished (and any a stopped process left unlinked)
        // join this writer's chain.
        let live = replicas::live(&pools.write, &replica, chrono::Utc::now()).await?;
        audit.link_handle().sweep(live).await?;
        let lease_task = recover::LeaseTask {
            audit_pool: pools.audit.clone(),
            main: pools.write.clone(),
            replica: replica.clone(),
            lease,
            grace,
            backend,
            links: audit.link_handle(),
        };
        let inner = Arc::new(Inner {
            backend,
            write: pools.write,
            read: ReadDb::new(pools.read, backend),
            audit_writer_pool: pools.audit,
            audit_pool: pools.audit_read,
            audit_file: pools.audit_file,
            audit,
            replica,
            grace,
            heartbeat: Mutex::new(None),
            known_runs: Mutex::new(HashSet::new()),
            #[cfg(feature = "agent")]
            journal: relaxed::Journal::new(backend),
            write_gate: tokio::sync::Semaphore::new(1),
            digests: options.digests.clone().map(digest::Digests::new),
        });
        Database::start_digests(&inner);
        let task = tokio::spawn(recover::heartbeat(Arc::downgrade(&inner), lease_task));
        *inner.heartbeat.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(Database { inner })
    }

    /// This `Database`'s replica id: the id of its lease row in `erp_replicas`, written on
    /// the `attempt` audit row (`replica_id`) of every tool call it runs.
    pub fn replica_id(&self) -> &str {
        &self.inner.replica
    }

    /// The lease pass every live `Database` runs in the background every third of its
    /// lease ([`DatabaseOptions::replica_lease`]): closes as `interrupted` the `attempt`
    /// rows of replicas whose lease expired or was released (linked to the document when
    /// a draft had committed), and the rows written before leases older than the grace
    /// ([`DatabaseOptions::recovery_grace`]); a live replica's rows are never touched.
    pub async fn recover_dead_replicas(&self) -> Result<Recovered, StoreError> {
        let (inner, others) = (&self.inner, recover::Others::Unleased(self.inner.grace));
        let pools = (&inner.audit_writer_pool, &inner.write);
        let done = recover::recover(pools.0, pools.1, &inner.replica, others).await?;
        self.link_unlinked().await?;
        Ok(done)
    }

    /// Has the audit writer link the finished rows no writer linked (closed by the
    /// recovery pass, or left by a stopped process), but those of live replicas.
    async fn link_unlinked(&self) -> Result<u64, StoreError> {
        let live =
            replicas::live(&self.inner.write, &self.inner.replica, chrono::Utc::now()).await?;
        self.inner.audit.link_handle().sweep(live).await
    }

    /// The recovery pass, run by [`Database::connect`] at start-up: closes as
    /// `interrupted` the audit rows of tool calls still at `attempt` whose row is older
    /// than `grace` (their server process was stopped while they ran), linking each to
    /// the document when its draft had committed. Returns what it closed.
    pub async fn recover_interrupted(&self, grace: Duration) -> Result<Recovered, StoreError> {
        // Every row handed to the writer so far is committed first, so none of this
        // process's finished calls is mistaken for an interrupted one.
        self.flush_audit().await?;
        let done = recover::recover(
            &self.inner.audit_writer_pool,
            &self.inner.write,
            &self.inner.replica,
            recover::Others::All(grace),
        )
        .await?;
        self.link_unlinked().await?;
        Ok(done)
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The run log's own connections.
    #[cfg(feature = "agent")]
    pub(crate) fn journal(&self) -> &relaxed::Journal {
        &self.inner.journal
    }

    /// The write pool. Tool handlers never get it (draft handlers get a [`DraftTx`]
    /// instead); use it for set-up, seeding and reports.
    ///
    /// On SQLite it holds a single connection by default: do not keep a transaction of
    /// your own open on it while calling tools, or the calls wait for it.
    ///
    /// [`DraftTx`]: crate::DraftTx
    pub fn pool(&self) -> &AnyPool {
        &self.inner.write
    }

    /// A read-only handle, as given to read tools: any statement that writes fails.
    pub fn read_db(&self) -> ReadDb {
        self.inner.read.clone()
    }

    /// SQLite: the file holding the audit log (`<database file>-audit`, next to the
    /// database file; back it up with it). `None` on PostgreSQL, where the audit log is a
    /// table of the database itself.
    pub fn audit_file(&self) -> Option<&Path> {
        self.inner.audit_file.as_deref()
    }

    /// Commits every audit row already handed to the audit writer, stops it, and closes
    /// the pools, waiting for connections in use to be returned. Calls made after this
    /// fail ("the database is closed").
    pub async fn close(&self) {
        self.inner.audit.shutdown().await;
        self.last_digest().await;
        let task = self
            .inner
            .heartbeat
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(task) = task {
            task.abort();
            // Released: no call of this replica is open any more.
            if let Err(e) = replicas::release(&self.inner.write, &self.inner.replica).await {
                tracing::warn!(error = %e, "could not release this replica's lease row");
            }
        }
        #[cfg(feature = "agent")]
        self.inner.journal.close().await;
        self.inner.read.pool().close().await;
        self.inner.write.close().await;
        self.inner.audit_writer_pool.close().await;
    }

    // ---- migrations -------------------------------------------------------------------

    /// Applies the application's own migrations, in slice order, each exactly once.
    ///
    /// Each entry is `(version, sql)`: `version` is any unique text (e.g.
    /// `"0001_purchase_orders"`; the `erp_tools/` prefix is reserved) and `sql` one or more
    /// statements separated by `;`. Applied versions are recorded in
    /// `erp_schema_migrations` with a checksum of their SQL: an applied migration whose
    /// SQL has since changed is an error (add a new migration instead of editing one).
    /// Each migration runs in its own transaction. On PostgreSQL, concurrent starts are
    /// serialised with an advisory lock.
    ///
    /// SQL differs between backends in a few places (`INTEGER PRIMARY KEY` vs `BIGINT
    /// GENERATED BY DEFAULT AS IDENTITY`); branch on [`Database::backend`] to pass the
    /// right set, as the framework does for its own tables.
    pub async fn apply_migrations(&self, migrations: &[(&str, &str)]) -> Result<(), StoreError> {
        migrate::check_application_versions(migrations)?;
        migrate::run(&self.inner.write, self.inner.backend, migrations).await
    }

    /// How many framework migrations are not applied (checked on the read pool, so a
    /// busy writer does not delay it; what `/readyz` checks).
    #[cfg(feature = "mcp-http")]
    pub(crate) async fn framework_migrations_pending(&self) -> Result<usize, StoreError> {
        migrate::pending_framework(self.inner.read.pool(), self.inner.backend).await
    }

    /// The migration versions applied so far, in the order they were applied.
    pub async fn applied_migrations(&self) -> Result<Vec<String>, StoreError> {
        migrate::applied(&self.inner.write).await
    }

    // ---- run ownership ------------------------------------------------------------------

    /// Binds agent run `run_id` to `principal` (its user and branch) if no one used the run
    /// before, and returns the run's owner: `principal` itself, or the person who used the
    /// run first. A run's owner never changes; the pipeline refuses every call in a run
    /// that is not the caller's ([`ToolRuntime::call`](crate::ToolRuntime::call)), so
    /// replays and `client_ref` mismatches only ever happen within one person's run.
    ///
    /// Costs one indexed read the first time a process sees a (run, principal) pair (plus
    /// one insert for a new run); the answer is then remembered in memory.
    pub async fn claim_agent_run(
        &self,
        run_id: &str,
        principal: &Principal,
    ) -> Result<RunOwner, StoreError> {
        self.claim_agent_run_under(run_id, principal, None).await
    }

    /// [`claim_agent_run`](Self::claim_agent_run), writing on a new run the tool surface it
    /// first saw (the registry's fingerprint, `erp_agent_runs.surface`).
    pub(crate) async fn claim_agent_run_under(
        &self,
        run_id: &str,
        principal: &Principal,
        surface: Option<&str>,
    ) -> Result<RunOwner, StoreError> {
        let claim = async |claimant: &RunOwner| {
            let owner = runs::claim(self.pool(), run_id, claimant, surface).await?;
            Ok((owner, false))
        };
        Ok(self.claim_run(run_id, principal, claim).await?.0)
    }

    /// [`claim_agent_run_under`](Self::claim_agent_run_under), and when this call binds
    /// the run, the run log's row of the new run (`start`) in the same transaction: `true`
    /// beside the owner when that row was written.
    #[cfg(feature = "agent")]
    pub(crate) async fn claim_agent_run_starting(
        &self,
        run_id: &str,
        principal: &Principal,
        surface: Option<&str>,
        start: &run_log::NewRun<'_>,
    ) -> Result<(RunOwner, bool), StoreError> {
        let claim = async |claimant: &RunOwner| {
            let backend = self.inner.backend;
            runs::claim_starting(self.pool(), backend, run_id, claimant, surface, start).await
        };
        self.claim_run(run_id, principal, claim).await
    }

    /// The owner of `run_id`: `principal` when this process saw it claim the run before,
    /// else the stored owner, else the result of `claim` (the run is new).
    async fn claim_run(
        &self,
        run_id: &str,
        principal: &Principal,
        claim: impl AsyncFnOnce(&RunOwner) -> Result<(RunOwner, bool), sqlx::Error>,
    ) -> Result<(RunOwner, bool), StoreError> {
        let claimant = RunOwner {
            user_id: principal.user_id().to_string(),
            branch_id: principal.branch_id(),
        };
        let key = (
            run_id.to_string(),
            claimant.user_id.clone(),
            claimant.branch_id,
        );
        if self.known_runs().is_some_and(|k| k.contains(&key)) {
            return Ok((claimant, false));
        }
        let (owner, started) = match runs::owner(self.inner.read.pool(), run_id).await? {
            Some(owner) => (owner, false),
            None => claim(&claimant).await?,
        };
        if owner == claimant
            && let Some(mut known) = self.known_runs()
        {
            if known.len() >= KNOWN_RUNS_CAP {
                known.clear();
            }
            known.insert(key);
        }
        Ok((owner, started))
    }

    /// Whether `other` is this database (a clone of the same handle).
    #[cfg(feature = "agent")]
    pub(crate) fn is(&self, other: &Database) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The principal agent run `run_id` belongs to, if it was used.
    pub async fn agent_run_owner(&self, run_id: &str) -> Result<Option<RunOwner>, StoreError> {
        Ok(runs::owner(self.pool(), run_id).await?)
    }

    fn known_runs(&self) -> Option<std::sync::MutexGuard<'_, HashSet<(String, String, i64)>>> {
        self.inner.known_runs.lock().ok()
    }

    // ---- transactions -------------------------------------------------------------------

    /// SQLite: waits for the framework's writers before this one to end, and holds their
    /// turn until dropped. The write pool's connection and the run log's own
    /// ([`relaxed::Journal`]) both write the file; taking turns here keeps them from
    /// meeting at its write lock, where the one that finds it taken sleeps and retries
    /// (from 1 ms up) instead of going next. `None` on PostgreSQL, whose writers lock rows.
    pub(crate) async fn write_turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match self.inner.backend {
            // The gate is never closed.
            Backend::Sqlite => self.inner.write_gate.acquire().await.ok(),
            Backend::Postgres => None,
        }
    }

    /// Begins a write transaction. On SQLite it is `BEGIN IMMEDIATE`, so the write lock
    /// is taken at once (waiting up to the busy timeout) instead of failing later.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.inner.backend {
            Backend::Sqlite => self.inner.write.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.inner.write.begin().await,
        }
    }
}
