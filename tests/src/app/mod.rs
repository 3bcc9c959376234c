//! The fixture application: a two-branch distributor ([`SBY`](crate::principals::SBY),
//! [`JKT`](crate::principals::JKT)) with vendors, stock, purchase orders with lines and
//! payment requests. Six tools in three modules:
//!
//! | tool | tier | scope |
//! |---|---|---|
//! | `purchasing_search_vendors` | read | `purchasing:read` |
//! | `purchasing_get_vendor_summary` | read | `purchasing:read` |
//! | `purchasing_get_po` | read | `purchasing:read` |
//! | `purchasing_create_po_draft` | draft, total `lines[].qty` at most 10 000 | `purchasing:draft` |
//! | `inventory_get_stock` | read | `inventory:read` |
//! | `finance_create_payment_request_draft` | draft, `amount` at most 10 000 000 | `finance:draft` |
//!
//! Every handler reads and writes the caller's branch only and counts its runs
//! ([`handler_calls_for`]); the draft tools and `purchasing_get_po` inject the [`faults`]
//! a test asks for.

use std::sync::Arc;

use erp_tools_core::sqlx;
use erp_tools_core::{
    AuditRecord, CallOutcome, Database, Outcome, Principal, ToolCall, ToolRegistry,
    ToolRegistryBuilder, ToolRuntime,
};
use serde_json::Value;

pub mod arguments;
mod branch;
mod calls;
mod documents;
pub mod faults;
pub mod finance;
pub mod inventory;
pub mod purchasing;
mod schema;
pub mod seed;
mod session;

pub use calls::handler_calls_for;
pub use schema::{MIGRATIONS, migrate};
pub use session::Session;

use crate::ids::unique_suffix;

/// The tools' names.
pub mod tools {
    /// `purchasing_search_vendors`
    pub const SEARCH_VENDORS: &str = "purchasing_search_vendors";
    /// `purchasing_get_vendor_summary`
    pub const GET_VENDOR_SUMMARY: &str = "purchasing_get_vendor_summary";
    /// `purchasing_get_po`
    pub const GET_PO: &str = "purchasing_get_po";
    /// `purchasing_create_po_draft`
    pub const CREATE_PO_DRAFT: &str = "purchasing_create_po_draft";
    /// `inventory_get_stock`
    pub const GET_STOCK: &str = "inventory_get_stock";
    /// `finance_create_payment_request_draft`
    pub const CREATE_PAYMENT_REQUEST_DRAFT: &str = "finance_create_payment_request_draft";

    /// What a [`BUYER`](crate::principals::BUYER) may use (every tool but the payment
    /// request), in the order tool lists serve them: by name.
    pub const FOR_BUYER: [&str; 5] = [
        GET_STOCK,
        CREATE_PO_DRAFT,
        GET_PO,
        GET_VENDOR_SUMMARY,
        SEARCH_VENDORS,
    ];
}

/// A registry builder with the fixture's three namespaces (`purchasing`, `inventory`,
/// `finance`) and no tools yet: for tools declared elsewhere in these modules.
pub fn namespaces() -> ToolRegistryBuilder {
    ToolRegistry::builder()
        .module("purchasing", purchasing::DESCRIPTION)
        .module("inventory", inventory::DESCRIPTION)
        .module("finance", finance::DESCRIPTION)
}

/// The registry of the six tools.
pub fn registry() -> Arc<ToolRegistry> {
    Arc::new(
        namespaces()
            .tool::<purchasing::search_vendors>()
            .tool::<purchasing::get_vendor_summary>()
            .tool::<purchasing::get_po>()
            .tool::<purchasing::create_po_draft>()
            .tool::<inventory::get_stock>()
            .tool::<finance::create_payment_request_draft>()
            .build()
            .expect("the fixture registry is valid"),
    )
}

/// A table whose rows tests count.
#[derive(Clone, Copy, Debug)]
pub enum Table {
    /// The application's purchase orders.
    PurchaseOrders,
    /// Their lines.
    PoLines,
    /// The application's payment requests.
    PaymentRequests,
    /// The framework's idempotency keys.
    IdempotencyKeys,
    /// The framework's audit log.
    AuditLog,
}

impl Table {
    fn count_sql(self) -> &'static str {
        match self {
            Table::PurchaseOrders => "SELECT COUNT(*) FROM purchase_orders",
            Table::PoLines => "SELECT COUNT(*) FROM po_lines",
            Table::PaymentRequests => "SELECT COUNT(*) FROM payment_requests",
            Table::IdempotencyKeys => "SELECT COUNT(*) FROM erp_idempotency_keys",
            Table::AuditLog => "SELECT COUNT(*) FROM erp_audit_log",
        }
    }
}

/// Rows in `table` of `db`.
pub async fn count(db: &Database, table: Table) -> i64 {
    sqlx::query_scalar::<_, i64>(table.count_sql())
        .fetch_one(db.pool())
        .await
        .expect("count")
}

/// The outcome of every audit row of `run` (of the whole log for `None`), oldest first.
pub async fn audit_outcomes(db: &Database, run: Option<&str>) -> Vec<String> {
    db.audit_log(run)
        .await
        .expect("read the audit log")
        .into_iter()
        .map(|r| r.outcome)
        .collect()
}

/// The rows of `run`'s audit log (of the whole log for `None`) that the call pipeline
/// wrote, not the agent loop.
pub async fn runtime_rows(db: &Database, run: Option<&str>) -> Vec<AuditRecord> {
    db.audit_log(run)
        .await
        .expect("read the audit log")
        .into_iter()
        .filter(|r| r.source == "runtime")
        .collect()
}

/// `out`, after asserting that the call ended with `expected` (its text says why not).
pub fn expect_outcome(out: CallOutcome, expected: Outcome) -> CallOutcome {
    assert_eq!(out.outcome, expected, "{}", out.text);
    out
}

/// A draft's structured result without the runtime's `replayed` flag: what a replay must
/// return unchanged.
pub fn without_replayed(result: &Value) -> Value {
    let mut result = result.clone();
    result
        .as_object_mut()
        .expect("object result")
        .remove("replayed");
    result
}

/// Calls `tool` through `runtime` as `principal` in `run` (empty: the caller's own
/// scope), with the tool call id `call_id`; panics on a protocol error.
pub async fn call_as(
    runtime: &ToolRuntime,
    principal: &Arc<Principal>,
    run: &str,
    call_id: impl Into<String>,
    tool: &str,
    arguments: Value,
) -> CallOutcome {
    let call = ToolCall {
        agent_run_id: run.to_string(),
        tool_call_id: call_id.into(),
        name: tool.to_string(),
        arguments,
    };
    runtime
        .call(principal, call)
        .await
        .expect("no protocol error")
}

/// The application served on one database.
#[derive(Clone)]
pub struct App {
    /// The call pipeline over [`registry`] and the database.
    pub runtime: ToolRuntime,
}

impl App {
    /// Creates and seeds the application's tables on `db` (once; see [`migrate`]) and
    /// serves the tools on it.
    pub async fn new(db: &Database) -> App {
        migrate(db).await;
        App {
            runtime: ToolRuntime::new(registry(), db.clone()),
        }
    }

    /// Opens the database at `url` and serves the tools on it (the stdio server's start).
    pub async fn open(url: &str) -> App {
        App::new(&Database::open(url).await.expect("open the database")).await
    }

    /// The database.
    pub fn db(&self) -> &Database {
        self.runtime.database()
    }

    /// Calls `tool` in `run` as `principal`, with a fresh tool call id.
    pub async fn call(
        &self,
        principal: &Arc<Principal>,
        run: &str,
        tool: &str,
        arguments: Value,
    ) -> CallOutcome {
        let call_id = format!("call-{}", unique_suffix());
        call_as(&self.runtime, principal, run, call_id, tool, arguments).await
    }

    /// Rows in `table`.
    pub async fn count(&self, table: Table) -> i64 {
        count(self.db(), table).await
    }

    /// Purchase orders as `(number, vendor, total_qty, run)`, oldest first.
    pub async fn purchase_orders(&self) -> Vec<(String, String, String, String)> {
        self.drafts(
            "SELECT number, vendor_code, total_qty, drafted_by_agent_run FROM purchase_orders \
             ORDER BY id",
        )
        .await
    }

    /// Payment requests as `(number, vendor, amount, run)`, oldest first.
    pub async fn payment_requests(&self) -> Vec<(String, String, String, String)> {
        self.drafts(
            "SELECT number, vendor_code, amount, drafted_by_agent_run FROM payment_requests \
             ORDER BY id",
        )
        .await
    }

    async fn drafts(&self, sql: &'static str) -> Vec<(String, String, String, String)> {
        sqlx::query_as(sql)
            .fetch_all(self.db().pool())
            .await
            .expect("read the drafts")
    }

    /// The audit log of one run.
    pub async fn audit(&self, run: &str) -> Vec<AuditRecord> {
        // A call's final row is written by the audit writer after the answer; read what
        // every call answered so far has left.
        self.db()
            .flush_audit()
            .await
            .expect("flush the audit writer");
        self.db()
            .audit_log(Some(run))
            .await
            .expect("read the audit log")
    }

    /// The whole audit log, every run.
    pub async fn whole_audit_log(&self) -> Vec<AuditRecord> {
        self.db()
            .flush_audit()
            .await
            .expect("flush the audit writer");
        self.db().audit_log(None).await.expect("read the audit log")
    }

    /// The outcome of every audit row of one run, oldest first.
    pub async fn outcomes(&self, run: &str) -> Vec<String> {
        audit_outcomes(self.db(), Some(run)).await
    }

    /// The audit log of one run as `source:outcome:tool` lines.
    pub async fn audit_lines(&self, run: &str) -> Vec<String> {
        self.audit(run)
            .await
            .iter()
            .map(|r| {
                format!(
                    "{}:{}:{}",
                    r.source,
                    r.outcome,
                    r.tool_name.as_deref().unwrap_or("-")
                )
            })
            .collect()
    }
}
