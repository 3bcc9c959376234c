//! The policy: what the agent may do, decided in code outside the model.
//!
//! A policy holds two kinds of rules: approval requirements, and hard limits of its own
//! on top of the tools'. Everything else a call must pass (tool known, scopes, valid
//! arguments, every hard limit, `client_ref`) is the call pipeline's admission step, the
//! same one MCP calls go through; the policy hands admission its limits and decides only
//! approvals.
//!
//! [`Policy::evaluate`] is synchronous and pure. It reads only the registry (code), the
//! policy's own rules (configuration), the authenticated [`Principal`] and the approvals
//! the application recorded; never the conversation, so no text a model reads or writes
//! can change its answer. The checks run in this order, first match wins:
//!
//! 1. admission: unknown tool, missing scope, invalid arguments, a hard limit exceeded
//!    (the tool's `limit = ".."` and the policy's own [`limit`](Policy::limit)s) → denied,
//!    *even if the action was approved*;
//! 2. an approval rule matches and no approval names this exact action → approval required;
//! 3. otherwise → allowed.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::approval::Approval;
use super::signature::action_signature;
use crate::registry::ToolRegistry;
use crate::runtime::admit::{self, Check, Refused};
use crate::runtime::limits::{LimitCheck, value_at};
use crate::tool::context::Principal;

/// Why the policy refused an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialReason {
    /// No tool of that name is registered.
    UnknownTool,
    /// The principal lacks a scope the tool needs.
    MissingScope,
    /// A hard value limit is exceeded (or the value cannot be read, which counts the same).
    OverLimit,
    /// The arguments do not match the tool's schema (or its `client_ref` is unusable).
    InvalidArguments,
}

impl From<&Refused> for Denial {
    fn from(refused: &Refused) -> Self {
        Denial {
            reason: match refused.check {
                Check::UnknownTool => DenialReason::UnknownTool,
                Check::MissingScope => DenialReason::MissingScope,
                Check::OverLimit => DenialReason::OverLimit,
                Check::InvalidArguments | Check::ClientRef => DenialReason::InvalidArguments,
            },
            message: refused.error.to_string(),
        }
    }
}

/// A refusal, with the text told to the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// Why.
    pub reason: DenialReason,
    /// Model-facing text: what was refused, why, what to do instead, what did not happen.
    pub message: String,
}

/// The policy's answer for one proposed action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it. `approved_by` names the approver when an approval rule matched.
    Allow {
        /// Who approved the action, if it needed approval.
        approved_by: Option<String>,
    },
    /// Do not run it; tell the model why and let the loop continue.
    Deny(Denial),
    /// Do not run it; stop the run until a person approves this exact action.
    RequireApproval {
        /// The signature an approval must name.
        signature: String,
        /// Why approval is needed, for the reviewer.
        reason: String,
    },
}

type Predicate = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

#[derive(Clone)]
struct ApprovalRule {
    tool: String,
    reason: String,
    /// When the rule applies, for the prompt ("lines[].qty is above 100"); `None` for a
    /// rule with its own predicate, whose reason is shown instead.
    condition: Option<String>,
    when: Predicate,
}

#[derive(Clone, Debug)]
struct PolicyLimit {
    tool: String,
    path: String,
    max: String,
}

/// Rules in code: approval requirements and extra hard limits. Build it once, share it.
///
/// ```
/// use erp_tools_core::agent::Policy;
///
/// let policy = Policy::new()
///     // Payment requests above 50 000 wait for a person.
///     .require_approval_above("finance_create_payment_request_draft", "amount", "50000")
///     // This deployment never lets the agent go above one million, approved or not.
///     .limit("finance_create_payment_request_draft", "amount", "1000000")
///     // Every purchase order draft is reviewed first.
///     .require_approval_always("purchasing_create_po_draft");
/// # let _ = policy;
/// ```
#[derive(Clone, Default)]
pub struct Policy {
    approvals: Vec<ApprovalRule>,
    limits: Vec<PolicyLimit>,
}

impl Policy {
    /// A policy with no rules of its own: the registry's scopes and the tools' limits
    /// still apply.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls of `tool` need approval when `when(arguments)` is true. `tool` is a tool
    /// name, or a prefix ending in `*` (`"finance_*"`). `reason` is shown to the reviewer.
    pub fn require_approval(
        mut self,
        tool: impl Into<String>,
        reason: impl Into<String>,
        when: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.approvals.push(ApprovalRule {
            tool: tool.into(),
            reason: reason.into(),
            condition: None,
            when: Arc::new(when),
        });
        self
    }

    /// Sets the prompt's wording of the last approval rule's condition.
    fn condition(mut self, condition: String) -> Self {
        if let Some(rule) = self.approvals.last_mut() {
            rule.condition = Some(condition);
        }
        self
    }

    /// Every call of `tool` (name or `prefix*`) needs approval.
    pub fn require_approval_always(self, tool: impl Into<String>) -> Self {
        let tool = tool.into();
        let reason = format!("every call of {tool} is reviewed by a person");
        self.require_approval(tool, reason, |_| true)
            .condition("every call".into())
    }

    /// Calls of `tool` need approval when the value at `path` (see [`value_at`]) is above
    /// `threshold`. A value that cannot be read needs approval too.
    pub fn require_approval_above(
        self,
        tool: impl Into<String>,
        path: impl Into<String>,
        threshold: &str,
    ) -> Self {
        let path = path.into();
        let threshold_dec = Decimal::from_str(threshold).ok();
        let reason = format!("{path} above {threshold} needs a person's approval");
        let condition = format!("{path} is above {threshold}");
        self.require_approval(tool, reason, move |args| {
            match (value_at(args, &path), threshold_dec) {
                (Ok(None), Some(_)) => false,
                (Ok(Some(v)), Some(t)) => v > t,
                _ => true,
            }
        })
        .condition(condition)
    }

    /// A hard limit of this policy on top of the tool's own: the value at `path` (see
    /// [`value_at`]) may not exceed `max`. No approval lifts it.
    pub fn limit(
        mut self,
        tool: impl Into<String>,
        path: impl Into<String>,
        max: impl Into<String>,
    ) -> Self {
        self.limits.push(PolicyLimit {
            tool: tool.into(),
            path: path.into(),
            max: max.into(),
        });
        self
    }

    /// Decides on calling `tool` with `arguments` for `principal`. `approvals` are the
    /// approvals recorded for the current run (the agent loop passes only those).
    pub fn evaluate(
        &self,
        principal: &Principal,
        registry: &ToolRegistry,
        tool: &str,
        arguments: &Value,
        approvals: &[Approval],
    ) -> Decision {
        let run = principal.agent_run_id().unwrap_or("policy-check");
        match admit::admit(
            registry,
            principal,
            run,
            tool,
            arguments,
            &self.limits_for(tool),
        ) {
            Ok(admitted) => self.approval(tool, &admitted.args, approvals),
            Err(refused) => Decision::Deny(Denial::from(&refused)),
        }
    }

    /// This policy's own hard limits that apply to `tool`, for admission.
    pub(crate) fn limits_for(&self, tool: &str) -> Vec<LimitCheck<'_>> {
        self.limits
            .iter()
            .filter(|l| matches(&l.tool, tool))
            .map(|l| LimitCheck {
                path: &l.path,
                max: &l.max,
            })
            .collect()
    }

    /// The approval step for an admitted call with its normalised `arguments`.
    pub(crate) fn approval(
        &self,
        tool: &str,
        arguments: &Value,
        approvals: &[Approval],
    ) -> Decision {
        let Some(rule) = self
            .approvals
            .iter()
            .find(|r| matches(&r.tool, tool) && (r.when)(arguments))
        else {
            return Decision::Allow { approved_by: None };
        };
        let signature = action_signature(tool, arguments);
        match approvals.iter().find(|a| a.signature == signature) {
            Some(a) => Decision::Allow {
                approved_by: Some(a.approved_by.clone()),
            },
            None => Decision::RequireApproval {
                signature,
                reason: rule.reason.clone(),
            },
        }
    }
}

impl Policy {
    /// The policy as prompt instructions for `principal`: the tools it may not use and
    /// the permission each needs, every hard limit (the tools' own and this policy's) and
    /// every approval rule of the tools it may use. The agent appends this to the system
    /// prompt of every run, so the prompt and the checks in code come from the same
    /// rules: change a limit here and the prompt says the new one. Empty when there is
    /// nothing to say.
    ///
    /// The prompt only makes refusals rarer; the checks still run on every call.
    pub fn prompt(&self, registry: &ToolRegistry, principal: &Principal) -> String {
        let mut lines = Vec::new();
        for tool in registry.tools() {
            let missing = tool.missing_scopes(principal);
            if !missing.is_empty() {
                lines.push(super::text::prompt_unavailable(tool.name(), &missing));
            }
        }
        let usable: Vec<&str> = registry
            .tools()
            .iter()
            .filter(|t| t.allowed_for(principal))
            .map(|t| t.name())
            .collect();
        for tool in registry.tools().iter().filter(|t| t.allowed_for(principal)) {
            for limit in tool.def.limits() {
                lines.push(super::text::prompt_limit(
                    tool.name(),
                    limit.path,
                    limit.max,
                ));
            }
            for limit in self.limits.iter().filter(|l| matches(&l.tool, tool.name())) {
                lines.push(super::text::prompt_limit(
                    tool.name(),
                    &limit.path,
                    &limit.max,
                ));
            }
        }
        for rule in &self.approvals {
            for tool in usable.iter().filter(|t| matches(&rule.tool, t)) {
                let condition = rule.condition.as_deref().unwrap_or(&rule.reason);
                lines.push(super::text::prompt_approval(tool, condition));
            }
        }
        if lines.is_empty() {
            return String::new();
        }
        format!("{}\n{}", super::text::POLICY_HEADER, lines.join("\n"))
    }

    /// Checks that every rule names a registered tool (a `prefix*` pattern must match at
    /// least one), so a misspelt name fails when the agent is built instead of silently
    /// never applying. [`Agent::new`](super::Agent::new) runs this.
    pub fn check(&self, registry: &ToolRegistry) -> Result<(), PolicyError> {
        let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
        let rules = self
            .approvals
            .iter()
            .map(|r| ("approval", r.tool.as_str()))
            .chain(self.limits.iter().map(|l| ("limit", l.tool.as_str())));
        let mut problems = Vec::new();
        for (rule, tool) in rules {
            if names.iter().any(|n| matches(tool, n)) {
                continue;
            }
            let wanted = tool.trim_end_matches('*');
            let suggestion = names
                .iter()
                .map(|n| (erp_tools_internals::names::edit_distance(wanted, n), *n))
                .filter(|(d, _)| *d <= 3)
                .min()
                .map(|(_, n)| n);
            let problem = crate::text::policy_unknown_tool(rule, tool, suggestion);
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(PolicyError { problems })
        }
    }
}

/// A policy whose rules do not fit the registry (see [`Policy::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    problems: Vec<String>,
}

impl PolicyError {
    /// Every problem found, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::problem_list(f, "the agent policy is invalid", &self.problems)
    }
}

impl std::error::Error for PolicyError {}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policy")
            .field(
                "approval_rules",
                &self
                    .approvals
                    .iter()
                    .map(|r| (&r.tool, &r.reason))
                    .collect::<Vec<_>>(),
            )
            .field("limits", &self.limits)
            .finish()
    }
}

fn matches(pattern: &str, tool: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => pattern == tool,
    }
}
