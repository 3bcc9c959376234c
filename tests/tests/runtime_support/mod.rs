//! Shared set-up for the runtime integration tests: a throw-away database per test
//! (a temporary SQLite file, or a fresh PostgreSQL schema when `ERP_TOOLS_PG_URL` is set),
//! a small purchasing application with its own migrations, and its tools.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use erp_tools_core::prelude::*;
use erp_tools_core::{Backend, Database, Principal, ToolCall, ToolRegistry, ToolRuntime};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------------------

/// A database that exists for one test.
pub struct TestDb {
    pub db: Database,
    url: String,
    _dir: Option<tempfile::TempDir>,
    pg_schema: Option<(String, String)>,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}_{}_{}",
        std::process::id(),
        nanos,
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

impl TestDb {
    /// A new SQLite file in a temporary directory.
    pub async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temporary directory");
        let url = format!("sqlite://{}", dir.path().join("erp.db").display());
        let db = Database::open(&url).await.expect("open sqlite");
        TestDb {
            db,
            url,
            _dir: Some(dir),
            pg_schema: None,
        }
    }

    /// A new schema in the PostgreSQL database named by `ERP_TOOLS_PG_URL`, or `None`
    /// (after printing why) when the variable is not set.
    pub async fn postgres() -> Option<TestDb> {
        let Ok(base) = std::env::var("ERP_TOOLS_PG_URL") else {
            println!("skipped: ERP_TOOLS_PG_URL not set");
            return None;
        };
        sqlx::any::install_default_drivers();
        let schema = format!("t_{}", unique_suffix());
        let admin = sqlx::AnyPool::connect(&base)
            .await
            .expect("connect to ERP_TOOLS_PG_URL");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
            .execute(&admin)
            .await
            .expect("create test schema");
        admin.close().await;
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
        let db = Database::open(&url).await.expect("open postgres");
        Some(TestDb {
            db,
            url,
            _dir: None,
            pg_schema: Some((base, schema)),
        })
    }

    /// Opens the same database again with its own pools, as a second server process
    /// would.
    pub async fn open_again(&self) -> Database {
        Database::open(&self.url)
            .await
            .expect("open the database again")
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((base, schema)) = self.pg_schema.take() else {
            return;
        };
        // Runs even when the test panicked, on a runtime of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                if let Ok(admin) = sqlx::AnyPool::connect(&base).await {
                    let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                        "DROP SCHEMA IF EXISTS {schema} CASCADE"
                    )))
                    .execute(&admin)
                    .await;
                    admin.close().await;
                }
            });
        })
        .join();
    }
}

/// Runs `$scenario(&TestDb)` on SQLite and (when configured) on PostgreSQL, as two tests
/// `$name::sqlite` and `$name::postgres`.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, $scenario:path) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                let t = $crate::runtime_support::TestDb::sqlite().await;
                $scenario(&t).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                let Some(t) = $crate::runtime_support::TestDb::postgres().await else {
                    return;
                };
                $scenario(&t).await;
            }
        }
    };
}

// ---------------------------------------------------------------------------------------
// The application: purchase orders with lines, per branch
// ---------------------------------------------------------------------------------------

const SQLITE_APP: &[(&str, &str)] = &[(
    "0001_purchase_orders",
    "CREATE TABLE purchase_orders (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        number TEXT NOT NULL UNIQUE,
        branch_id INTEGER NOT NULL,
        vendor_code TEXT NOT NULL,
        needed_by TEXT NOT NULL,
        note TEXT,
        status TEXT NOT NULL CHECK (status = 'draft'),
        total_qty TEXT NOT NULL,
        drafted_by_agent_run TEXT NOT NULL,
        drafted_on_behalf_of TEXT NOT NULL
    );
    CREATE TABLE po_lines (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        po_id INTEGER NOT NULL REFERENCES purchase_orders (id),
        item_code TEXT NOT NULL,
        qty TEXT NOT NULL,
        uom TEXT NOT NULL
    );",
)];

const POSTGRES_APP: &[(&str, &str)] = &[(
    "0001_purchase_orders",
    "CREATE TABLE purchase_orders (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        number TEXT NOT NULL UNIQUE,
        branch_id BIGINT NOT NULL,
        vendor_code TEXT NOT NULL,
        needed_by TEXT NOT NULL,
        note TEXT,
        status TEXT NOT NULL CHECK (status = 'draft'),
        total_qty TEXT NOT NULL,
        drafted_by_agent_run TEXT NOT NULL,
        drafted_on_behalf_of TEXT NOT NULL
    );
    CREATE TABLE po_lines (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        po_id BIGINT NOT NULL REFERENCES purchase_orders (id),
        item_code TEXT NOT NULL,
        qty TEXT NOT NULL,
        uom TEXT NOT NULL
    );",
)];

/// Applies the application's migrations.
pub async fn migrate(db: &Database) {
    let set = match db.backend() {
        Backend::Sqlite => SQLITE_APP,
        Backend::Postgres => POSTGRES_APP,
    };
    db.apply_migrations(set)
        .await
        .expect("application migrations");
}

/// How many times each agent run's calls reached a handler.
fn handler_calls() -> &'static Mutex<HashMap<String, usize>> {
    static CALLS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    CALLS.get_or_init(Default::default)
}

fn count_handler_call(run: &str) {
    *handler_calls()
        .lock()
        .unwrap()
        .entry(run.to_string())
        .or_default() += 1;
}

/// How many times a handler ran for `run`.
pub fn handler_calls_for(run: &str) -> usize {
    handler_calls()
        .lock()
        .unwrap()
        .get(run)
        .copied()
        .unwrap_or(0)
}

/// A fresh agent run id.
pub fn new_run() -> String {
    format!("run-{}", unique_suffix())
}

#[derive(Deserialize, ToolArgs)]
pub struct PoDraftArgs {
    /// Vendor code, e.g. V-00231
    pub vendor_code: String,
    /// Date the goods are needed by
    pub needed_by: NaiveDate,
    /// Your own id for this order within the run; reuse it when retrying
    pub client_ref: String,
    /// Why the order is needed
    pub note: Option<String>,
    /// 1 = urgent
    pub priority: Option<u8>,
    /// Order lines
    pub lines: Vec<PoLine>,
}

#[derive(Deserialize, ToolArgs)]
pub struct PoLine {
    /// Item code, e.g. BRG-0042
    pub item_code: String,
    /// Quantity in the given unit
    pub qty: Decimal,
    /// Unit of measure
    pub uom: Uom,
}

/// A unit of measure.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, ToolArgs)]
#[allow(clippy::upper_case_acronyms)]
pub enum Uom {
    PCS,
    BOX,
    KG,
}

#[derive(Serialize, JsonSchema)]
pub struct PoDraft {
    /// Business number of the draft.
    pub number: String,
    /// Always `draft`.
    pub status: String,
    /// Sum of the line quantities.
    pub total_qty: Decimal,
    /// Number of lines.
    pub line_count: usize,
}

#[derive(Deserialize, ToolArgs)]
pub struct GetPoArgs {
    /// Purchase order number, e.g. PO-2026-0042
    pub number: String,
}

#[derive(Serialize, JsonSchema)]
pub struct PoView {
    pub number: String,
    pub vendor_code: String,
    pub status: String,
    pub total_qty: String,
    pub drafted_by_agent_run: String,
    pub drafted_on_behalf_of: String,
}

/// Vendor code that makes the handler fail after it inserted the order.
pub const VENDOR_FAIL_AFTER_INSERT: &str = "V-FAIL";
/// Vendor code that makes the handler panic after it inserted the order.
pub const VENDOR_PANIC_AFTER_INSERT: &str = "V-PANIC";
/// Vendor code that makes the handler hang after it inserted the order (until cancelled).
pub const VENDOR_HANG_AFTER_INSERT: &str = "V-HANG";
/// Vendor code the handler rejects as unknown.
pub const VENDOR_UNKNOWN: &str = "V-99999";

/// Create a DRAFT purchase order for the caller's branch.
#[erp_tool(
    module = "purchasing",
    tier = "draft",
    scopes = ["purchasing:draft"],
    limit = "lines[].qty <= 10000"
)]
pub async fn create_po_draft(
    ctx: &ToolContext,
    tx: &mut DraftTx,
    args: PoDraftArgs,
) -> Result<PoDraft, ToolError> {
    count_handler_call(ctx.agent_run_id());
    if args.vendor_code == VENDOR_UNKNOWN {
        return Err(
            ToolError::rejected(format!("Vendor {} does not exist.", args.vendor_code))
                .next_step("Search vendors first and use a code from the results."),
        );
    }
    let total: Decimal = args.lines.iter().map(|l| l.qty).sum();
    let p = tx.provenance();
    let (run, user) = (
        p.drafted_by_agent_run.to_string(),
        p.drafted_on_behalf_of.to_string(),
    );
    let placeholder = format!("pending:{}:{}", run, args.client_ref);
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO purchase_orders (number, branch_id, vendor_code, needed_by, note, status, \
         total_qty, drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7, $8) RETURNING id",
    )
    .bind(placeholder)
    .bind(ctx.branch_id())
    .bind(args.vendor_code.clone())
    .bind(args.needed_by.to_string())
    .bind(args.note.clone())
    .bind(total.normalize().to_string())
    .bind(run)
    .bind(user)
    .fetch_one(tx.conn())
    .await?;
    let number = format!("PO-2026-{id:04}");
    sqlx::query("UPDATE purchase_orders SET number = $1 WHERE id = $2")
        .bind(number.clone())
        .bind(id)
        .execute(tx.conn())
        .await?;
    for line in &args.lines {
        sqlx::query("INSERT INTO po_lines (po_id, item_code, qty, uom) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(line.item_code.clone())
            .bind(line.qty.normalize().to_string())
            .bind(format!("{:?}", line.uom))
            .execute(tx.conn())
            .await?;
    }
    if args.vendor_code == VENDOR_FAIL_AFTER_INSERT {
        return Err(ToolError::rejected(format!(
            "Vendor {} is blocked for new orders.",
            args.vendor_code
        )));
    }
    if args.vendor_code == VENDOR_HANG_AFTER_INSERT {
        tokio::time::sleep(std::time::Duration::from_secs(600)).await;
    }
    if args.vendor_code == VENDOR_PANIC_AFTER_INSERT {
        panic!("simulated crash after inserting {number}");
    }
    tx.record_document(DocumentRef {
        doc_type: "purchase_order".into(),
        id,
        number: number.clone(),
    });
    Ok(PoDraft {
        number,
        status: "draft".into(),
        total_qty: total.normalize(),
        line_count: args.lines.len(),
    })
}

/// Show one purchase order of the caller's branch by its number.
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn get_po(ctx: &ToolContext, db: &ReadDb, args: GetPoArgs) -> Result<PoView, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let row: Option<(String, String, String, String, String, String)> = sqlx::query_as(
        "SELECT number, vendor_code, status, total_qty, drafted_by_agent_run, drafted_on_behalf_of \
         FROM purchase_orders WHERE number = $1 AND branch_id = $2",
    )
    .bind(args.number.clone())
    .bind(ctx.branch_id())
    .fetch_optional(db.pool())
    .await?;
    let Some((number, vendor_code, status, total_qty, run, user)) = row else {
        return Err(ToolError::not_found("Purchase order", &args.number));
    };
    Ok(PoView {
        number,
        vendor_code,
        status,
        total_qty,
        drafted_by_agent_run: run,
        drafted_on_behalf_of: user,
    })
}

#[derive(Serialize, JsonSchema)]
pub struct Written {
    pub rows: u64,
}

/// Try to write through the read-only handle (it must fail).
#[erp_tool(module = "purchasing", tier = "read", scopes = ["purchasing:read"])]
pub async fn write_through_read_handle(
    ctx: &ToolContext,
    db: &ReadDb,
) -> Result<Written, ToolError> {
    count_handler_call(ctx.agent_run_id());
    let done = sqlx::query(
        "INSERT INTO purchase_orders (number, branch_id, vendor_code, needed_by, status, \
         total_qty, drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ('PO-SNEAKY', 1, 'V-1', '2026-12-01', 'draft', '1', 'x', 'y')",
    )
    .execute(db.pool())
    .await?;
    Ok(Written {
        rows: done.rows_affected(),
    })
}

/// Hard limit on the total ordered quantity, as declared on `create_po_draft`.
pub const MAX_TOTAL_QTY: &str = "10000";

// ---------------------------------------------------------------------------------------
// The application under test
// ---------------------------------------------------------------------------------------

pub const DRAFT_TOOL: &str = "purchasing_create_po_draft";
pub const GET_TOOL: &str = "purchasing_get_po";

/// Builds the registry of the test application.
pub fn registry() -> Arc<ToolRegistry> {
    Arc::new(
        ToolRegistry::builder()
            .module(
                "purchasing",
                "Purchase orders. Cannot approve, send or post orders.",
            )
            .tool::<create_po_draft>()
            .tool::<get_po>()
            .tool::<write_through_read_handle>()
            .build()
            .expect("registry"),
    )
}

/// The application on one database.
pub struct App {
    pub runtime: ToolRuntime,
}

impl App {
    /// Migrates `db` and serves the test tools on it.
    pub async fn new(db: &Database) -> App {
        migrate(db).await;
        App {
            runtime: ToolRuntime::new(registry(), db.clone()),
        }
    }

    pub fn db(&self) -> &Database {
        self.runtime.database()
    }

    /// Calls `tool` in `run` as `principal`.
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        run: &str,
        tool: &str,
        arguments: Value,
    ) -> erp_tools_core::CallOutcome {
        self.runtime
            .call(
                principal,
                ToolCall {
                    agent_run_id: run.to_string(),
                    tool_call_id: format!("call-{}", unique_suffix()),
                    name: tool.to_string(),
                    arguments,
                },
            )
            .await
            .expect("no protocol error")
    }

    pub async fn count(&self, table: &'static str) -> i64 {
        count(self.db(), table).await
    }
}

/// Rows in `table`.
pub async fn count(db: &Database, table: &'static str) -> i64 {
    let sql = match table {
        "purchase_orders" => "SELECT COUNT(*) FROM purchase_orders",
        "po_lines" => "SELECT COUNT(*) FROM po_lines",
        "erp_idempotency_keys" => "SELECT COUNT(*) FROM erp_idempotency_keys",
        "erp_audit_log" => "SELECT COUNT(*) FROM erp_audit_log",
        other => panic!("unknown table {other}"),
    };
    sqlx::query_scalar::<_, i64>(sql)
        .fetch_one(db.pool())
        .await
        .expect("count")
}

/// A buyer at branch 1 (`SBY-01`) holding the purchasing scopes.
pub fn buyer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("u-17", 1, "SBY-01")
            .scopes(["purchasing:draft", "purchasing:read"])
            .model("test-model")
            .prompt_version("p-3")
            .build(),
    )
}

/// A buyer at branch 2 (`JKT-02`).
pub fn other_branch_buyer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("u-31", 2, "JKT-02")
            .scopes(["purchasing:draft", "purchasing:read"])
            .build(),
    )
}

/// A viewer: may read, may not draft.
pub fn viewer() -> Arc<Principal> {
    Arc::new(
        Principal::builder("u-44", 1, "SBY-01")
            .scopes(["purchasing:read"])
            .build(),
    )
}

/// Valid arguments of the draft tool.
pub fn po_args(client_ref: &str) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2026-12-01",
        "client_ref": client_ref,
        "note": "restock before the holidays",
        "lines": [
            {"item_code": "BRG-0042", "qty": "24", "uom": "BOX"},
            {"item_code": "BRG-0077", "qty": "10.50", "uom": "KG"}
        ]
    })
}
