//! The benchmark application's tables on the fixture crate's throw-away databases (a
//! temporary SQLite file, or a PostgreSQL schema of its own when `ERP_TOOLS_PG_URL` is
//! set; see `erp_tools_tests::db`), and the hand-written "floor" transactions the draft
//! pipeline is compared with.
//!
//! The hand-written statements write their audit rows to `bench_audit_log`, a table of the
//! same shape (columns and indexes) as the framework's `erp_audit_log`, in the main
//! database: on SQLite the framework keeps its audit log in a file of its own, written
//! only by its audit writer, and a team writing the audit insert by hand would put it next
//! to its documents, in the same transaction.

use erp_tools_core::sqlx;
use erp_tools_core::sqlx::any::AnyArguments;
use erp_tools_core::sqlx::query::Query;
use erp_tools_core::{AuditEntry, Backend, Database, Principal};
use erp_tools_tests::db::{TestDb, ddl};
use serde_json::Value;

use crate::audit_columns::AuditColumns;
use crate::tools::{OrderDraftArgs, insert_order};

/// A process-unique suffix for run ids.
pub use erp_tools_tests::ids::unique_suffix;

/// `source` of the audit rows the call pipeline writes.
pub const SOURCE_RUNTIME: &str = "runtime";
/// Outcome of an audit row written before the handler runs.
pub const ATTEMPT: &str = "attempt";

/// The current time as the framework writes it in audit and key rows
/// (`2026-01-31T12:00:00.000000Z`).
pub fn now_text() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// The benchmark tables, as an `erp_tools_tests::db::ddl` template.
const TABLES: &str = "CREATE TABLE bench_items (
        code TEXT NOT NULL, branch_id {int} NOT NULL, name TEXT NOT NULL,
        base_uom TEXT NOT NULL, on_hand TEXT NOT NULL, PRIMARY KEY (branch_id, code));
    CREATE TABLE bench_orders (
        id {id}, number TEXT NOT NULL, branch_id {int} NOT NULL,
        vendor_code TEXT NOT NULL, note TEXT, status TEXT NOT NULL CHECK (status = 'draft'),
        total_qty TEXT NOT NULL, drafted_by_agent_run TEXT NOT NULL,
        drafted_on_behalf_of TEXT NOT NULL);
    CREATE TABLE bench_order_lines (
        id {id}, order_id {int} NOT NULL REFERENCES bench_orders (id),
        line_no {int} NOT NULL, item_code TEXT NOT NULL, qty TEXT NOT NULL, uom TEXT NOT NULL);
    CREATE TABLE bench_audit_log (
        id {id}, at TEXT NOT NULL, finished_at TEXT, source TEXT NOT NULL,
        agent_run_id TEXT NOT NULL, tool_call_id TEXT, tool_name TEXT, user_id TEXT NOT NULL,
        branch_id {int}, branch_code TEXT, arguments TEXT, outcome TEXT NOT NULL, message TEXT,
        document_type TEXT, document_id {int}, document_number TEXT, model TEXT,
        prompt_version TEXT, step {int}, action_signature TEXT);
    CREATE INDEX bench_audit_log_run ON bench_audit_log (agent_run_id, id);
    CREATE INDEX bench_audit_log_at ON bench_audit_log (at);";

const SEED: &str = "INSERT INTO bench_items (code, branch_id, name, base_uom, on_hand) VALUES
    ('BRG-0042', 1, 'Plastic container 500 ml', 'PCS', '180'),
    ('BRG-0107', 1, 'Cooking oil 1 L', 'LTR', '340'),
    ('BRG-0230', 1, 'Granulated sugar', 'KG', '95'),
    ('BRG-0315', 1, 'Carton box 40x30', 'PCS', '1200'),
    ('BRG-0042', 2, 'Plastic container 500 ml', 'PCS', '2400')";

/// A database that exists for one benchmark, with the benchmark tables and seed rows.
pub struct BenchDb {
    /// The database.
    pub db: Database,
    /// Removes the database when dropped.
    _store: TestDb,
}

impl BenchDb {
    /// A new SQLite file in a temporary directory.
    pub async fn sqlite() -> BenchDb {
        Self::prepare(TestDb::sqlite().await).await
    }

    /// A new SQLite file committing with `synchronous = NORMAL`
    /// (`DatabaseOptions::sqlite_synchronous_normal_risks_last_commits`), to measure what
    /// the default `FULL` costs.
    pub async fn sqlite_synchronous_normal() -> BenchDb {
        Self::prepare(
            TestDb::sqlite_with(|options| options.sqlite_synchronous_normal_risks_last_commits())
                .await,
        )
        .await
    }

    /// A new SQLite file opened with the options `configure` makes of the defaults.
    pub async fn sqlite_with(
        configure: impl FnOnce(erp_tools_core::DatabaseOptions) -> erp_tools_core::DatabaseOptions,
    ) -> BenchDb {
        Self::prepare(TestDb::sqlite_with(configure).await).await
    }

    /// A new PostgreSQL schema (see [`BenchDb::postgres`]) opened with the options
    /// `configure` makes of the defaults.
    pub async fn postgres_with(
        configure: impl FnOnce(erp_tools_core::DatabaseOptions) -> erp_tools_core::DatabaseOptions,
    ) -> Option<BenchDb> {
        Some(Self::prepare(TestDb::postgres_with(configure).await?).await)
    }

    /// A new schema in the PostgreSQL database named by `ERP_TOOLS_PG_URL`, with a write
    /// pool of `max_connections` (the framework's default when `None`); `None` (after
    /// printing why) when the variable is not set.
    pub async fn postgres(max_connections: Option<u32>) -> Option<BenchDb> {
        let store = TestDb::postgres_with(|options| match max_connections {
            Some(n) => options.max_connections(n),
            None => options,
        })
        .await?;
        Some(Self::prepare(store).await)
    }

    async fn prepare(store: TestDb) -> BenchDb {
        let tables = ddl(store.backend(), TABLES);
        store
            .db
            .apply_migrations(&[("0001_bench", &tables)])
            .await
            .expect("benchmark migrations");
        sqlx::query(SEED)
            .execute(store.db.pool())
            .await
            .expect("seed items");
        BenchDb {
            db: store.db.clone(),
            _store: store,
        }
    }

    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// `(orders, distinct order numbers, idempotency keys)` currently stored.
    pub async fn counts(&self) -> (i64, i64, i64) {
        let orders: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM bench_orders")
            .fetch_one(self.db.pool())
            .await
            .expect("count orders");
        let distinct: i64 = sqlx::query_scalar("SELECT COUNT(DISTINCT number) FROM bench_orders")
            .fetch_one(self.db.pool())
            .await
            .expect("count distinct numbers");
        let keys = self.db.idempotency_key_count().await.expect("count keys");
        (orders, distinct, keys)
    }
}

/// Begins a write transaction the way the framework does (`BEGIN IMMEDIATE` on SQLite).
async fn begin(db: &Database) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
    match db.backend() {
        Backend::Sqlite => db.pool().begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => db.pool().begin().await,
    }
}

const KEY_INSERT: &str = "INSERT INTO erp_idempotency_keys (agent_run_id, client_ref, \
     request_hash, tool_name, user_id, branch_id, document_type, document_id, document_number, \
     response, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

const AUDIT_INSERT: &str = "INSERT INTO bench_audit_log (at, finished_at, source, agent_run_id, \
     tool_call_id, tool_name, user_id, branch_id, branch_code, arguments, outcome, message, \
     document_type, document_id, document_number, model, prompt_version) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
     RETURNING id";

/// Which hand-written transaction to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorShape {
    /// The floor of the issue: one transaction inserting the document, its lines, the
    /// idempotency key row (complete) and the audit row (final outcome), one commit.
    OneCommit,
    /// The statements the pipeline runs, by hand: the audit `attempt` row inserted and
    /// committed first; then one transaction claiming the key row, inserting the
    /// document and lines, completing the key row and updating the audit row.
    PipelineShape,
    /// [`FloorShape::PipelineShape`] with the `attempt` row committed asynchronously on
    /// PostgreSQL (`SET LOCAL synchronous_commit = off`): its WAL record is flushed by the
    /// draft's own commit right after, and it survives a crash of the application (only a
    /// crash of the database server within ~200 ms could lose it). On SQLite it is the
    /// same as `PipelineShape`. Measures a possible fix of the pipeline's second commit.
    PipelineShapeAsyncAttempt,
    /// [`FloorShape::PipelineShape`] with the two updates at the end (key row completed,
    /// audit row finished) sent as one statement on PostgreSQL (a data-modifying `WITH`),
    /// saving one round trip. On SQLite it is the same as `PipelineShape`. Measures a
    /// possible fix of the pipeline's extra round trips.
    PipelineShapeMergedUpdates,
    /// [`FloorShape::PipelineShapeMergedUpdates`] with the `attempt` row written on its
    /// own connection while the transaction begins and claims the key (PostgreSQL; on
    /// SQLite, with its single writer, the same as `PipelineShape`). The row is still
    /// committed before the handler would run. Measures the two fixes together.
    Overlapped,
}

/// One draft written by hand on `db` (no validation, no scope check, no replay logic):
/// the floor the erp-tools draft pipeline is measured against. `arguments` are the
/// call's JSON arguments. Returns the document id.
pub async fn floor_draft(
    db: &Database,
    shape: FloorShape,
    principal: &Principal,
    agent_run_id: &str,
    tool_call_id: &str,
    arguments: &Value,
) -> Result<i64, sqlx::Error> {
    let args: OrderDraftArgs =
        serde_json::from_value(arguments.clone()).map_err(|e| sqlx::Error::Decode(e.into()))?;
    let request_hash = erp_tools_core::validate::canonical_hash(arguments);
    let tool = "orders_create_order_draft";
    let now = now_text();
    let entry = AuditEntry::new(principal, agent_run_id, ATTEMPT)
        .tool(tool, tool_call_id)
        .arguments(arguments);
    let claim = async |tx: &mut sqlx::Transaction<'static, sqlx::Any>| {
        sqlx::query(
            "INSERT INTO erp_idempotency_keys (agent_run_id, client_ref, request_hash, tool_name, \
             user_id, branch_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (agent_run_id, client_ref) DO NOTHING",
        )
        .bind(agent_run_id.to_string())
        .bind(args.client_ref.clone())
        .bind(request_hash.clone())
        .bind(tool)
        .bind(principal.user_id().to_string())
        .bind(principal.branch_id())
        .bind(now.clone())
        .execute(&mut **tx)
        .await
    };
    let pg = db.backend() == Backend::Postgres;
    let (attempt_id, mut tx) = match shape {
        FloorShape::OneCommit => (None, begin(db).await?),
        FloorShape::PipelineShapeAsyncAttempt if pg => {
            let mut atx = db.pool().begin().await?;
            sqlx::query("SET LOCAL synchronous_commit = off")
                .execute(&mut *atx)
                .await?;
            let id = audit_insert(&mut *atx, &entry, &now, None, None).await?;
            atx.commit().await?;
            let mut tx = begin(db).await?;
            claim(&mut tx).await?;
            (Some(id), tx)
        }
        FloorShape::Overlapped if pg => {
            // The attempt row commits on its own connection while the draft transaction
            // begins and claims the key; both finish before the handler would run.
            let (id, tx) = tokio::join!(audit_insert(db.pool(), &entry, &now, None, None), async {
                let mut tx = begin(db).await?;
                claim(&mut tx).await?;
                Ok::<_, sqlx::Error>(tx)
            });
            (Some(id?), tx?)
        }
        _ => {
            let id = audit_insert(db.pool(), &entry, &now, None, None).await?;
            let mut tx = begin(db).await?;
            claim(&mut tx).await?;
            (Some(id), tx)
        }
    };
    let (id, draft) = insert_order(
        &mut tx,
        principal.branch_id(),
        agent_run_id,
        principal.user_id(),
        &args,
    )
    .await?;
    let response = serde_json::to_string(&draft).map_err(|e| sqlx::Error::Encode(e.into()))?;
    let document = (id, draft.number.as_str());
    let key = (agent_run_id, args.client_ref.as_str());
    match attempt_id {
        None => {
            sqlx::query(KEY_INSERT)
                .bind(agent_run_id.to_string())
                .bind(args.client_ref.clone())
                .bind(request_hash)
                .bind(tool)
                .bind(principal.user_id().to_string())
                .bind(principal.branch_id())
                .bind("purchase_order")
                .bind(id)
                .bind(draft.number.clone())
                .bind(response)
                .bind(now.clone())
                .execute(&mut *tx)
                .await?;
            let entry = AuditEntry::new(principal, agent_run_id, "ok")
                .tool(tool, tool_call_id)
                .arguments(arguments);
            audit_insert(&mut *tx, &entry, &now, Some(id), Some(&draft.number)).await?;
        }
        Some(audit_id)
            if pg
                && matches!(
                    shape,
                    FloorShape::PipelineShapeMergedUpdates | FloorShape::Overlapped
                ) =>
        {
            let query = sqlx::query(
                "WITH k AS (UPDATE erp_idempotency_keys SET document_type = $1, document_id = $2, \
                 document_number = $3, response = $4 WHERE agent_run_id = $5 AND client_ref = $6 \
                 RETURNING 1) \
                 UPDATE bench_audit_log SET outcome = $7, message = $8, document_type = $1, \
                 document_id = $2, document_number = $3, finished_at = $9 WHERE id = $10",
            );
            completed_key(query, document, response, key)
                .bind("ok")
                .bind(None::<String>)
                .bind(now_text())
                .bind(audit_id)
                .execute(&mut *tx)
                .await?;
        }
        Some(audit_id) => {
            let query = sqlx::query(
                "UPDATE erp_idempotency_keys SET document_type = $1, document_id = $2, \
                 document_number = $3, response = $4 WHERE agent_run_id = $5 AND client_ref = $6",
            );
            completed_key(query, document, response, key)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "UPDATE bench_audit_log SET outcome = $1, message = $2, document_type = $3, \
                 document_id = $4, document_number = $5, finished_at = $6 WHERE id = $7",
            )
            .bind("ok")
            .bind(None::<String>)
            .bind("purchase_order")
            .bind(id)
            .bind(draft.number.clone())
            .bind(now_text())
            .bind(audit_id)
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    Ok(id)
}

/// `query` with its first six parameters bound as the statements completing a claimed key
/// row take them: the purchase order `(id, number)`, the `response`, and the key
/// `(agent_run_id, client_ref)`.
fn completed_key<'q>(
    query: Query<'q, sqlx::Any, AnyArguments>,
    (id, number): (i64, &str),
    response: String,
    (agent_run_id, client_ref): (&str, &str),
) -> Query<'q, sqlx::Any, AnyArguments> {
    query
        .bind("purchase_order")
        .bind(id)
        .bind(number.to_string())
        .bind(response)
        .bind(agent_run_id.to_string())
        .bind(client_ref.to_string())
}

/// Inserts one audit row on `executor`: finished (outcome as in `entry`, with the
/// document) when `document_id` is given, otherwise an `attempt`-style open row.
pub async fn audit_insert<'c, E>(
    executor: E,
    entry: &AuditEntry,
    now: &str,
    document_id: Option<i64>,
    document_number: Option<&str>,
) -> Result<i64, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let finished = document_id.is_some();
    sqlx::query_scalar(AUDIT_INSERT)
        .bind(now.to_string())
        .bind(finished.then(|| now.to_string()))
        .bind(SOURCE_RUNTIME)
        .call_columns(entry)
        .bind(None::<String>)
        .bind(document_id.map(|_| "purchase_order"))
        .bind(document_id)
        .bind(document_number.map(str::to_string))
        .model_columns(entry)
        .fetch_one(executor)
        .await
}
