//! The baseline: the same read tools on a plain `rmcp` server (`#[tool_router]` +
//! `#[tool]`), with no scopes, no strict validation, no audit.

use erp_tools_core::{AuditEntry, Database, Principal, ReadDb};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ErrorData, Json, tool, tool_handler, tool_router};

use crate::fixtures::{audit_insert, now_text};
use crate::tools::{ItemArgs, ItemView, item_body, memory_body};

/// How [`PlainServer`] writes its audit row.
#[derive(Clone, Copy, Debug)]
enum AuditBy {
    /// One insert of the finished row, committed on its own on the write pool.
    HandInsert,
    /// The finished row handed to erp-tools' group-commit audit writer
    /// ([`Database::record_event`]), answered once it is durable.
    GroupCommit,
}

/// A plain `rmcp` server exposing `catalog_get_item` and `catalog_describe_item` with the
/// same bodies as the erp-tools tools. The router is built once, at construction.
#[derive(Clone)]
pub struct PlainServer {
    read: ReadDb,
    branch_id: i64,
    /// With an audit row per call: the database, the caller the row names, and how.
    audit: Option<(Database, Principal, AuditBy)>,
    tool_router: ToolRouter<Self>,
}

impl PlainServer {
    /// Serves the tools for branch `branch_id` on `read`.
    pub fn new(read: ReadDb, branch_id: i64) -> Self {
        PlainServer {
            read,
            branch_id,
            audit: None,
            tool_router: Self::tool_router(),
        }
    }

    /// The same tools, each call followed by one hand-written audit insert (the finished
    /// row, committed on its own on `db`'s write pool, into `bench_audit_log`) before it
    /// answers: the honest floor of "no result before its audit row is durable".
    pub fn with_hand_audit(read: ReadDb, db: Database, who: Principal) -> Self {
        let branch_id = who.branch_id();
        PlainServer {
            audit: Some((db, who, AuditBy::HandInsert)),
            ..Self::new(read, branch_id)
        }
    }

    /// The same tools, each call's finished row handed to erp-tools' group-commit audit
    /// writer and answered once durable: bare `rmcp` plus the framework's audit writer,
    /// without the rest of the framework (scopes, strict validation, the attempt row
    /// before the handler).
    pub fn with_group_commit_audit(read: ReadDb, db: Database, who: Principal) -> Self {
        let branch_id = who.branch_id();
        PlainServer {
            audit: Some((db, who, AuditBy::GroupCommit)),
            ..Self::new(read, branch_id)
        }
    }

    async fn audited(&self, tool: &str, item_code: &str) -> Result<(), ErrorData> {
        let Some((db, who, by)) = &self.audit else {
            return Ok(());
        };
        let entry = AuditEntry::new(who, "bench-run", "ok")
            .tool(tool, "call-1")
            .arguments(&serde_json::json!({ "item_code": item_code }));
        let written = match by {
            AuditBy::HandInsert => audit_insert(db.pool(), &entry, &now_text(), None, None)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            AuditBy::GroupCommit => db
                .record_event(entry)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
        };
        written.map_err(|e| ErrorData::internal_error(e, None))
    }
}

#[tool_router(router = tool_router)]
impl PlainServer {
    /// Get one item of the caller's branch by code, with its stock on hand.
    #[tool(name = "catalog_get_item")]
    async fn get_item(
        &self,
        Parameters(args): Parameters<ItemArgs>,
    ) -> Result<Json<ItemView>, ErrorData> {
        let item = item_body(self.read.pool(), self.branch_id, &args.item_code)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        self.audited("catalog_get_item", &args.item_code).await?;
        Ok(Json(item))
    }

    /// Describe one item by code from the built-in catalog, with its stock on hand.
    #[tool(name = "catalog_describe_item")]
    async fn describe_item(
        &self,
        Parameters(args): Parameters<ItemArgs>,
    ) -> Result<Json<ItemView>, ErrorData> {
        let item = memory_body(&args.item_code)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        self.audited("catalog_describe_item", &args.item_code)
            .await?;
        Ok(Json(item))
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for PlainServer {}
