//! Bearer tokens: how a [`Principal`](crate::Principal) travels from the identity provider
//! to the server.
//!
//! Two kinds of token are accepted, never both by one server:
//!
//! - **The team's own identity provider** (Keycloak, Entra ID, Auth0, Okta, any OpenID
//!   provider): JWT access tokens signed RS256, PS256, ES256 or EdDSA, verified against
//!   the provider's JWKS ([`KeyCache`], discovered from the issuer with the `oidc`
//!   feature, or handed over). The application's [`PrincipalResolver`] turns the claims
//!   into the caller: `sub` names the ERP user, whose record gives the branch and roles,
//!   and the effective scopes are the token's scopes intersected with what the roles
//!   grant ([`effective_scopes`]).
//! - **HS256 with a shared secret** ([`TokenConfig`]): the published development key
//!   ([`TokenConfig::development`], loopback only), or a secret of the team's own. Such a
//!   token names the user (`sub`, `roles`), the branch (`branch_id`, `branch_code`), the
//!   scopes (`scope`), and optionally the agent run (`run`), model and prompt version.
//!
//! Either way the signature, `exp` and `nbf` (with at most [`CLOCK_SKEW_SECS`] of leeway
//! by default), `iss` (exactly), `aud` (must name this server's resource URL, RFC 8707)
//! and an optional maximum age are checked before a `Principal` exists; nothing in it
//! comes from the model. [`IdentityConfig`] is the one configuration, read from code or
//! the environment ([`IdentityConfig::from_env`]); [`Authenticator::authenticate`] is the
//! one entry point that verifies any token the way the MCP endpoint does. [`verify`] is
//! its synchronous form for HS256 tokens.
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
//!
//! The guide's chapter: *Identity* (`guide/src/identity.md` in the repository).

mod authenticator;
mod branches;
mod config;
mod dev;
#[cfg(feature = "oidc")]
mod discovery;
mod error;
mod identity;
mod jwks;
mod jwt;
mod resolver;
mod token;
mod token_cache;

pub use authenticator::Authenticator;
pub use config::{DEFAULT_SIGNING_ISSUER, IdentityConfig, KeysFrom, check_provider_url};
pub use dev::{DEV_ADDR, DEV_AUDIENCE, DEV_ISSUER, MIN_KEY_BYTES, TokenConfig};
#[cfg(feature = "oidc")]
pub use discovery::{JwksUri, ProviderMetadata, discover};
pub use error::AuthError;
/// The boxed future a [`PrincipalResolver`] or [`KeySource`] returns.
pub use futures::future::BoxFuture;
pub use identity::Identity;
/// The JWK types of key sets ([`KeySource`], [`IdentityConfig::with_jwks`]).
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
pub use jwks::{
    DEFAULT_MAX_KEY_AGE, DEFAULT_REFRESH_INTERVAL, KeyCache, KeySource, PROVIDER_ALGORITHMS,
    StaticKeys, parse_key_set,
};
pub use jwt::{CLOCK_SKEW_SECS, TokenClaims};
pub use resolver::{ClaimsResolver, PrincipalResolver, effective_scopes};
pub use token::{Claims, encode, mint, verify, verify_claims, verify_identity};
pub use token_cache::{DEFAULT_TOKEN_CACHE_CAPACITY, DEFAULT_TOKEN_CACHE_TTL};

#[cfg(test)]
mod tests;
