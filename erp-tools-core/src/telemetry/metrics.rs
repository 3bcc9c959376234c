//! The server's metrics, rendered as Prometheus text ([`render`]; the HTTP router serves
//! it on `/metrics`) and, with the `otel` feature, exported over OTLP.
//!
//! | Prometheus series | OTLP name | kind | what it counts |
//! | --- | --- | --- | --- |
//! | `mcp_server_operation_duration_seconds` | `mcp.server.operation.duration` (s) | histogram by `mcp_method_name`, `gen_ai_tool_name`, `erp_tools_outcome` | how long calls take, from admission to the answer |
//! | `erp_tools_calls_total` | `erp_tools.calls` | counter by `gen_ai_tool_name`, `erp_tools_outcome` | calls by tool and outcome (`ok`, `replayed`, `denied`, `invalid`, `failed`, `needs_input`) |
//! | `erp_tools_replays_total` | `erp_tools.replays` | counter by `gen_ai_tool_name` | drafts answered from their idempotency key (a retry) |
//! | `erp_tools_denials_total` | `erp_tools.denials` | counter by `gen_ai_tool_name` | calls refused before they ran (scope, run, policy, unknown tool) |
//! | `erp_tools_rate_limited_total` | `erp_tools.rate_limited` | counter | `tools/call` requests answered `429` by the per-caller rate limit |
//! | `erp_tools_audit_queue_depth` | `erp_tools.audit.queue_depth` | gauge | audit writer jobs waiting when it last took a batch |
//! | `erp_tools_audit_batch_size` | `erp_tools.audit.batch_size` | histogram | rows and outcome updates committed per audit batch |
//! | `erp_tools_result_tokens` | `erp_tools.result.tokens` | histogram by `gen_ai_tool_name` | the size of each tool result as the client receives it, in estimated tokens ([`ResultBudget`](crate::ResultBudget)) |
//! | `erp_tools_idempotency_pending` | `erp_tools.idempotency.pending` | gauge | draft transactions holding an idempotency claim right now |
//! | `erp_tools_approvals_waiting` | `erp_tools.approvals.waiting` | gauge | agent actions waiting for a person's approval (read at each scrape) |
//! | `erp_tools_surface_info` | `erp_tools.surface` | gauge by `fingerprint` (OTLP `erp_tools.surface.fingerprint`) | `1` for each tool surface this process serves: the [`ToolRegistry::fingerprint`](crate::ToolRegistry::fingerprint) of every runtime's registry |
//!
//! Tool labels are registered tool names only (an unknown tool is `_unknown`), so a
//! client cannot grow the series; no label carries a user, a run or an argument.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// The content type of [`render`]'s text: OpenMetrics 1.0, which Prometheus scrapes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Labels<const N: usize> = [(&'static str, &'static str); N];

/// Call-duration buckets (seconds): the OpenTelemetry MCP conventions' boundaries, below
/// them the sub-millisecond steps of an in-process read.
pub(crate) const DURATION_BUCKETS: [f64; 18] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
    10.0, 30.0, 60.0,
];

/// Result-size buckets (estimated tokens), around the default budget of 20 000 and
/// Claude Code's default limit of 25 000.
pub(crate) const TOKEN_BUCKETS: [f64; 11] = [
    100.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 15000.0, 20000.0, 25000.0, 50000.0, 100000.0,
];

fn token_histogram() -> Histogram {
    Histogram::new(TOKEN_BUCKETS)
}

/// Audit batch-size buckets (rows and updates per commit).
pub(crate) const BATCH_BUCKETS: [f64; 9] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

pub(crate) struct Metrics {
    registry: Registry,
    pub duration: Family<Labels<3>, Histogram, fn() -> Histogram>,
    pub calls: Family<Labels<2>, Counter>,
    pub replays: Family<Labels<1>, Counter>,
    pub denials: Family<Labels<1>, Counter>,
    pub rate_limited: Counter,
    pub audit_queue_depth: Gauge,
    pub audit_batch_size: Histogram,
    pub result_tokens: Family<Labels<1>, Histogram, fn() -> Histogram>,
    pub idempotency_pending: Gauge,
    pub approvals_waiting: Gauge,
    pub surface: Family<Vec<(&'static str, String)>, Gauge>,
}

/// The process's metrics, registered on first use.
pub(crate) fn get() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::default();
        let m = Metrics {
            registry: Registry::default(),
            duration: Family::new_with_constructor(duration_histogram),
            calls: Family::default(),
            replays: Family::default(),
            denials: Family::default(),
            rate_limited: Counter::default(),
            audit_queue_depth: Gauge::default(),
            audit_batch_size: Histogram::new(BATCH_BUCKETS),
            result_tokens: Family::new_with_constructor(token_histogram),
            idempotency_pending: Gauge::default(),
            approvals_waiting: Gauge::default(),
            surface: Family::default(),
        };
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "Duration of MCP requests handled by the server (mcp.server.operation.duration)",
            Unit::Seconds,
            m.duration.clone(),
        );
        registry.register(
            "erp_tools_calls",
            "Tool calls by tool and outcome (ok, replayed, denied, invalid, failed, needs_input)",
            m.calls.clone(),
        );
        registry.register(
            "erp_tools_replays",
            "Draft calls answered from their idempotency key (a retry of an earlier call)",
            m.replays.clone(),
        );
        registry.register(
            "erp_tools_denials",
            "Calls refused before they ran (scope, run, policy, unknown tool)",
            m.denials.clone(),
        );
        registry.register(
            "erp_tools_rate_limited",
            "tools/call requests refused with 429 by the per-caller rate limit",
            m.rate_limited.clone(),
        );
        registry.register(
            "erp_tools_audit_queue_depth",
            "Audit writer jobs waiting when the writer last took a batch",
            m.audit_queue_depth.clone(),
        );
        registry.register(
            "erp_tools_audit_batch_size",
            "Audit rows and outcome updates committed per batch",
            m.audit_batch_size.clone(),
        );
        registry.register(
            "erp_tools_result_tokens",
            "Size of each tool result as the client receives it, in estimated tokens",
            m.result_tokens.clone(),
        );
        registry.register(
            "erp_tools_idempotency_pending",
            "Draft transactions holding an idempotency claim",
            m.idempotency_pending.clone(),
        );
        registry.register(
            "erp_tools_approvals_waiting",
            "Agent actions waiting for a person's approval",
            m.approvals_waiting.clone(),
        );
        registry.register(
            "erp_tools_surface_info",
            "1 for each tool surface this process serves, by its fingerprint (the SHA-256 of its lock)",
            m.surface.clone(),
        );
        Metrics { registry, ..m }
    })
}

impl Metrics {
    pub(crate) fn call(
        &self,
        method: &'static str,
        tool: &'static str,
        outcome: &'static str,
        took: Duration,
    ) {
        self.duration
            .get_or_create(&[
                ("mcp_method_name", method),
                ("gen_ai_tool_name", tool),
                ("erp_tools_outcome", outcome),
            ])
            .observe(took.as_secs_f64());
        self.calls
            .get_or_create(&[("gen_ai_tool_name", tool), ("erp_tools_outcome", outcome)])
            .inc();
        match outcome {
            "replayed" => {
                self.replays
                    .get_or_create(&[("gen_ai_tool_name", tool)])
                    .inc();
            }
            "denied" => {
                self.denials
                    .get_or_create(&[("gen_ai_tool_name", tool)])
                    .inc();
            }
            _ => {}
        }
    }
}

/// Sets the number of agent actions waiting for approval (read from the database by the
/// `/metrics` route before it renders).
pub fn set_approvals_waiting(waiting: i64) {
    get().approvals_waiting.set(waiting);
}

/// The metrics as OpenMetrics text ([`CONTENT_TYPE`]), ending with `# EOF`.
pub fn render() -> String {
    let mut text = String::new();
    // Writing into a `String` cannot fail.
    let _ = encode(&mut text, &get().registry);
    text
}
