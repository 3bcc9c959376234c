//! One entry point that verifies any token this server accepts: [`Authenticator`].
//!
//! The MCP endpoint calls [`Authenticator::authenticate`] on every request; a console or
//! any other surface of the application verifies its bearer tokens with the same call, so
//! they are accepted and refused by the same rules.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use super::config::{IdentityConfig, KeysFrom};
use super::dev::TokenConfig;
use super::error::AuthError;
use super::identity::Identity;
use super::jwks::{KeyCache, StaticKeys};
use super::jwt::{Expectations, TokenClaims, validate};
use super::resolver::{ClaimsResolver, PrincipalResolver};
use super::token::{claims_of, verify_token};
use super::token_cache::{TokenCache, Verified};
use crate::tool::context::Principal;

/// Verifies bearer tokens (development HS256 tokens, or the identity provider's JWTs
/// against its JWKS) and resolves them to a [`Principal`](crate::Principal). Cheap to clone.
#[derive(Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

struct Inner {
    config: IdentityConfig,
    /// Tokens verified recently ([`IdentityConfig::with_token_cache`]).
    verified: TokenCache,
    keys: Keys,
    /// `None`: the claims as signed ([`ClaimsResolver`]; for HS256 tokens, their
    /// erp-tools claims checked against the configured branches).
    resolver: Option<Arc<dyn PrincipalResolver>>,
}

enum Keys {
    Shared(TokenConfig),
    Provider(KeyCache),
}

impl Inner {
    fn new(
        config: IdentityConfig,
        keys: Keys,
        resolver: Option<Arc<dyn PrincipalResolver>>,
    ) -> Inner {
        let (ttl, capacity) = config.token_cache();
        Inner {
            verified: TokenCache::new(ttl, capacity),
            config,
            keys,
            resolver,
        }
    }
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("issuer", &self.inner.config.issuer)
            .field("resource", &self.inner.config.resource)
            .field("development", &self.is_development())
            .finish()
    }
}

impl Authenticator {
    /// HS256 tokens of `tokens`, read with [`ClaimsResolver`] (the claims as signed,
    /// checked against `tokens`' branches when it has them).
    pub fn shared_secret(tokens: TokenConfig) -> Self {
        Authenticator {
            inner: Arc::new(Inner::new(
                IdentityConfig::shared_secret(tokens.clone()),
                Keys::Shared(tokens),
                None,
            )),
        }
    }

    /// An authenticator for `config`: for a provider, its keys are discovered from the
    /// issuer (feature `oidc`), fetched from the configured `jwks_uri`, or taken from the
    /// configured key set, and fetched once now so a wrong URL fails at start-up.
    pub async fn from_config(config: IdentityConfig) -> Result<Self, AuthError> {
        let keys = match config.keys.clone() {
            KeysFrom::SharedSecret(tokens) => Keys::Shared(tokens),
            KeysFrom::Provider {
                jwks: Some(set), ..
            } => Keys::Provider(cache(&config, StaticKeys(set))),
            KeysFrom::Provider { jwks_uri, .. } => {
                Keys::Provider(remote_keys(&config, jwks_uri).await?)
            }
        };
        if let Keys::Provider(cache) = &keys {
            cache.prefetch().await?;
        }
        Ok(Authenticator {
            inner: Arc::new(Inner::new(config, keys, None)),
        })
    }

    /// An authenticator for `config` verifying provider tokens against `keys` (any
    /// [`KeyCache`], e.g. over a custom [`KeySource`](super::KeySource)).
    pub fn with_key_cache(config: IdentityConfig, keys: KeyCache) -> Self {
        let keys = match &config.keys {
            KeysFrom::SharedSecret(tokens) => Keys::Shared(tokens.clone()),
            KeysFrom::Provider { .. } => Keys::Provider(keys),
        };
        Authenticator {
            inner: Arc::new(Inner::new(config, keys, None)),
        }
    }

    /// Resolves verified claims with `resolver` (the application's users) instead of
    /// reading the principal from the claims.
    pub fn with_resolver(self, resolver: impl PrincipalResolver) -> Self {
        let (config, keys) = match Arc::try_unwrap(self.inner) {
            Ok(inner) => (inner.config, inner.keys),
            Err(shared) => (
                shared.config.clone(),
                match &shared.keys {
                    Keys::Shared(t) => Keys::Shared(t.clone()),
                    Keys::Provider(c) => Keys::Provider(c.clone()),
                },
            ),
        };
        // A new cache: one filled without the resolver holds callers read from claims.
        Authenticator {
            inner: Arc::new(Inner::new(config, keys, Some(Arc::new(resolver)))),
        }
    }

    /// Verifies `token` and resolves its caller: the signature with the configured key
    /// (the algorithm comes from the key), `iss` exactly, `aud` naming this server's
    /// resource, `exp`/`nbf` with the leeway, the maximum age, a valid `run` claim, and
    /// then the [`PrincipalResolver`].
    ///
    /// A token verified within the last minute (see [`IdentityConfig::with_token_cache`])
    /// is not verified again; with a resolver, its caller is resolved again.
    pub async fn authenticate(&self, token: &str) -> Result<Identity, AuthError> {
        // A `run` claim was checked when the token was verified (`TokenClaims`).
        let verified = self.verified(token).await?;
        if let Some(identity) = verified.identity {
            return Ok(identity);
        }
        let claims = &verified.claims;
        let principal = match &self.inner.resolver {
            Some(resolver) => resolver.resolve(claims).await?,
            None => self.principal_of(claims)?,
        };
        Ok(Identity {
            principal,
            expires_at: Some(UNIX_EPOCH + Duration::from_secs(claims.expires_at)),
        })
    }

    /// The caller the claims name, without a resolver.
    fn principal_of(&self, claims: &TokenClaims) -> Result<Principal, AuthError> {
        match &self.inner.keys {
            // Development and shared-secret tokens carry erp-tools claims, checked for
            // consistency (the branch code against the branch id).
            Keys::Shared(tokens) => Ok(claims_of(tokens, claims.clone())?.into_principal()),
            Keys::Provider(_) => ClaimsResolver::new().principal(claims),
        }
    }

    /// `token` verified, from the cache when it was verified recently; remembered when it
    /// was not (with its caller, when no resolver is involved).
    async fn verified(&self, token: &str) -> Result<Verified, AuthError> {
        if let Some(verified) = self.inner.verified.get(token) {
            return Ok(verified);
        }
        let claims = self.verify_signed(token).await?;
        let identity = match &self.inner.resolver {
            Some(_) => None,
            None => Some(Identity {
                principal: self.principal_of(&claims)?,
                expires_at: Some(UNIX_EPOCH + Duration::from_secs(claims.expires_at)),
            }),
        };
        let verified = Verified {
            claims: Arc::new(claims),
            identity,
        };
        let max_age = self.inner.config.max_token_age;
        self.inner.verified.put(token, verified.clone(), max_age);
        Ok(verified)
    }

    /// Verifies `token`'s signature and registered claims, without resolving the caller
    /// (a token verified recently is taken from the cache).
    pub async fn verify_claims(&self, token: &str) -> Result<TokenClaims, AuthError> {
        Ok(TokenClaims::clone(&self.verified(token).await?.claims))
    }

    /// Verifies `token`'s signature and registered claims, now.
    async fn verify_signed(&self, token: &str) -> Result<TokenClaims, AuthError> {
        match &self.inner.keys {
            Keys::Shared(tokens) => verify_token(tokens, token),
            Keys::Provider(cache) => {
                let header =
                    jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
                if !super::jwks::PROVIDER_ALGORITHMS.contains(&header.alg) {
                    return Err(AuthError::UnsupportedAlgorithm(format!("{:?}", header.alg)));
                }
                let key = cache.key_for(header.kid.as_deref(), header.alg).await?;
                validate(token, &key, header.alg, &self.expectations())
            }
        }
    }

    fn expectations(&self) -> Expectations<'_> {
        let c = &self.inner.config;
        Expectations {
            issuer: &c.issuer,
            audience: &c.resource,
            leeway: c.leeway,
            max_age: c.max_token_age,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &IdentityConfig {
        &self.inner.config
    }

    /// This server's MCP URL (the audience tokens must name).
    pub fn resource_url(&self) -> &str {
        match &self.inner.keys {
            Keys::Shared(tokens) => tokens.resource_url(),
            Keys::Provider(_) => &self.inner.config.resource,
        }
    }

    /// The authorization servers to announce in the protected-resource metadata: the
    /// provider's issuer, none for shared-secret tokens.
    pub fn authorization_servers(&self) -> Vec<String> {
        match &self.inner.keys {
            Keys::Shared(_) => Vec::new(),
            Keys::Provider(_) => vec![self.inner.config.issuer.clone()],
        }
    }

    /// Whether tokens are checked with the published development key.
    pub fn is_development(&self) -> bool {
        matches!(&self.inner.keys, Keys::Shared(t) if t.is_development())
    }

    /// The key cache of a provider configuration.
    pub fn key_cache(&self) -> Option<&KeyCache> {
        match &self.inner.keys {
            Keys::Provider(cache) => Some(cache),
            Keys::Shared(_) => None,
        }
    }
}

fn cache(config: &IdentityConfig, source: impl super::jwks::KeySource) -> KeyCache {
    KeyCache::with_intervals(source, config.key_refresh_interval, config.max_key_age)
}

#[cfg(feature = "oidc")]
async fn remote_keys(
    config: &IdentityConfig,
    jwks_uri: Option<String>,
) -> Result<KeyCache, AuthError> {
    let uri = match jwks_uri {
        Some(uri) => uri,
        None => super::discovery::discover(&config.issuer).await?.jwks_uri,
    };
    Ok(cache(config, super::discovery::JwksUri::new(uri)?))
}

#[cfg(not(feature = "oidc"))]
async fn remote_keys(
    config: &IdentityConfig,
    jwks_uri: Option<String>,
) -> Result<KeyCache, AuthError> {
    let _ = jwks_uri;
    Err(AuthError::Config(format!(
        "fetching the keys of {} needs the `oidc` feature of erp-tools-core; without it, \
         hand the key set over with IdentityConfig::with_jwks",
        config.issuer
    )))
}
