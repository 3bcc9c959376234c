//! The metrics as OpenTelemetry instruments (meter `erp-tools`), exported by the meter
//! provider [`init_otel`](super::init_otel) installs; before that (or without it) the
//! global meter records nothing.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};

struct Instruments {
    duration: Histogram<f64>,
    calls: Counter<u64>,
    replays: Counter<u64>,
    denials: Counter<u64>,
    rate_limited: Counter<u64>,
    batch_size: Histogram<u64>,
    result_tokens: Histogram<u64>,
}

fn meter() -> Meter {
    opentelemetry::global::meter("erp-tools")
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = meter();
        Instruments {
            duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("Duration of MCP requests handled by the server")
                .with_boundaries(super::metrics::DURATION_BUCKETS.to_vec())
                .build(),
            calls: meter
                .u64_counter("erp_tools.calls")
                .with_unit("{call}")
                .with_description("Tool calls by tool and outcome")
                .build(),
            replays: meter
                .u64_counter("erp_tools.replays")
                .with_unit("{call}")
                .with_description("Draft calls answered from their idempotency key")
                .build(),
            denials: meter
                .u64_counter("erp_tools.denials")
                .with_unit("{call}")
                .with_description("Calls refused before they ran")
                .build(),
            rate_limited: meter
                .u64_counter("erp_tools.rate_limited")
                .with_unit("{request}")
                .with_description("tools/call requests refused by the rate limit")
                .build(),
            batch_size: meter
                .u64_histogram("erp_tools.audit.batch_size")
                .with_unit("{row}")
                .with_description("Audit rows and outcome updates committed per batch")
                .with_boundaries(super::metrics::BATCH_BUCKETS.to_vec())
                .build(),
            result_tokens: meter
                .u64_histogram("erp_tools.result.tokens")
                .with_unit("{token}")
                .with_description(
                    "Size of each tool result as the client receives it, in estimated tokens",
                )
                .with_boundaries(super::metrics::TOKEN_BUCKETS.to_vec())
                .build(),
        }
    })
}

pub(super) fn call(
    method: &'static str,
    tool: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    let i = instruments();
    let tool_kv = KeyValue::new("gen_ai.tool.name", tool);
    let outcome_kv = KeyValue::new("erp_tools.outcome", outcome);
    i.duration.record(
        took.as_secs_f64(),
        &[
            KeyValue::new("mcp.method.name", method),
            tool_kv.clone(),
            outcome_kv.clone(),
        ],
    );
    i.calls.add(1, &[tool_kv.clone(), outcome_kv]);
    match outcome {
        "replayed" => i.replays.add(1, &[tool_kv]),
        "denied" => i.denials.add(1, &[tool_kv]),
        _ => {}
    }
}

pub(super) fn rate_limited() {
    instruments().rate_limited.add(1, &[]);
}

pub(super) fn audit_batch(size: usize) {
    instruments()
        .batch_size
        .record(u64::try_from(size).unwrap_or(u64::MAX), &[]);
}

/// The tool surfaces this process serves, for the `erp_tools.surface` gauge.
fn surfaces() -> &'static std::sync::Mutex<std::collections::BTreeSet<String>> {
    static SURFACES: OnceLock<std::sync::Mutex<std::collections::BTreeSet<String>>> =
        OnceLock::new();
    SURFACES.get_or_init(Default::default)
}

pub(super) fn surface(fingerprint: &crate::lock::fingerprint::Fingerprint) {
    if let Ok(mut served) = surfaces().lock() {
        served.insert(fingerprint.to_string());
    }
}

/// An observable gauge: name, unit, description, and how to read it.
type GaugeDef = (&'static str, &'static str, &'static str, fn() -> i64);

/// The gauges, read from the Prometheus ones at each export.
pub(super) fn register_gauges() {
    let meter = meter();
    let gauges: [GaugeDef; 3] = [
        (
            "erp_tools.audit.queue_depth",
            "{job}",
            "Audit writer jobs waiting when the writer last took a batch",
            || super::metrics::get().audit_queue_depth.get(),
        ),
        (
            "erp_tools.idempotency.pending",
            "{transaction}",
            "Draft transactions holding an idempotency claim",
            || super::metrics::get().idempotency_pending.get(),
        ),
        (
            "erp_tools.approvals.waiting",
            "{approval}",
            "Agent actions waiting for a person's approval",
            || super::metrics::get().approvals_waiting.get(),
        ),
    ];
    for (name, unit, description, read) in gauges {
        // The gauge stays registered as long as the meter provider lives.
        let _gauge = meter
            .i64_observable_gauge(name)
            .with_unit(unit)
            .with_description(description)
            .with_callback(move |observer| observer.observe(read(), &[]))
            .build();
    }
    let _surface = meter
        .i64_observable_gauge("erp_tools.surface")
        .with_unit("{surface}")
        .with_description("1 for each tool surface this process serves, by its fingerprint")
        .with_callback(|observer| {
            if let Ok(served) = surfaces().lock() {
                for fingerprint in served.iter() {
                    observer.observe(
                        1,
                        &[KeyValue::new(
                            "erp_tools.surface.fingerprint",
                            fingerprint.clone(),
                        )],
                    );
                }
            }
        })
        .build();
}

pub(super) fn result_tokens(tool: &'static str, tokens: u32) {
    instruments().result_tokens.record(
        u64::from(tokens),
        &[KeyValue::new("gen_ai.tool.name", tool)],
    );
}
