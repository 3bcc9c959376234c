//! One configuration of who may call this server, read from code or from the environment.
//!
//! | variable | meaning |
//! | --- | --- |
//! | `ERP_TOOLS_ISSUER` | the identity provider's issuer URL (`https://`, or `http://` on loopback only); its keys are discovered from `<issuer>/.well-known/openid-configuration` (or `oauth-authorization-server`) |
//! | `ERP_TOOLS_JWKS_URI` | the provider's JWKS URL, when discovery is not wanted (with `ERP_TOOLS_ISSUER`) |
//! | `ERP_TOOLS_RESOURCE` | this server's MCP URL: the audience every token must name (default [`DEV_AUDIENCE`]) |
//! | `ERP_TOOLS_SIGNING_KEY` | instead of a provider: a shared HS256 secret of 32 bytes or more |
//! | `ERP_TOOLS_SIGNING_ISSUER` | the `iss` of HS256 tokens (default `erp-tools`) |
//! | `ERP_TOOLS_TOKEN_LEEWAY_SECS` | clock leeway for `exp`/`nbf` (default 5) |
//! | `ERP_TOOLS_MAX_TOKEN_AGE_SECS` | refuse tokens living or issued longer ago than this (default: no limit) |
//! | `ERP_TOOLS_KEY_REFRESH_SECS` | shortest time between two key-set fetches for unknown kids (default 60) |
//! | `ERP_TOOLS_TOKEN_CACHE_SECS` | how long a verified token is remembered, never past its `exp` (default 60; `0` verifies every request) |
//!
//! With neither `ERP_TOOLS_ISSUER` nor `ERP_TOOLS_SIGNING_KEY`, the published development
//! key is used (and a server with it refuses to listen beyond loopback).

use std::net::IpAddr;
use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;

use super::dev::{DEV_AUDIENCE, TokenConfig};
use super::error::AuthError;
use super::jwks::{DEFAULT_MAX_KEY_AGE, DEFAULT_REFRESH_INTERVAL};
use super::jwt::CLOCK_SKEW_SECS;
use super::token_cache::{DEFAULT_TOKEN_CACHE_CAPACITY, DEFAULT_TOKEN_CACHE_TTL};

/// The default `iss` of HS256 tokens signed with `ERP_TOOLS_SIGNING_KEY`.
pub const DEFAULT_SIGNING_ISSUER: &str = "erp-tools";

/// Where the signing keys of accepted tokens come from.
#[derive(Clone, Debug)]
pub enum KeysFrom {
    /// HS256 with a shared secret (the development key, or the team's own secret).
    SharedSecret(TokenConfig),
    /// The identity provider's JWKS: discovered from the issuer, fetched from a given URL,
    /// or handed over.
    Provider {
        /// The `jwks_uri` to fetch, when not discovered.
        jwks_uri: Option<String>,
        /// A fixed key set, when not fetched.
        jwks: Option<JwkSet>,
    },
}

/// Who may call this server: the issuer and keys of its tokens, the resource they must
/// name, and the time rules.
#[derive(Clone, Debug)]
pub struct IdentityConfig {
    pub(crate) issuer: String,
    pub(crate) resource: String,
    pub(crate) keys: KeysFrom,
    pub(crate) leeway: Duration,
    pub(crate) max_token_age: Option<Duration>,
    pub(crate) key_refresh_interval: Duration,
    pub(crate) max_key_age: Duration,
    pub(crate) token_cache_ttl: Duration,
    pub(crate) token_cache_capacity: usize,
}

impl IdentityConfig {
    /// Tokens from the identity provider `issuer` (`https://`, or `http://` on a loopback
    /// host), for this server's MCP URL `resource`. Keys are discovered from the issuer
    /// (feature `oidc`) unless [`with_jwks_uri`](Self::with_jwks_uri) or
    /// [`with_jwks`](Self::with_jwks) says otherwise.
    pub fn provider(
        issuer: impl Into<String>,
        resource: impl Into<String>,
    ) -> Result<Self, AuthError> {
        let issuer = issuer.into();
        let resource = resource.into();
        check_provider_url(&issuer, "the issuer")?;
        check_resource(&resource)?;
        Ok(IdentityConfig {
            issuer,
            resource,
            keys: KeysFrom::Provider {
                jwks_uri: None,
                jwks: None,
            },
            leeway: Duration::from_secs(CLOCK_SKEW_SECS),
            max_token_age: None,
            key_refresh_interval: DEFAULT_REFRESH_INTERVAL,
            max_key_age: DEFAULT_MAX_KEY_AGE,
            token_cache_ttl: DEFAULT_TOKEN_CACHE_TTL,
            token_cache_capacity: DEFAULT_TOKEN_CACHE_CAPACITY,
        })
    }

    /// HS256 tokens checked by `tokens` (its issuer, audience and resource URL).
    pub fn shared_secret(tokens: TokenConfig) -> Self {
        IdentityConfig {
            issuer: tokens.issuer.clone(),
            resource: tokens.resource_url.clone(),
            leeway: tokens.leeway,
            max_token_age: tokens.max_age,
            keys: KeysFrom::SharedSecret(tokens),
            key_refresh_interval: DEFAULT_REFRESH_INTERVAL,
            max_key_age: DEFAULT_MAX_KEY_AGE,
            token_cache_ttl: DEFAULT_TOKEN_CACHE_TTL,
            token_cache_capacity: DEFAULT_TOKEN_CACHE_CAPACITY,
        }
    }

    /// The development configuration ([`TokenConfig::development`]) for `resource`.
    pub fn development(resource: impl Into<String>) -> Self {
        Self::shared_secret(TokenConfig::development().for_resource(resource))
    }

    /// Reads the configuration from the environment: `ERP_TOOLS_ISSUER` (and optionally
    /// `ERP_TOOLS_JWKS_URI`) for a provider, or `ERP_TOOLS_SIGNING_KEY` (and
    /// `ERP_TOOLS_SIGNING_ISSUER`) for a shared secret, the development key otherwise;
    /// `ERP_TOOLS_RESOURCE` (default [`DEV_AUDIENCE`]); `ERP_TOOLS_TOKEN_LEEWAY_SECS`,
    /// `ERP_TOOLS_MAX_TOKEN_AGE_SECS`, `ERP_TOOLS_KEY_REFRESH_SECS`. Errors name the
    /// variable and say what to set.
    pub fn from_env() -> Result<Self, AuthError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with `lookup` in place of the environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, AuthError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let secs = |name: &str| -> Result<Option<Duration>, AuthError> {
            get(name)
                .map(|v| {
                    v.parse::<u64>().map(Duration::from_secs).map_err(|_| {
                        AuthError::Config(format!("{name} must be a number of seconds, not `{v}`"))
                    })
                })
                .transpose()
        };
        let resource = get("ERP_TOOLS_RESOURCE").unwrap_or_else(|| DEV_AUDIENCE.to_string());
        let issuer = get("ERP_TOOLS_ISSUER");
        let signing_key = lookup("ERP_TOOLS_SIGNING_KEY").filter(|k| !k.is_empty());
        let jwks_uri = get("ERP_TOOLS_JWKS_URI");
        let mut config = match (issuer, signing_key) {
            (Some(_), Some(_)) => {
                return Err(AuthError::Config(
                    "set either ERP_TOOLS_ISSUER (tokens from your identity provider) or \
                     ERP_TOOLS_SIGNING_KEY (a shared HS256 secret), not both"
                        .into(),
                ));
            }
            (Some(issuer), None) => {
                let config =
                    Self::provider(issuer, &resource).map_err(|e| named("ERP_TOOLS_ISSUER", e))?;
                match jwks_uri {
                    Some(uri) => config
                        .with_jwks_uri(uri)
                        .map_err(|e| named("ERP_TOOLS_JWKS_URI", e))?,
                    None => config,
                }
            }
            (None, key) => {
                if jwks_uri.is_some() {
                    return Err(AuthError::Config(
                        "ERP_TOOLS_JWKS_URI needs ERP_TOOLS_ISSUER (the `iss` of the \
                         provider's tokens)"
                            .into(),
                    ));
                }
                let tokens = match key {
                    Some(key) => {
                        let issuer = get("ERP_TOOLS_SIGNING_ISSUER")
                            .unwrap_or_else(|| DEFAULT_SIGNING_ISSUER.to_string());
                        TokenConfig::new(key.into_bytes(), issuer, &resource)
                            .map_err(|e| named("ERP_TOOLS_SIGNING_KEY", e))?
                    }
                    None => TokenConfig::development().for_resource(&resource),
                };
                Self::shared_secret(tokens)
            }
        };
        if let Some(leeway) = secs("ERP_TOOLS_TOKEN_LEEWAY_SECS")? {
            config = config.with_leeway(leeway);
        }
        if let Some(max) = secs("ERP_TOOLS_MAX_TOKEN_AGE_SECS")? {
            config = config.with_max_token_age(max);
        }
        if let Some(interval) = secs("ERP_TOOLS_KEY_REFRESH_SECS")? {
            config = config.with_key_refresh_interval(interval);
        }
        if let Some(ttl) = secs("ERP_TOOLS_TOKEN_CACHE_SECS")? {
            let capacity = config.token_cache_capacity;
            config = config.with_token_cache(ttl, capacity);
        }
        Ok(config)
    }

    /// Fetches the keys from `uri` (`https://`, or `http://` on loopback) instead of
    /// discovering them.
    pub fn with_jwks_uri(mut self, uri: impl Into<String>) -> Result<Self, AuthError> {
        let uri = uri.into();
        check_provider_url(&uri, "the JWKS URL")?;
        match &mut self.keys {
            KeysFrom::Provider { jwks_uri, .. } => *jwks_uri = Some(uri),
            KeysFrom::SharedSecret(_) => {
                return Err(AuthError::Config(
                    "a JWKS URL needs a provider configuration (IdentityConfig::provider)".into(),
                ));
            }
        }
        Ok(self)
    }

    /// Verifies with this fixed key set instead of fetching one.
    pub fn with_jwks(mut self, set: JwkSet) -> Self {
        if let KeysFrom::Provider { jwks, .. } = &mut self.keys {
            *jwks = Some(set);
        }
        self
    }

    /// Sets this server's MCP URL (the audience tokens must name).
    pub fn for_resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = resource.into();
        if let KeysFrom::SharedSecret(tokens) = &mut self.keys {
            *tokens = tokens.clone().for_resource(self.resource.clone());
        }
        self
    }

    /// The leeway for `exp` and `nbf` (default 5 s).
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        if let KeysFrom::SharedSecret(tokens) = &mut self.keys {
            *tokens = tokens.clone().with_leeway(leeway);
        }
        self
    }

    /// Refuses tokens living longer than `max` (`exp - iat`) or issued more than `max` ago.
    pub fn with_max_token_age(mut self, max: Duration) -> Self {
        self.max_token_age = Some(max);
        if let KeysFrom::SharedSecret(tokens) = &mut self.keys {
            *tokens = tokens.clone().with_max_age(max);
        }
        self
    }

    /// Shortest time between two key-set fetches caused by unknown kids (default 60 s).
    pub fn with_key_refresh_interval(mut self, interval: Duration) -> Self {
        self.key_refresh_interval = interval;
        self
    }

    /// How long fetched keys are used before they are fetched again (default one hour).
    pub fn with_max_key_age(mut self, age: Duration) -> Self {
        self.max_key_age = age;
        self
    }

    /// Remembers up to `capacity` verified tokens for at most `ttl` each (default
    /// [`DEFAULT_TOKEN_CACHE_TTL`], 60 s, and [`DEFAULT_TOKEN_CACHE_CAPACITY`]), so a client
    /// sending the same token on every request has its signature and claims checked once.
    /// An entry never outlives the token's `exp` or maximum age, and a token that fails
    /// verification is never remembered; with a
    /// [`PrincipalResolver`](super::PrincipalResolver) the caller is still resolved on every
    /// request. A key removed from the provider's key set, or a shared secret changed by
    /// a restart, stops a remembered token at the latest `ttl` later. `Duration::ZERO`
    /// verifies every request (no cache).
    ///
    /// ```
    /// use std::time::Duration;
    /// use erp_tools_core::auth::IdentityConfig;
    ///
    /// let config = IdentityConfig::development("http://127.0.0.1:8765/mcp")
    ///     .with_token_cache(Duration::from_secs(10), 1000);
    /// assert_eq!(config.token_cache(), (Duration::from_secs(10), 1000));
    /// ```
    pub fn with_token_cache(mut self, ttl: Duration, capacity: usize) -> Self {
        self.token_cache_ttl = ttl;
        self.token_cache_capacity = capacity;
        self
    }

    /// How long and how many verified tokens are remembered (see
    /// [`with_token_cache`](Self::with_token_cache)).
    pub fn token_cache(&self) -> (Duration, usize) {
        (self.token_cache_ttl, self.token_cache_capacity)
    }

    /// The issuer tokens must name.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
    /// This server's MCP URL, the audience tokens must name.
    pub fn resource(&self) -> &str {
        &self.resource
    }
    /// Where the signing keys come from.
    pub fn keys(&self) -> &KeysFrom {
        &self.keys
    }
    /// Whether tokens are checked with the published development key.
    pub fn is_development(&self) -> bool {
        matches!(&self.keys, KeysFrom::SharedSecret(t) if t.is_development())
    }
}

/// A configuration error prefixed with the variable it comes from.
fn named(variable: &str, err: AuthError) -> AuthError {
    match err {
        AuthError::Config(message) => AuthError::Config(format!("{variable}: {message}")),
        other => AuthError::Config(format!("{variable}: {other}")),
    }
}

/// An identity provider URL must be `https://`, or `http://` on a loopback host
/// (`localhost`, `127.0.0.0/8`, `[::1]`), so keys are never fetched in the clear.
pub fn check_provider_url(url: &str, what: &str) -> Result<(), AuthError> {
    let uri: ::http::Uri = url
        .parse()
        .map_err(|_| AuthError::Config(format!("{what} `{url}` is not a URL")))?;
    let host = uri
        .host()
        .ok_or_else(|| AuthError::Config(format!("{what} `{url}` has no host")))?;
    match uri.scheme_str() {
        Some("https") => Ok(()),
        Some("http") if is_loopback_host(host) => Ok(()),
        Some("http") => Err(AuthError::Config(format!(
            "{what} `{url}` uses http on a host that is not loopback; use https"
        ))),
        _ => Err(AuthError::Config(format!(
            "{what} `{url}` must start with https://"
        ))),
    }
}

fn check_resource(resource: &str) -> Result<(), AuthError> {
    let uri: ::http::Uri = resource
        .parse()
        .map_err(|_| AuthError::Config(format!("the resource `{resource}` is not a URL")))?;
    if uri.scheme_str().is_none() || uri.host().is_none() {
        return Err(AuthError::Config(format!(
            "the resource `{resource}` must be this server's absolute MCP URL, e.g. \
             https://erp.example.com/mcp"
        )));
    }
    Ok(())
}

/// Whether `host` (a name or an IP, IPv6 with or without brackets) is a loopback host.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn reads_each_mode_from_the_environment() {
        let dev = IdentityConfig::from_lookup(env(&[])).unwrap();
        assert!(dev.is_development());
        assert_eq!(dev.resource(), DEV_AUDIENCE);

        let provider = IdentityConfig::from_lookup(env(&[
            ("ERP_TOOLS_ISSUER", "https://id.example.com/realms/erp"),
            ("ERP_TOOLS_RESOURCE", "https://erp.example.com/mcp"),
            ("ERP_TOOLS_MAX_TOKEN_AGE_SECS", "3600"),
        ]))
        .unwrap();
        assert!(!provider.is_development());
        assert_eq!(provider.issuer(), "https://id.example.com/realms/erp");
        assert_eq!(provider.max_token_age, Some(Duration::from_secs(3600)));

        let secret = IdentityConfig::from_lookup(env(&[(
            "ERP_TOOLS_SIGNING_KEY",
            "0123456789abcdef0123456789abcdef",
        )]))
        .unwrap();
        assert!(!secret.is_development());
        assert_eq!(secret.issuer(), DEFAULT_SIGNING_ISSUER);
    }

    #[test]
    fn start_up_errors_name_the_variable_and_the_fix() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("ERP_TOOLS_ISSUER", "http://id.example.com")],
                "invalid token configuration: ERP_TOOLS_ISSUER: the issuer `http://id.example.com` uses http on a host that is not loopback; use https",
            ),
            (
                &[
                    ("ERP_TOOLS_ISSUER", "https://id.example.com"),
                    ("ERP_TOOLS_SIGNING_KEY", "0123456789abcdef0123456789abcdef"),
                ],
                "not both",
            ),
            (
                &[("ERP_TOOLS_JWKS_URI", "https://id.example.com/jwks")],
                "ERP_TOOLS_JWKS_URI needs ERP_TOOLS_ISSUER",
            ),
            (
                &[("ERP_TOOLS_SIGNING_KEY", "short")],
                "invalid token configuration: ERP_TOOLS_SIGNING_KEY: the signing key has 5 bytes",
            ),
            (
                &[("ERP_TOOLS_MAX_TOKEN_AGE_SECS", "an hour")],
                "ERP_TOOLS_MAX_TOKEN_AGE_SECS must be a number of seconds, not `an hour`",
            ),
            (
                &[
                    ("ERP_TOOLS_ISSUER", "https://id.example.com"),
                    ("ERP_TOOLS_RESOURCE", "/mcp"),
                ],
                "must be this server's absolute MCP URL",
            ),
        ];
        for (vars, expected) in cases {
            let err = IdentityConfig::from_lookup(env(vars))
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{vars:?}: {err}");
        }
    }

    #[test]
    fn loopback_hosts_may_use_http() {
        for ok in [
            "https://id.example.com",
            "http://127.0.0.1:4000",
            "http://localhost:4000/realms/x",
            "http://[::1]:4000",
        ] {
            assert!(check_provider_url(ok, "the issuer").is_ok(), "{ok}");
        }
        for bad in ["http://10.0.0.5", "ftp://id.example.com", "id.example.com"] {
            assert!(check_provider_url(bad, "the issuer").is_err(), "{bad}");
        }
    }
}
