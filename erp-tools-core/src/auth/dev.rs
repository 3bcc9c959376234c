//! HS256 with a shared secret: the published development key, or a secret of the team's
//! own for set-ups without an identity provider. [`TokenConfig`] names the key, who
//! issues tokens and who they are for.

use std::fmt;
use std::time::Duration;

use super::branches::Branches;
use super::error::AuthError;
use super::jwt::CLOCK_SKEW_SECS;

/// The signing key of [`TokenConfig::development`].
///
/// **Never use this key in production.** It is published in this crate's source, so anyone
/// can mint a token with any user, branch and scopes that a server using it will accept.
/// It exists so the examples and tests run without set-up; an HTTP server with it refuses
/// to listen on an address other than loopback.
pub(crate) const DEV_SIGNING_KEY: &[u8] =
    b"erp-tools DEVELOPMENT signing key - published in the source - never use in production";

/// Issuer of development tokens.
pub const DEV_ISSUER: &str = "urn:erp-tools:development-issuer";

/// Audience (and resource URL) of development tokens: the MCP endpoint of a server run
/// locally with default settings, [`DEV_ADDR`] plus `/mcp`. The example serves there too.
pub const DEV_AUDIENCE: &str = "http://127.0.0.1:8765/mcp";

/// The address a development server listens on, matching [`DEV_AUDIENCE`].
pub const DEV_ADDR: &str = "127.0.0.1:8765";

/// Shortest accepted HS256 signing key, in bytes (RFC 7518 §3.2: at least the hash size).
pub const MIN_KEY_BYTES: usize = 32;

/// How HS256 tokens are signed and checked: the shared secret, who issues them, who they
/// are for (this server), and optionally which branch codes belong to which branch ids.
#[derive(Clone)]
pub struct TokenConfig {
    pub(crate) signing_key: Vec<u8>,
    pub(crate) issuer: String,
    pub(crate) audience: String,
    pub(crate) resource_url: String,
    pub(crate) development: bool,
    pub(crate) leeway: Duration,
    pub(crate) max_age: Option<Duration>,
    pub(crate) branches: Option<Branches>,
}

impl fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenConfig")
            .field("signing_key", &"<redacted>")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("resource_url", &self.resource_url)
            .field("development", &self.development)
            .field("leeway", &self.leeway)
            .field("max_age", &self.max_age)
            .field("branches", &self.branches)
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
        if signing_key == DEV_SIGNING_KEY {
            return Err(AuthError::Config(
                "the signing key is the published development key; use \
                 TokenConfig::development() for development, a secret of your own otherwise"
                    .into(),
            ));
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
            leeway: Duration::from_secs(CLOCK_SKEW_SECS),
            max_age: None,
            branches: None,
        })
    }

    /// The development configuration: the development signing key published in this
    /// crate's source, [`DEV_ISSUER`] and
    /// [`DEV_AUDIENCE`]. Logs a warning, because anyone can mint tokens for it.
    /// Point it at another address with [`for_resource`](Self::for_resource).
    pub fn development() -> Self {
        tracing::warn!(
            "using the DEVELOPMENT token signing key: anyone can mint tokens this server \
             accepts. Configure an identity provider (or a secret key) before serving real data."
        );
        TokenConfig {
            signing_key: DEV_SIGNING_KEY.to_vec(),
            issuer: DEV_ISSUER.into(),
            audience: DEV_AUDIENCE.into(),
            resource_url: DEV_AUDIENCE.into(),
            development: true,
            leeway: Duration::from_secs(CLOCK_SKEW_SECS),
            max_age: None,
            branches: None,
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

    /// The leeway for `exp` and `nbf` (default [`CLOCK_SKEW_SECS`]).
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Refuses tokens that live longer than `max_age` (`exp - iat`) or were issued more
    /// than `max_age` ago. Off by default.
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// The branches of the ERP, id and code: a token whose `branch_code` is not the code
    /// of its `branch_id` (or names a branch not listed) is refused. Without it, the two
    /// claims are taken as they are signed.
    pub fn with_branches<I, S>(mut self, branches: I) -> Self
    where
        I: IntoIterator<Item = (i64, S)>,
        S: Into<String>,
    {
        self.branches = Some(Branches::new(branches));
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

    /// The configured branches, if any.
    pub(crate) fn branches(&self) -> Option<&Branches> {
        self.branches.as_ref()
    }
}
