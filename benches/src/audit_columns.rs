//! The columns of the framework's audit row that every hand-written audit statement of the
//! benchmarks binds from an [`AuditEntry`] the same way, in the order of the framework's
//! `INSERT INTO erp_audit_log` (`erp-tools-core/src/store/audit.rs`).

use erp_tools_core::AuditEntry;
use erp_tools_core::sqlx::any::AnyArguments;
use erp_tools_core::sqlx::query::{Query, QueryScalar};
use erp_tools_core::sqlx::{Any, Encode, Type};

/// A statement taking bind parameters: `sqlx::query` and `sqlx::query_scalar` alike.
pub trait AuditColumns<'q>: Sized {
    /// Binds the next parameter.
    fn param<T: 'q + Encode<'q, Any> + Type<Any>>(self, value: T) -> Self;

    /// Binds `entry`'s `agent_run_id`, `tool_call_id`, `tool_name`, `user_id`,
    /// `branch_id`, `branch_code`, `arguments` and `outcome` (`$4` to `$11`).
    fn call_columns(self, entry: &AuditEntry) -> Self {
        self.param(entry.agent_run_id.clone())
            .param(entry.tool_call_id.clone())
            .param(entry.tool_name.clone())
            .param(entry.user_id.clone())
            .param(entry.branch_id)
            .param(entry.branch_code.clone())
            .param(entry.arguments.clone())
            .param(entry.outcome.clone())
    }

    /// Binds `entry`'s `model` and `prompt_version` (`$16` and `$17`).
    fn model_columns(self, entry: &AuditEntry) -> Self {
        self.param(entry.model.clone())
            .param(entry.prompt_version.clone())
    }
}

impl<'q> AuditColumns<'q> for Query<'q, Any, AnyArguments> {
    fn param<T: 'q + Encode<'q, Any> + Type<Any>>(self, value: T) -> Self {
        self.bind(value)
    }
}

impl<'q, O> AuditColumns<'q> for QueryScalar<'q, Any, O, AnyArguments> {
    fn param<T: 'q + Encode<'q, Any> + Type<Any>>(self, value: T) -> Self {
        self.bind(value)
    }
}
