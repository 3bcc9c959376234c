//! The claims of an erp-tools (HS256) token, and minting and checking such tokens.

use std::time::{Duration, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use serde::{Deserialize, Serialize};

use super::dev::TokenConfig;
use super::error::AuthError;
use super::identity::Identity;
use super::jwt::{Expectations, TokenClaims, now_secs, validate};
use crate::tool::context::Principal;

/// The claims of an erp-tools token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The user on whose behalf the agent acts.
    pub sub: String,
    /// The user's roles.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Internal id of the user's branch.
    pub branch_id: i64,
    /// Business code of the user's branch, e.g. `SBY-01`.
    pub branch_code: String,
    /// Granted scopes, space-separated (RFC 8693 §4.2), e.g. `purchasing:read inventory:read`.
    #[serde(default)]
    pub scope: String,
    /// Audience: the server the token is for.
    pub aud: String,
    /// Issuer.
    pub iss: String,
    /// Expiry, seconds since the Unix epoch.
    pub exp: u64,
    /// Issue time, seconds since the Unix epoch.
    pub iat: u64,
    /// Not before, seconds since the Unix epoch, if the token is not valid at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
    /// The agent run the token was issued for, if any.
    #[serde(rename = "run", default, skip_serializing_if = "Option::is_none")]
    pub agent_run_id: Option<String>,
    /// The model driving the run, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The prompt version of the run, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_version: Option<String>,
}

impl Claims {
    /// The claims of a token for `principal`, valid for `ttl` from now.
    pub fn for_principal(config: &TokenConfig, principal: &Principal, ttl: Duration) -> Self {
        let now = now_secs();
        Claims {
            sub: principal.user_id().to_string(),
            roles: principal.roles().to_vec(),
            branch_id: principal.branch_id(),
            branch_code: principal.branch_code().to_string(),
            scope: principal
                .scopes()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            aud: config.audience.clone(),
            iss: config.issuer.clone(),
            exp: now.saturating_add(ttl.as_secs()),
            iat: now,
            nbf: None,
            agent_run_id: principal.agent_run_id().map(str::to_string),
            model: principal.model().map(str::to_string),
            prompt_version: principal.prompt_version().map(str::to_string),
        }
    }

    /// The principal these (verified) claims describe.
    pub fn into_principal(self) -> Principal {
        let mut b = Principal::builder(self.sub, self.branch_id, self.branch_code)
            .scopes(self.scope.split_ascii_whitespace());
        for role in self.roles {
            b = b.role(role);
        }
        if let Some(run) = self.agent_run_id {
            b = b.agent_run_id(run);
        }
        if let Some(model) = self.model {
            b = b.model(model);
        }
        if let Some(pv) = self.prompt_version {
            b = b.prompt_version(pv);
        }
        b.build()
    }
}

/// Signs `claims` with the configured key. Use [`mint`] for the usual case; this is for
/// tools (and tests) that need to shape the claims themselves.
pub fn encode(config: &TokenConfig, claims: &Claims) -> String {
    // The key is at least MIN_KEY_BYTES long (checked by the constructors) and the claims
    // always serialise, so HS256 signing cannot fail.
    let key = EncodingKey::from_secret(&config.signing_key)
        .expect("a non-empty HMAC key is always accepted");
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &key)
        .expect("HS256 signing of serialisable claims does not fail")
}

/// Mints a token for `principal`, valid for `ttl`.
pub fn mint(config: &TokenConfig, principal: &Principal, ttl: Duration) -> String {
    encode(config, &Claims::for_principal(config, principal, ttl))
}

/// Verifies an HS256 `token` (signature, `exp`/`nbf`, audience, issuer, optional maximum
/// age) and the consistency of its claims (non-empty `sub` and `branch_code`, a valid
/// `run`, and `branch_code` matching `branch_id` when branches are configured), and
/// returns them.
pub fn verify_claims(config: &TokenConfig, token: &str) -> Result<Claims, AuthError> {
    let verified = verify_token(config, token)?;
    claims_of(config, verified)
}

/// Verifies `token` like [`verify_claims`] and returns the caller.
///
/// This is the synchronous check of the HS256 (development or shared-secret) token of a
/// [`TokenConfig`]; an [`Authenticator`](super::Authenticator) verifies any configured
/// token (provider JWTs included) the same way the MCP endpoint does.
pub fn verify(config: &TokenConfig, token: &str) -> Result<Principal, AuthError> {
    verify_claims(config, token).map(Claims::into_principal)
}

/// Verifies `token` like [`verify`] and returns the caller with the token's expiry, for a
/// transport that must stop serving when the token expires (stdio).
pub fn verify_identity(config: &TokenConfig, token: &str) -> Result<Identity, AuthError> {
    let claims = verify_claims(config, token)?;
    let expires_at = UNIX_EPOCH + Duration::from_secs(claims.exp);
    Ok(Identity {
        principal: claims.into_principal(),
        expires_at: Some(expires_at),
    })
}

/// The signature and registered claims of an HS256 token.
pub(crate) fn verify_token(config: &TokenConfig, token: &str) -> Result<TokenClaims, AuthError> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
    if header.alg != Algorithm::HS256 {
        return Err(AuthError::UnsupportedAlgorithm(format!("{:?}", header.alg)));
    }
    let key = DecodingKey::from_secret(&config.signing_key)
        .map_err(|e| AuthError::Config(e.to_string()))?;
    let expect = Expectations {
        issuer: &config.issuer,
        audience: &config.audience,
        leeway: config.leeway,
        max_age: config.max_age,
    };
    validate(token, &key, Algorithm::HS256, &expect)
}

/// The erp-tools claims of a verified HS256 token, checked for consistency.
pub(crate) fn claims_of(config: &TokenConfig, verified: TokenClaims) -> Result<Claims, AuthError> {
    let claims: Claims = serde_json::from_value(serde_json::Value::Object(verified.raw))
        .map_err(|e| AuthError::InvalidClaims(e.to_string()))?;
    if claims.sub.trim().is_empty() || claims.branch_code.trim().is_empty() {
        return Err(AuthError::InvalidClaims(
            "`sub` and `branch_code` must not be empty".into(),
        ));
    }
    if let Some(branches) = config.branches() {
        branches.check(claims.branch_id, &claims.branch_code)?;
    }
    Ok(claims)
}
