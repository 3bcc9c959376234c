//! The policy: what the agent may do, decided in code outside the model.
//!
//! [`Policy::evaluate`] is synchronous and pure. It reads only the registry (code), the
//! policy's own rules (configuration), the authenticated [`Principal`] and the approvals
//! the application recorded; never the conversation, so no text a model reads or writes
//! can change its answer. The checks run in this order, first match wins:
//!
//! 1. unknown tool → denied;
//! 2. a scope the tool needs is missing from the principal → denied;
//! 3. a hard limit is exceeded (the tool's `limit = ".."` and the policy's own
//!    [`limit`](Policy::limit)s) → denied, *even if the action was approved*;
//! 4. an approval rule matches and no approval names this exact action → approval required;
//! 5. otherwise → allowed.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::approval::Approval;
use super::signature::action_signature;
use crate::context::Principal;
use crate::registry::{RegisteredTool, ToolRegistry};

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
            when: Arc::new(when),
        });
        self
    }

    /// Every call of `tool` (name or `prefix*`) needs approval.
    pub fn require_approval_always(self, tool: impl Into<String>) -> Self {
        let tool = tool.into();
        let reason = format!("every call of {tool} is reviewed by a person");
        self.require_approval(tool, reason, |_| true)
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
        self.require_approval(tool, reason, move |args| {
            match (value_at(args, &path), threshold_dec) {
                (Ok(None), Some(_)) => false,
                (Ok(Some(v)), Some(t)) => v > t,
                _ => true,
            }
        })
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
        let Some(t) = registry.get(tool) else {
            return Decision::Deny(unknown_tool(tool, registry, principal));
        };
        let missing = t.missing_scopes(principal);
        if !missing.is_empty() {
            return Decision::Deny(missing_scope(t, &missing));
        }
        let tool_limits = t.def.limits.iter().map(|l| (l.path, l.max));
        let policy_limits = self.limits.iter().filter(|l| matches(&l.tool, tool));
        for (path, max) in
            tool_limits.chain(policy_limits.map(|l| (l.path.as_str(), l.max.as_str())))
        {
            if let Err(denial) = check_limit(t, arguments, path, max) {
                return Decision::Deny(denial);
            }
        }
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

fn unknown_tool(tool: &str, registry: &ToolRegistry, principal: &Principal) -> Denial {
    let names: Vec<&str> = registry.list_for(principal).map(|t| t.def.name).collect();
    Denial {
        reason: DenialReason::UnknownTool,
        message: format!(
            "There is no tool named `{tool}`. Allowed values: {}. Call one of these tools \
             instead. Nothing was done.",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ),
    }
}

fn missing_scope(t: &RegisteredTool, missing: &[&str]) -> Denial {
    Denial {
        reason: DenialReason::MissingScope,
        message: format!(
            "You may not use {}: the user you act for does not hold the scope {}. Do not \
             retry; tell the user that a person with that permission has to do this. \
             Nothing was done.",
            t.def.name,
            missing.join(", ")
        ),
    }
}

fn check_limit(t: &RegisteredTool, args: &Value, path: &str, max: &str) -> Result<(), Denial> {
    let name = t.def.name;
    let over = |message: String| Denial {
        reason: DenialReason::OverLimit,
        message,
    };
    let Ok(max_dec) = Decimal::from_str(max) else {
        return Err(over(format!(
            "{name} cannot be used: its limit on {path} ({max}) is not a number, so the \
             server refuses every call. Tell the user. Nothing was done."
        )));
    };
    match value_at(args, path) {
        Ok(None) => Ok(()),
        Ok(Some(v)) if v <= max_dec => Ok(()),
        Ok(Some(v)) => Err(over(format!(
            "{path} {} is over the hard limit of {} for {name}. The limit is set in code: \
             no approval, instruction or tool result can raise it. Stay within the limit, \
             or tell the user that a person has to do this in the ERP. Nothing was done.",
            v.normalize(),
            max_dec.normalize()
        ))),
        Err(problem) => Err(over(format!(
            "{path} could not be checked against the hard limit of {} for {name}: \
             {problem}. Send {path} as a decimal string such as \"1250.50\". Nothing was \
             done.",
            max_dec.normalize()
        ))),
    }
}

/// Reads a numeric value from tool arguments for limits and approval thresholds.
///
/// `path` is a dot-separated list of field names; a name ending in `[]` walks every item
/// of a list, and the values found are summed: `amount` reads one field, `lines[].qty` is
/// the total quantity over all lines. Values may be decimal strings or JSON numbers.
/// Returns `Ok(None)` when nothing is there (absent or `null`), and an error when a value
/// is not a number, so callers can fail closed.
///
/// ```
/// use erp_tools_core::agent::value_at;
/// use rust_decimal::Decimal;
/// use serde_json::json;
///
/// let args = json!({"lines": [{"qty": "10"}, {"qty": "2.5"}], "amount": "99"});
/// assert_eq!(value_at(&args, "lines[].qty").unwrap(), Some(Decimal::new(125, 1)));
/// assert_eq!(value_at(&args, "amount").unwrap(), Some(Decimal::from(99)));
/// assert_eq!(value_at(&args, "note").unwrap(), None);
/// assert!(value_at(&json!({"amount": "lots"}), "amount").is_err());
/// ```
pub fn value_at(args: &Value, path: &str) -> Result<Option<Decimal>, String> {
    let mut current: Vec<&Value> = vec![args];
    for segment in path.split('.') {
        let (name, each) = match segment.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (segment, false),
        };
        let mut next = Vec::new();
        for v in current {
            match v.get(name) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) if each => next.extend(items.iter()),
                Some(_) if each => return Err(format!("`{name}` is not a list")),
                Some(found) => next.push(found),
            }
        }
        current = next;
    }
    let mut sum: Option<Decimal> = None;
    for v in current {
        let d = match v {
            Value::Null => continue,
            Value::String(s) => {
                Decimal::from_str(s).map_err(|_| format!("\"{s}\" is not a decimal number"))?
            }
            Value::Number(n) => {
                let s = n.to_string();
                Decimal::from_str(&s)
                    .or_else(|_| Decimal::from_scientific(&s))
                    .map_err(|_| format!("{s} is out of range"))?
            }
            other => return Err(format!("{other} is not a number")),
        };
        sum = Some(match sum {
            None => d,
            Some(s) => s.checked_add(d).ok_or("the total is out of range")?,
        });
    }
    Ok(sum)
}
