use erp_tools_core::prelude::*;

#[derive(Deserialize, ToolArgs)]
struct AuditArgs {
    on_behalf_of: String,
    #[serde(rename = "agentRunId")]
    run: String,
    tool_call_id: String,
    scopes: Vec<String>,
    tenant_id: i64,
}

fn main() {}
