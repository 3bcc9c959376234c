//! Action signatures: the identity of one concrete action, not just a tool name.
//!
//! One function, [`action_signature`], names an action everywhere it matters:
//!
//! - repeat detection counts signatures (the same action more than N times stops the run
//!   with `no_progress`);
//! - an [`Approval`](super::Approval) binds to a signature, so changing any argument
//!   needs a new approval;
//! - idempotency hashes the same canonical form: the runtime's request hash is
//!   [`canonical_hash`] of the normalised arguments, which is the sha256 of exactly the
//!   JSON part of the signature.
//!
//! Object keys are sorted at every depth ([`canonical_json`]), so key order never changes
//! identity. The agent loop signs arguments after server-side normalisation
//! ([`crate::validate::validate`]), so `"85000"` and `"85000.00"` are one action too.

use serde_json::Value;

use crate::validate::{canonical_hash, canonical_json};

/// The signature of calling `tool` with `arguments`: the tool name followed by the
/// canonical JSON of the arguments (keys sorted at every depth, no whitespace).
///
/// ```
/// use erp_tools_core::agent::action_signature;
/// use serde_json::json;
///
/// let a = action_signature("finance_create_payment_request_draft",
///     &json!({"amount": "85000", "vendor_code": "V-001", "meta": {"b": 1, "a": 2}}));
/// let b = action_signature("finance_create_payment_request_draft",
///     &json!({"meta": {"a": 2, "b": 1}, "vendor_code": "V-001", "amount": "85000"}));
/// assert_eq!(a, b);
/// assert_eq!(a, r#"finance_create_payment_request_draft{"amount":"85000","meta":{"a":2,"b":1},"vendor_code":"V-001"}"#);
/// ```
pub fn action_signature(tool: &str, arguments: &Value) -> String {
    format!("{tool}{}", canonical_json(arguments))
}

/// A fixed-length form of [`action_signature`]: the tool name, a colon, and the sha256
/// (hex) of the canonical arguments, i.e. the same hash the runtime stores as the
/// idempotency request hash.
///
/// ```
/// use erp_tools_core::agent::action_digest;
/// use erp_tools_core::validate::canonical_hash;
/// use serde_json::json;
///
/// let args = json!({"b": 1, "a": 2});
/// assert_eq!(action_digest("t", &args), format!("t:{}", canonical_hash(&args)));
/// ```
pub fn action_digest(tool: &str, arguments: &Value) -> String {
    format!("{tool}:{}", canonical_hash(arguments))
}
