//! The points where the pipeline reports to the metrics: one function an event, each a
//! few atomic operations with `metrics`, OTLP instruments too with `otel`, nothing
//! without either.

use std::time::Duration;

/// A finished call of `tool` (a registered name, or `_unknown`) with `outcome`.
pub(crate) fn call(
    method: &'static str,
    tool: &'static str,
    outcome: &'static str,
    took: Duration,
) {
    #[cfg(feature = "metrics")]
    super::metrics::get().call(method, tool, outcome, took);
    #[cfg(feature = "otel")]
    super::otel_metrics::call(method, tool, outcome, took);
    #[cfg(not(feature = "metrics"))]
    let _ = (method, tool, outcome, took);
}

/// A result of `tool` (a registered name) measured `tokens` estimated tokens.
pub(crate) fn result_tokens(tool: &'static str, tokens: u32) {
    #[cfg(feature = "metrics")]
    super::metrics::get()
        .result_tokens
        .get_or_create(&[("gen_ai_tool_name", tool)])
        .observe(f64::from(tokens));
    #[cfg(feature = "otel")]
    super::otel_metrics::result_tokens(tool, tokens);
    #[cfg(not(feature = "metrics"))]
    let _ = (tool, tokens);
}

/// A runtime serves the tool surface named `fingerprint` (`erp_tools_surface_info`).
pub(crate) fn surface(fingerprint: &crate::lock::fingerprint::Fingerprint) {
    #[cfg(feature = "metrics")]
    super::metrics::get()
        .surface
        .get_or_create(&vec![("fingerprint", fingerprint.to_string())])
        .set(1);
    #[cfg(feature = "otel")]
    super::otel_metrics::surface(fingerprint);
    #[cfg(not(feature = "metrics"))]
    let _ = fingerprint;
}

/// A `tools/call` refused by the per-caller rate limit.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
pub(crate) fn rate_limited() {
    #[cfg(feature = "metrics")]
    super::metrics::get().rate_limited.inc();
    #[cfg(feature = "otel")]
    super::otel_metrics::rate_limited();
}

/// The audit writer took a batch of `size` jobs and left `queued` waiting.
pub(crate) fn audit_batch(size: usize, queued: usize) {
    #[cfg(feature = "metrics")]
    {
        let m = super::metrics::get();
        m.audit_batch_size.observe(size as f64);
        m.audit_queue_depth
            .set(i64::try_from(queued).unwrap_or(i64::MAX));
    }
    #[cfg(feature = "otel")]
    super::otel_metrics::audit_batch(size);
    #[cfg(not(feature = "metrics"))]
    let _ = (size, queued);
}

/// Counts a draft transaction holding an idempotency claim while it lives.
pub(crate) struct PendingKey(());

impl PendingKey {
    pub(crate) fn claimed() -> PendingKey {
        #[cfg(feature = "metrics")]
        super::metrics::get().idempotency_pending.inc();
        PendingKey(())
    }
}

impl Drop for PendingKey {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        super::metrics::get().idempotency_pending.dec();
    }
}
