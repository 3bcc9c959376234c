//! Admission: the one place a call is checked before anything runs or is written. MCP calls
//! and agent-loop calls both come through [`admit`]:
//!
//! 1. the tool is known;
//! 2. the caller holds every scope it needs;
//! 3. the arguments are valid against the strict schema, and normalised (absent optional
//!    fields become `null`, decimals take one canonical form);
//! 4. no hard limit is exceeded (the tool's own, plus any the caller adds, such as an
//!    agent [`Policy`](crate::agent::Policy)'s);
//! 5. a draft call carries a usable `client_ref`, which with the run id is its
//!    idempotency key.
//!
//! Admission is pure: it reads the registry and the principal, never the database.

use serde_json::Value;

use super::limits::{self, LimitCheck};
use crate::audit::Outcome;
use crate::idempotency::{IdempotencyKey, MAX_CLIENT_REF_CHARS};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::text;
use crate::tool::Tier;
use crate::tool::context::Principal;
use crate::tool::error::ToolError;

/// A call that may run: its tool, its normalised arguments and, for a draft, its key.
#[derive(Debug)]
pub(crate) struct Admitted<'r> {
    pub tool: &'r RegisteredTool,
    pub args: Value,
    pub key: Option<IdempotencyKey>,
}

/// Which check refused a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    UnknownTool,
    MissingScope,
    InvalidArguments,
    OverLimit,
    ClientRef,
}

/// A call refused by admission: nothing ran, nothing was written.
#[derive(Debug)]
pub(crate) struct Refused {
    pub check: Check,
    pub error: ToolError,
}

impl Refused {
    /// The audit outcome of the refusal: `denied` for permissions and limits,
    /// `tool_error` for arguments the model can correct.
    pub(crate) fn outcome(&self) -> Outcome {
        match self.check {
            Check::UnknownTool | Check::MissingScope | Check::OverLimit => Outcome::Denied,
            Check::InvalidArguments | Check::ClientRef => Outcome::ToolError,
        }
    }
}

/// Admits or refuses one call of `name` with `arguments` for `principal` in run `run_id`.
/// `extra_limits` are checked after the tool's own.
pub(crate) fn admit<'r>(
    registry: &'r ToolRegistry,
    principal: &Principal,
    run_id: &str,
    name: &str,
    arguments: &Value,
    extra_limits: &[LimitCheck<'_>],
) -> Result<Admitted<'r>, Refused> {
    let refuse = |check, error| Refused { check, error };

    // 1. Tool known.
    let Some(tool) = registry.get(name) else {
        let available: Vec<&str> = registry.list_for(principal).map(|t| t.name()).collect();
        return Err(refuse(
            Check::UnknownTool,
            text::unknown_tool(name, &available),
        ));
    };
    let def = tool.def;
    let tier = def.tier();

    // 2. Scopes held.
    let missing = tool.missing_scopes(principal);
    if !missing.is_empty() {
        return Err(refuse(
            Check::MissingScope,
            text::missing_scopes(def.name(), tier, &missing, principal.user_id()),
        ));
    }

    // 3. Arguments valid (server-side; the schema shown to the model is advice).
    let raw = match arguments {
        Value::Null => Value::Object(Default::default()),
        other => other.clone(),
    };
    let args = tool.validate(&raw).map_err(|problems| {
        refuse(
            Check::InvalidArguments,
            text::invalid_arguments(def.name(), tier, &problems),
        )
    })?;

    // 4. Hard value limits.
    let own = def.limits().iter().map(|l| LimitCheck {
        path: l.path,
        max: l.max,
    });
    limits::check(
        def.name(),
        tier,
        &args,
        own.chain(extra_limits.iter().copied()),
    )
    .map_err(|e| refuse(Check::OverLimit, e))?;

    // 5. The idempotency key of a draft.
    let key = match tier {
        Tier::Read => None,
        Tier::Draft => Some(IdempotencyKey {
            agent_run_id: run_id.to_string(),
            client_ref: client_ref_of(def.name(), &args)
                .map_err(|e| refuse(Check::ClientRef, e))?,
        }),
    };
    Ok(Admitted { tool, args, key })
}

fn client_ref_of(tool: &str, args: &Value) -> Result<String, ToolError> {
    let Some(client_ref) = args.get("client_ref").and_then(Value::as_str) else {
        return Err(text::client_ref_undeclared(tool));
    };
    if client_ref.trim().is_empty() {
        return Err(text::client_ref_empty());
    }
    if client_ref.chars().count() > MAX_CLIENT_REF_CHARS {
        return Err(text::client_ref_too_long());
    }
    Ok(client_ref.to_string())
}
