//! Bearer tokens: how a [`Principal`] travels from the identity provider to the server.
//!
//! A token is an HS256-signed JWT whose claims name the person on whose behalf the agent
//! acts (`sub`, `roles`), their branch (`branch_id`, `branch_code`), the scopes granted
//! (`scope`, space-separated), and optionally the agent run (`run`), model and prompt
//! version. [`verify`] checks the signature, the expiry (with at most
//! [`CLOCK_SKEW_SECS`] of leeway), the audience and the issuer before it yields a
//! `Principal`; nothing in the result comes from the model.
//!
//! ```
//! use std::time::Duration;
//! use erp_tools_core::Principal;
//! use erp_tools_core::auth::{TokenConfig, mint, verify};
//!
//! let config = TokenConfig::new(
//!     b"a long random secret shared with the identity provider".to_vec(),
//!     "https://id.example.com",
//!     "https://erp.example.com/mcp",
//! )?;
//! let buyer = Principal::builder("u-1042", 3, "SBY-01")
//!     .role("buyer")
//!     .scopes(["purchasing:read", "purchasing:draft"])
//!     .build();
//! let token = mint(&config, &buyer, Duration::from_secs(600));
//! assert_eq!(verify(&config, &token)?, buyer);
//! # Ok::<(), erp_tools_core::auth::AuthError>(())
//! ```

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::tool::context::Principal;

/// The signing key of [`TokenConfig::development`].
///
/// **Never use this key in production.** It is published in this crate's source, so anyone
/// can mint a token with any user, branch and scopes that a server using it will accept.
/// It exists so the examples and tests run without set-up.
pub const DEV_SIGNING_KEY: &[u8] =
    b"erp-tools DEVELOPMENT signing key - published in the source - never use in production";

/// Issuer of development tokens.
pub const DEV_ISSUER: &str = "urn:erp-tools:development-issuer";

/// Audience (and resource URL) of development tokens: the MCP endpoint of a server run
/// locally with default settings, [`DEV_ADDR`] plus `/mcp`. The example serves there too.
pub const DEV_AUDIENCE: &str = "http://127.0.0.1:8765/mcp";

/// The address a development server listens on, matching [`DEV_AUDIENCE`].
pub const DEV_ADDR: &str = "127.0.0.1:8765";

/// Most clock difference tolerated when checking `exp` and `nbf`, in seconds.
pub const CLOCK_SKEW_SECS: u64 = 5;

/// Shortest accepted HS256 signing key, in bytes (RFC 7518 §3.2: at least the hash size).
pub const MIN_KEY_BYTES: usize = 32;

/// How tokens are signed and checked: the HS256 secret, who issues them, and who they are
/// for (this server).
#[derive(Clone)]
pub struct TokenConfig {
    signing_key: Vec<u8>,
    issuer: String,
    audience: String,
    resource_url: String,
    development: bool,
}

impl fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenConfig")
            .field("signing_key", &"<redacted>")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("resource_url", &self.resource_url)
            .field("development", &self.development)
            .finish()
    }
}

impl TokenConfig {
    /// Tokens signed with `signing_key` (HS256, at least [`MIN_KEY_BYTES`] bytes), issued by
    /// `issuer` for `audience`. The audience is also the resource URL announced in the
    /// protected-resource metadata; change that with [`with_resource_url`](Self::with_resource_url).
    pub fn new(
        signing_key: impl Into<Vec<u8>>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, AuthError> {
        let signing_key = signing_key.into();
        if signing_key.len() < MIN_KEY_BYTES {
            return Err(AuthError::Config(format!(
                "the signing key has {} bytes; HS256 needs at least {MIN_KEY_BYTES} random bytes",
                signing_key.len()
            )));
        }
        let issuer = issuer.into();
        let audience = audience.into();
        if issuer.trim().is_empty() || audience.trim().is_empty() {
            return Err(AuthError::Config(
                "the issuer and the audience must both be set".into(),
            ));
        }
        Ok(TokenConfig {
            signing_key,
            resource_url: audience.clone(),
            issuer,
            audience,
            development: false,
        })
    }

    /// The development configuration: [`DEV_SIGNING_KEY`], [`DEV_ISSUER`] and
    /// [`DEV_AUDIENCE`]. Logs a warning, because anyone can mint tokens for it.
    /// Point it at another address with [`for_resource`](Self::for_resource).
    pub fn development() -> Self {
        tracing::warn!(
            "using the DEVELOPMENT token signing key: anyone can mint tokens this server \
             accepts. Configure a secret key before serving real data."
        );
        TokenConfig {
            signing_key: DEV_SIGNING_KEY.to_vec(),
            issuer: DEV_ISSUER.into(),
            audience: DEV_AUDIENCE.into(),
            resource_url: DEV_AUDIENCE.into(),
            development: true,
        }
    }

    /// Sets both the audience tokens must carry and the resource URL announced to
    /// clients: the URL of this server's MCP endpoint, e.g. `https://erp.example.com/mcp`
    /// (RFC 8707: a token is only accepted by the resource it was issued for).
    pub fn for_resource(mut self, url: impl Into<String>) -> Self {
        let url = url.into();
        self.audience = url.clone();
        self.resource_url = url;
        self
    }

    /// Sets the resource URL announced in the protected-resource metadata, when it differs
    /// from the audience.
    pub fn with_resource_url(mut self, url: impl Into<String>) -> Self {
        self.resource_url = url.into();
        self
    }

    /// Who issues tokens (the `iss` claim every token must carry).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
    /// Who tokens are for (the `aud` claim every token must carry).
    pub fn audience(&self) -> &str {
        &self.audience
    }
    /// The URL of the protected resource (this server's MCP endpoint).
    pub fn resource_url(&self) -> &str {
        &self.resource_url
    }
    /// Whether this is the published development key.
    pub fn is_development(&self) -> bool {
        self.development
    }

    fn validation(&self) -> Validation {
        let mut v = Validation::new(Algorithm::HS256);
        v.leeway = CLOCK_SKEW_SECS;
        v.validate_exp = true;
        v.validate_nbf = true;
        v.validate_aud = true;
        v.set_audience(&[&self.audience]);
        v.set_issuer(&[&self.issuer]);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v
    }
}

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

/// Why a token was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No bearer token was sent.
    #[error("no bearer token was sent")]
    Missing,
    /// The token is not a well-formed JWT.
    #[error("the token is malformed")]
    Malformed,
    /// The signature does not match (wrong key, tampered token or wrong algorithm).
    #[error("the token signature is invalid")]
    BadSignature,
    /// The token has expired (or is not valid yet).
    #[error("the token has expired")]
    Expired,
    /// The token was issued for another server: its `aud` claim is not this server's
    /// resource URL.
    #[error(
        "the token was issued for another audience: expected {expected}, the token names {found}"
    )]
    WrongAudience {
        /// This server's audience (its MCP URL).
        expected: String,
        /// The token's `aud` claim.
        found: String,
    },
    /// The token was issued by an unknown issuer.
    #[error(
        "the token was issued by an unknown issuer: expected {expected}, the token names {found}"
    )]
    WrongIssuer {
        /// The issuer this server accepts.
        expected: String,
        /// The token's `iss` claim.
        found: String,
    },
    /// A required claim is missing or has the wrong type.
    #[error("the token claims are invalid: {0}")]
    InvalidClaims(String),
    /// The token configuration itself is unusable.
    #[error("invalid token configuration: {0}")]
    Config(String),
}

impl AuthError {
    /// A short description for the `error_description` of a `WWW-Authenticate` challenge:
    /// what was expected and what arrived for a wrong audience or issuer (claims, never the
    /// token or the key), without quotes, backslashes or control characters.
    pub fn description(&self) -> String {
        match self {
            AuthError::Missing => "No bearer token was sent".into(),
            AuthError::Malformed => "The token is malformed".into(),
            AuthError::BadSignature => "The token signature is invalid".into(),
            AuthError::Expired => "The token has expired".into(),
            AuthError::WrongAudience { expected, found } => format!(
                "The token was issued for another resource: expected {}, the token names {}",
                header_safe(expected),
                header_safe(found)
            ),
            AuthError::WrongIssuer { expected, found } => format!(
                "The token was issued by an unknown issuer: expected {}, the token names {}",
                header_safe(expected),
                header_safe(found)
            ),
            AuthError::InvalidClaims(_) => "The token claims are invalid".into(),
            AuthError::Config(_) => "The server cannot check tokens".into(),
        }
    }
}

/// A claim as it may appear inside a quoted header parameter: visible ASCII without `"`
/// or `\`, at most 120 characters.
fn header_safe(value: &str) -> String {
    let mut out: String = value
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\')
        .take(120)
        .collect();
    if out.is_empty() {
        out.push_str("(none)");
    }
    out
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

/// Verifies `token` (signature, expiry, audience, issuer) and returns its claims.
pub fn verify_claims(config: &TokenConfig, token: &str) -> Result<Claims, AuthError> {
    let key = DecodingKey::from_secret(&config.signing_key)
        .map_err(|e| AuthError::Config(e.to_string()))?;
    // A header that does not parse is a malformed token; JSON errors after this point
    // come from the (signed) claims.
    jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
    let data =
        jsonwebtoken::decode::<Claims>(token, &key, &config.validation()).map_err(|e| {
            match e.kind() {
                ErrorKind::InvalidSignature | ErrorKind::InvalidAlgorithm => {
                    AuthError::BadSignature
                }
                ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => AuthError::Expired,
                ErrorKind::InvalidAudience => AuthError::WrongAudience {
                    expected: config.audience.clone(),
                    found: String::new(),
                },
                ErrorKind::InvalidIssuer => AuthError::WrongIssuer {
                    expected: config.issuer.clone(),
                    found: String::new(),
                },
                ErrorKind::MissingRequiredClaim(c) => {
                    AuthError::InvalidClaims(format!("the `{c}` claim is missing"))
                }
                ErrorKind::InvalidClaimFormat(c) => {
                    AuthError::InvalidClaims(format!("the `{c}` claim has the wrong type"))
                }
                ErrorKind::Json(err) => AuthError::InvalidClaims(err.to_string()),
                _ => AuthError::Malformed,
            }
        });
    // What the token names, read from its signed claims (never from an unsigned one).
    let found = |claim: fn(Claims) -> String| {
        signed_claims(config, token, &key)
            .map(claim)
            .unwrap_or_default()
    };
    let data = match data {
        Err(AuthError::WrongAudience { expected, .. }) => {
            let found = found(|c| c.aud);
            return Err(AuthError::WrongAudience { expected, found });
        }
        Err(AuthError::WrongIssuer { expected, .. }) => {
            let found = found(|c| c.iss);
            return Err(AuthError::WrongIssuer { expected, found });
        }
        other => other?,
    };
    let claims = data.claims;
    if claims.sub.trim().is_empty() || claims.branch_code.trim().is_empty() {
        return Err(AuthError::InvalidClaims(
            "`sub` and `branch_code` must not be empty".into(),
        ));
    }
    if let Some(run) = &claims.agent_run_id
        && !crate::tool::context::valid_run_id(run)
    {
        return Err(AuthError::InvalidClaims(format!(
            "the `run` claim must be 1 to {} visible ASCII characters",
            crate::tool::context::MAX_RUN_ID_LEN
        )));
    }
    Ok(claims)
}

/// The claims of a token whose signature and expiry check out but whose audience or
/// issuer did not: read only to say what the token names.
fn signed_claims(config: &TokenConfig, token: &str, key: &DecodingKey) -> Option<Claims> {
    let mut v = config.validation();
    v.validate_aud = false;
    v.iss = None;
    jsonwebtoken::decode::<Claims>(token, key, &v)
        .ok()
        .map(|d| d.claims)
}

/// Verifies `token` (signature, expiry, audience, issuer) and returns the caller.
pub fn verify(config: &TokenConfig, token: &str) -> Result<Principal, AuthError> {
    verify_claims(config, token).map(Claims::into_principal)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> TokenConfig {
        TokenConfig::new(vec![7u8; 32], "https://id.test", "https://erp.test/mcp").unwrap()
    }

    fn buyer() -> Principal {
        Principal::builder("u-1", 3, "SBY-01")
            .role("buyer")
            .scopes(["purchasing:read", "purchasing:draft"])
            .agent_run_id("run-9")
            .model("m-1")
            .prompt_version("p-2")
            .build()
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let c = config();
        let token = mint(&c, &buyer(), Duration::from_secs(60));
        assert_eq!(verify(&c, &token).unwrap(), buyer());
        let claims = verify_claims(&c, &token).unwrap();
        assert_eq!(claims.scope, "purchasing:draft purchasing:read");
        assert_eq!(claims.agent_run_id.as_deref(), Some("run-9"));
    }

    #[test]
    fn refuses_bad_tokens_with_the_right_reason() {
        let c = config();
        let other_key =
            TokenConfig::new(vec![8u8; 32], "https://id.test", "https://erp.test/mcp").unwrap();
        let forged = mint(&other_key, &buyer(), Duration::from_secs(60));
        assert_eq!(verify(&c, &forged), Err(AuthError::BadSignature));

        let mut claims = Claims::for_principal(&c, &buyer(), Duration::from_secs(60));
        claims.exp = now_secs() - CLOCK_SKEW_SECS - 30;
        assert_eq!(verify(&c, &encode(&c, &claims)), Err(AuthError::Expired));

        let mut claims = Claims::for_principal(&c, &buyer(), Duration::from_secs(60));
        claims.aud = "https://other.test/mcp".into();
        let err = verify(&c, &encode(&c, &claims)).unwrap_err();
        assert_eq!(
            err,
            AuthError::WrongAudience {
                expected: "https://erp.test/mcp".into(),
                found: "https://other.test/mcp".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "the token was issued for another audience: expected https://erp.test/mcp, the \
             token names https://other.test/mcp"
        );
        assert_eq!(
            err.description(),
            "The token was issued for another resource: expected https://erp.test/mcp, the \
             token names https://other.test/mcp"
        );
        // A claim cannot break out of the quoted header parameter.
        claims.aud = "x\", error=\"forged\\".into();
        let err = verify(&c, &encode(&c, &claims)).unwrap_err();
        assert!(
            err.description()
                .ends_with("the token names x,error=forged"),
            "{err:?}"
        );

        let mut claims = Claims::for_principal(&c, &buyer(), Duration::from_secs(60));
        claims.iss = "https://evil.test".into();
        assert_eq!(
            verify(&c, &encode(&c, &claims)),
            Err(AuthError::WrongIssuer {
                expected: "https://id.test".into(),
                found: "https://evil.test".into()
            })
        );

        for run in ["r".repeat(300 * 1024), "run é".to_string(), String::new()] {
            let mut claims = Claims::for_principal(&c, &buyer(), Duration::from_secs(60));
            claims.agent_run_id = Some(run);
            let err = verify(&c, &encode(&c, &claims)).unwrap_err();
            assert!(err.to_string().contains("`run` claim"), "{err}");
        }

        assert_eq!(verify(&c, "not.a.jwt"), Err(AuthError::Malformed));
        assert_eq!(verify(&c, ""), Err(AuthError::Malformed));
    }

    #[test]
    fn refuses_short_keys_and_redacts_the_key() {
        let err = TokenConfig::new(b"short".to_vec(), "i", "a").unwrap_err();
        assert!(err.to_string().contains("at least 32"), "{err}");
        let dbg = format!("{:?}", TokenConfig::development());
        assert!(!dbg.contains("DEVELOPMENT signing"), "{dbg}");
        assert!(TokenConfig::development().is_development());
    }
}
