//! The baseline: the same read tools on a plain `rmcp` server (`#[tool_router]` +
//! `#[tool]`), with no scopes, no strict validation, no audit.

use erp_tools_core::ReadDb;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ErrorData, Json, tool, tool_handler, tool_router};

use crate::tools::{ItemArgs, ItemView, item_body, memory_body};

/// A plain `rmcp` server exposing `catalog_get_item` and `catalog_describe_item` with the
/// same bodies as the erp-tools tools. The router is built once, at construction.
#[derive(Clone)]
pub struct PlainServer {
    read: ReadDb,
    branch_id: i64,
    tool_router: ToolRouter<Self>,
}

impl PlainServer {
    /// Serves the tools for branch `branch_id` on `read`.
    pub fn new(read: ReadDb, branch_id: i64) -> Self {
        PlainServer {
            read,
            branch_id,
            tool_router: Self::tool_router(),
        }
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
        item_body(self.read.pool(), self.branch_id, &args.item_code)
            .await
            .map(Json)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// Describe one item by code from the built-in catalog, with its stock on hand.
    #[tool(name = "catalog_describe_item")]
    async fn describe_item(
        &self,
        Parameters(args): Parameters<ItemArgs>,
    ) -> Result<Json<ItemView>, ErrorData> {
        memory_body(&args.item_code)
            .await
            .map(Json)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

#[tool_handler(router = self.tool_router)]
impl rmcp::ServerHandler for PlainServer {}
