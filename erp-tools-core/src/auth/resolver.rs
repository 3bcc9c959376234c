//! From verified claims to the [`Principal`] a tool call runs as.
//!
//! A team's identity provider says who someone is (`sub`) and which coarse scopes the
//! token carries; the ERP says what that person may do. A [`PrincipalResolver`] looks the
//! user up in the ERP (their branch and roles), and the effective scopes are the token's
//! scopes **intersected** with what the user's roles grant ([`effective_scopes`]): a token
//! cannot give a warehouse clerk a buyer's tool, and a buyer's token without
//! `purchasing:draft` still cannot draft. An unknown subject is refused
//! ([`AuthError::UnknownSubject`]).
//!
//! [`ClaimsResolver`] is the default, for providers whose tokens carry everything
//! (`branch_id`, `branch_code`, `roles`, `scope`).

use futures::future::BoxFuture;
use serde_json::Value;

use super::branches::Branches;
use super::error::AuthError;
use super::jwt::TokenClaims;
use crate::tool::context::Principal;

/// Turns the verified claims of a token into the caller. Implemented by the application,
/// which knows its users.
///
/// ```
/// use erp_tools_core::Principal;
/// use erp_tools_core::auth::{AuthError, PrincipalResolver, TokenClaims, effective_scopes};
/// use erp_tools_core::auth::BoxFuture;
///
/// struct Users; // in a real application: the ERP's users table
///
/// impl PrincipalResolver for Users {
///     fn resolve<'a>(&'a self, claims: &'a TokenClaims)
///         -> BoxFuture<'a, Result<Principal, AuthError>> {
///         Box::pin(async move {
///             let (branch_id, branch_code, role) = match claims.subject.as_str() {
///                 "7" => (1, "SBY-01", "buyer"),
///                 other => return Err(AuthError::UnknownSubject(other.to_string())),
///             };
///             let granted = ["purchasing:read", "purchasing:draft"];
///             Ok(Principal::builder(&claims.subject, branch_id, branch_code)
///                 .role(role)
///                 .scopes(effective_scopes(&claims.scopes, granted))
///                 .build())
///         })
///     }
/// }
/// ```
pub trait PrincipalResolver: Send + Sync + 'static {
    /// The caller the verified `claims` name, or why they name nobody here.
    fn resolve<'a>(
        &'a self,
        claims: &'a TokenClaims,
    ) -> BoxFuture<'a, Result<Principal, AuthError>>;
}

/// The token's scopes that the user's roles grant too, sorted.
pub fn effective_scopes<'g>(
    token_scopes: &[String],
    granted: impl IntoIterator<Item = &'g str>,
) -> Vec<String> {
    let granted: Vec<&str> = granted.into_iter().collect();
    let mut scopes: Vec<String> = token_scopes
        .iter()
        .filter(|s| granted.contains(&s.as_str()))
        .cloned()
        .collect();
    scopes.sort();
    scopes.dedup();
    scopes
}

/// Reads the principal from the token itself: `sub`, `branch_id` (a number or a numeric
/// string), `branch_code`, `roles` (an array of strings), the scopes, and optionally
/// `run`, `model` and `prompt_version`. With [`with_branches`](Self::with_branches), the
/// branch code must be the code of the branch id.
#[derive(Clone, Debug, Default)]
pub struct ClaimsResolver {
    branches: Option<Branches>,
}

impl ClaimsResolver {
    /// Takes the claims as they are signed.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ERP's branches (id and code): a token whose `branch_code` is not its
    /// `branch_id`'s code is refused.
    pub fn with_branches<I, S>(mut self, branches: I) -> Self
    where
        I: IntoIterator<Item = (i64, S)>,
        S: Into<String>,
    {
        self.branches = Some(Branches::new(branches));
        self
    }

    /// The principal of `claims` (the synchronous part of [`PrincipalResolver::resolve`]).
    pub fn principal(&self, claims: &TokenClaims) -> Result<Principal, AuthError> {
        let missing = |name: &str| {
            AuthError::InvalidClaims(format!(
                "the token has no `{name}` claim; configure a PrincipalResolver that looks \
                 the user up in the ERP, or have the provider add the claim"
            ))
        };
        let branch_id = match claims.get("branch_id") {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.parse().ok(),
            None => return Err(missing("branch_id")),
            Some(_) => None,
        }
        .ok_or_else(|| AuthError::InvalidClaims("`branch_id` must be an integer".into()))?;
        let branch_code = claims
            .str_claim("branch_code")
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| missing("branch_code"))?;
        if let Some(branches) = &self.branches {
            branches.check(branch_id, branch_code)?;
        }
        let mut builder = Principal::builder(&claims.subject, branch_id, branch_code)
            .scopes(claims.scopes.iter().cloned());
        match claims.get("roles") {
            None | Some(Value::Null) => {}
            Some(Value::Array(roles)) => {
                for role in roles {
                    let role = role.as_str().ok_or_else(|| {
                        AuthError::InvalidClaims("`roles` must hold strings".into())
                    })?;
                    builder = builder.role(role);
                }
            }
            Some(_) => {
                return Err(AuthError::InvalidClaims(
                    "`roles` must be an array of strings".into(),
                ));
            }
        }
        // A `run` claim was checked when the token was verified (`TokenClaims`).
        if let Some(run) = claims.str_claim("run") {
            builder = builder.agent_run_id(run);
        }
        if let Some(model) = claims.str_claim("model") {
            builder = builder.model(model);
        }
        if let Some(pv) = claims.str_claim("prompt_version") {
            builder = builder.prompt_version(pv);
        }
        Ok(builder.build())
    }
}

impl PrincipalResolver for ClaimsResolver {
    fn resolve<'a>(
        &'a self,
        claims: &'a TokenClaims,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move { self.principal(claims) })
    }
}
