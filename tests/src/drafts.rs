//! Purchase order drafts sent to a running distributor example over streamable HTTP, as
//! an MCP client of the 2026-07-28 protocol sends them (no session): the crash and replica
//! harnesses' client.

use std::time::Duration;

use erp_tools_core::sqlx;
use serde_json::{Value, json};

/// The draft tool of the distributor example.
pub const DRAFT_TOOL: &str = "purchasing_create_po_draft";

/// What a draft call answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drafted {
    /// The order's number.
    pub number: String,
    /// Whether the answer replays an earlier call of the same `client_ref`.
    pub replayed: bool,
}

/// Why a draft call got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallFailure {
    /// No HTTP answer (connection refused or reset, the server died): the outcome is not
    /// known, so a retry with the same `client_ref` is the fix.
    Transport(String),
    /// A load balancer's answer that the server behind it gave none (HTTP 502, 503 or
    /// 504): the outcome is not known either; a retry with the same `client_ref` is the
    /// fix.
    Gateway(u16),
    /// Over the caller's rate limit (HTTP 429): wait this long and send it again.
    RateLimited(Duration),
    /// An answer that is not a drafted order (a tool error, another HTTP status).
    Refused(String),
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::Transport(e) => write!(f, "transport: {e}"),
            CallFailure::Gateway(s) => write!(f, "gateway: HTTP {s} from the proxy"),
            CallFailure::RateLimited(w) => write!(f, "rate limited for {w:?}"),
            CallFailure::Refused(e) => write!(f, "refused: {e}"),
        }
    }
}

/// The draft's arguments: one vendor, two lines, the first of `qty` boxes, and the note
/// `harness` ([`check_invariants`] expects two lines on such orders).
pub fn draft_args(client_ref: &str, qty: u64) -> Value {
    json!({
        "vendor_code": "V-00231",
        "needed_by": "2030-01-15",
        "client_ref": client_ref,
        "note": "harness",
        "lines": [
            {"item_code": "BRG-0042", "qty": qty.to_string(), "uom": "BOX"},
            {"item_code": "BRG-0042", "qty": "1", "uom": "PCS"},
        ],
    })
}

/// A quantity derived from the `client_ref`, so a retry sends the same arguments.
pub fn qty_of(client_ref: &str) -> u64 {
    1 + client_ref.bytes().map(u64::from).sum::<u64>() % 50
}

/// The `result` of a stateless `tools/call`, from a JSON or an SSE answer.
pub fn rpc_result(body: &str) -> Option<Value> {
    let json = body
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .unwrap_or(body.trim());
    let v: Value = serde_json::from_str(json).ok()?;
    v.get("result").cloned()
}

/// A stateless `tools/call` of `tool` with `arguments` (JSON-RPC id `request_id`) over
/// streamable HTTP, ready to send.
pub fn tools_call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    arguments: &Value,
    request_id: &str,
) -> reqwest::RequestBuilder {
    let body = json!({
        "jsonrpc": "2.0", "id": request_id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    http.post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .bearer_auth(token)
        .json(&body)
}

/// Sends one draft call of `client_ref` (JSON-RPC id `request_id`, which the audit row
/// keeps as its `tool_call_id`) and reads its answer. Never retries.
pub async fn send_draft(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    client_ref: &str,
    request_id: &str,
) -> Result<Drafted, CallFailure> {
    let args = draft_args(client_ref, qty_of(client_ref));
    let response = tools_call(http, url, token, DRAFT_TOOL, &args, request_id)
        .send()
        .await
        .map_err(|e| CallFailure::Transport(e.to_string()))?;
    let status = response.status();
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let wait = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        return Err(CallFailure::RateLimited(Duration::from_secs(wait.max(1))));
    }
    if matches!(status.as_u16(), 502..=504) {
        return Err(CallFailure::Gateway(status.as_u16()));
    }
    let text = response
        .text()
        .await
        .map_err(|e| CallFailure::Transport(e.to_string()))?;
    if !status.is_success() {
        return Err(CallFailure::Refused(format!("HTTP {status}: {text:.300}")));
    }
    let result = rpc_result(&text)
        .ok_or_else(|| CallFailure::Refused(format!("no result in {text:.300}")))?;
    if result["isError"] == json!(true) {
        return Err(CallFailure::Refused(format!("tool error: {result}")));
    }
    let s = &result["structuredContent"];
    Ok(Drafted {
        number: s["number"].as_str().unwrap_or_default().to_string(),
        replayed: s["replayed"].as_bool().unwrap_or(false),
    })
}

/// The one `BIGINT` `sql` answers (a `COUNT(*)`), or a panic naming the query.
pub async fn scalar(pool: &sqlx::AnyPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every invariant of the example's drafted orders, their key rows and the audit log:
/// no order without its lines, no key row without its order, never two orders for one
/// key, as many key rows as drafted orders. The first broken one is the error.
pub async fn check_invariants(pool: &sqlx::AnyPool) -> Result<(), String> {
    let checks = [
        (
            "an order without its lines",
            "SELECT COUNT(*) FROM purchase_orders po WHERE po.drafted_by_agent_run IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM purchase_order_lines l WHERE l.po_id = po.id)",
        ),
        (
            "an order of the harness with a partial set of lines",
            "SELECT COUNT(*) FROM purchase_orders po WHERE po.drafted_by_agent_run IS NOT NULL \
             AND po.note = 'harness' \
             AND (SELECT COUNT(*) FROM purchase_order_lines l WHERE l.po_id = po.id) <> 2",
        ),
        (
            "lines without their order",
            "SELECT COUNT(*) FROM purchase_order_lines l \
             WHERE NOT EXISTS (SELECT 1 FROM purchase_orders po WHERE po.id = l.po_id)",
        ),
        (
            "a drafted order without its key row",
            "SELECT COUNT(*) FROM purchase_orders po WHERE po.drafted_by_agent_run IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM erp_idempotency_keys k \
                 WHERE k.document_id = po.id AND k.document_number = po.number)",
        ),
        (
            "a drafted order without its provenance",
            "SELECT COUNT(*) FROM purchase_orders po WHERE po.id IN \
             (SELECT document_id FROM erp_idempotency_keys) \
             AND (po.drafted_by_agent_run IS NULL OR po.drafted_on_behalf_of IS NULL)",
        ),
        (
            "a key row without its order",
            "SELECT COUNT(*) FROM erp_idempotency_keys k WHERE k.document_id IS NULL \
             OR NOT EXISTS (SELECT 1 FROM purchase_orders po WHERE po.id = k.document_id)",
        ),
        (
            "two orders for one key",
            "SELECT COUNT(*) FROM (SELECT document_id FROM erp_idempotency_keys \
             GROUP BY document_id HAVING COUNT(*) > 1) d",
        ),
        (
            "an interrupted audit row linked to no order",
            "SELECT COUNT(*) FROM erp_audit_log a WHERE a.outcome = 'interrupted' \
             AND a.document_id IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM purchase_orders po WHERE po.id = a.document_id)",
        ),
    ];
    for (what, sql) in checks {
        let n = scalar(pool, sql).await;
        if n != 0 {
            return Err(format!("{what}: {n}"));
        }
    }
    let orders = scalar(
        pool,
        "SELECT COUNT(*) FROM purchase_orders WHERE drafted_by_agent_run IS NOT NULL",
    )
    .await;
    let keys = scalar(pool, "SELECT COUNT(*) FROM erp_idempotency_keys").await;
    if orders != keys {
        return Err(format!("{orders} drafted orders but {keys} key rows"));
    }
    Ok(())
}
