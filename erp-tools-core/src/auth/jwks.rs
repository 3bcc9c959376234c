//! The identity provider's signing keys (a JWKS), cached by `kid`.
//!
//! A token naming a `kid` the cache does not know makes it fetch the key set again (key
//! rotation), but at most once per [`DEFAULT_REFRESH_INTERVAL`] (configurable), however
//! many tokens with made-up kids arrive: a forger cannot make the server hammer the
//! provider. The keys are also fetched again, on the next token, once they are older
//! than the maximum key age, so keys the provider withdrew stop being accepted.
//!
//! Each key accepts the algorithms its JWK allows: its `alg` when given, otherwise those of
//! its type (`RSA`: RS256/384/512 and PS256/384/512; `EC` P-256: ES256, P-384: ES384;
//! `OKP` Ed25519: EdDSA). The token header must name one of them; it never chooses the
//! algorithm on its own, and symmetric (`oct`) and encryption keys are ignored.

use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};

use super::error::AuthError;

/// Shortest time between two fetches of the key set caused by unknown `kid`s.
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// How long fetched keys are used before the set is fetched again.
pub const DEFAULT_MAX_KEY_AGE: Duration = Duration::from_secs(3600);

/// The asymmetric algorithms accepted from an identity provider.
pub const PROVIDER_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Where the key set comes from: fetched from a `jwks_uri` (feature `oidc`), handed over
/// by the application, or anything else that yields a [`JwkSet`].
pub trait KeySource: Send + Sync + 'static {
    /// Fetches the current key set.
    fn fetch(&self) -> BoxFuture<'_, Result<JwkSet, AuthError>>;
    /// Where the keys come from, for logs and errors (a URL, "static keys").
    fn describe(&self) -> String;
}

/// A fixed key set, e.g. read from a file at start-up.
#[derive(Clone, Debug)]
pub struct StaticKeys(pub JwkSet);

impl KeySource for StaticKeys {
    fn fetch(&self) -> BoxFuture<'_, Result<JwkSet, AuthError>> {
        let keys = self.0.clone();
        Box::pin(async move { Ok(keys) })
    }
    fn describe(&self) -> String {
        "the configured key set".into()
    }
}

#[derive(Clone)]
struct CachedKey {
    kid: Option<String>,
    algorithms: Vec<Algorithm>,
    key: DecodingKey,
}

#[derive(Default)]
struct CacheState {
    keys: Vec<CachedKey>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    fetches: u64,
}

/// The provider's keys by `kid`, fetched on demand from a [`KeySource`].
#[derive(Clone)]
pub struct KeyCache {
    inner: Arc<Inner>,
}

struct Inner {
    source: Box<dyn KeySource>,
    state: RwLock<CacheState>,
    refresh: tokio::sync::Mutex<()>,
    refresh_interval: Duration,
    max_key_age: Duration,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyCache")
            .field("source", &self.inner.source.describe())
            .field("refresh_interval", &self.inner.refresh_interval)
            .field("max_key_age", &self.inner.max_key_age)
            .finish()
    }
}

impl KeyCache {
    /// A cache over `source`, with [`DEFAULT_REFRESH_INTERVAL`] and [`DEFAULT_MAX_KEY_AGE`].
    pub fn new(source: impl KeySource) -> Self {
        Self::with_intervals(source, DEFAULT_REFRESH_INTERVAL, DEFAULT_MAX_KEY_AGE)
    }

    /// A cache over `source` that fetches at most once per `refresh_interval` for unknown
    /// kids, and again once its keys are older than `max_key_age`.
    pub fn with_intervals(
        source: impl KeySource,
        refresh_interval: Duration,
        max_key_age: Duration,
    ) -> Self {
        KeyCache {
            inner: Arc::new(Inner {
                source: Box::new(source),
                state: RwLock::new(CacheState::default()),
                refresh: tokio::sync::Mutex::new(()),
                refresh_interval,
                max_key_age: max_key_age.max(refresh_interval),
            }),
        }
    }

    /// Whether keys are loaded and not older than the maximum key age (what `/readyz`
    /// checks).
    pub fn has_keys(&self) -> bool {
        let state = self.read();
        !state.keys.is_empty()
            && state
                .fetched_at
                .is_some_and(|t| t.elapsed() <= self.inner.max_key_age)
    }

    /// How many times the key set was fetched (successfully or not).
    pub fn fetches(&self) -> u64 {
        self.read().fetches
    }

    /// Fetches the key set now (at start-up, to fail early), whatever the interval.
    pub async fn prefetch(&self) -> Result<usize, AuthError> {
        let _guard = self.inner.refresh.lock().await;
        self.fetch_now().await
    }

    /// The key for a token whose header names `kid` and `algorithm`, and the algorithm to
    /// verify it with.
    pub(crate) async fn key_for(
        &self,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Result<DecodingKey, AuthError> {
        let stale = {
            let state = self.read();
            state
                .fetched_at
                .is_none_or(|t| t.elapsed() >= self.inner.max_key_age)
        };
        if stale {
            self.refresh_if_due().await?;
        }
        if let Some(found) = self.lookup(kid, algorithm) {
            return found;
        }
        self.refresh_if_due().await?;
        self.lookup(kid, algorithm).unwrap_or_else(|| {
            Err(AuthError::UnknownKey(match kid {
                Some(kid) => format!("kid {kid}"),
                None => format!("no kid, and no single {algorithm:?} key"),
            }))
        })
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, CacheState> {
        self.inner
            .state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lookup(
        &self,
        kid: Option<&str>,
        algorithm: Algorithm,
    ) -> Option<Result<DecodingKey, AuthError>> {
        let state = self.read();
        let key = match kid {
            Some(kid) => state.keys.iter().find(|k| k.kid.as_deref() == Some(kid))?,
            None => {
                let mut fitting = state
                    .keys
                    .iter()
                    .filter(|k| k.algorithms.contains(&algorithm));
                let only = fitting.next()?;
                if fitting.next().is_some() {
                    return None;
                }
                only
            }
        };
        Some(if key.algorithms.contains(&algorithm) {
            Ok(key.key.clone())
        } else {
            Err(AuthError::UnsupportedAlgorithm(format!(
                "{algorithm:?} (the key {} is for {})",
                key.kid.as_deref().unwrap_or("without kid"),
                key.algorithms
                    .iter()
                    .map(|a| format!("{a:?}"))
                    .collect::<Vec<_>>()
                    .join("/")
            )))
        })
    }

    /// Fetches the set unless a fetch was attempted within the refresh interval. An error
    /// only when no key is known at all.
    async fn refresh_if_due(&self) -> Result<(), AuthError> {
        let _guard = self.inner.refresh.lock().await;
        let due = self
            .read()
            .last_attempt
            .is_none_or(|t| t.elapsed() >= self.inner.refresh_interval);
        if !due {
            return Ok(());
        }
        match self.fetch_now().await {
            Ok(_) => Ok(()),
            Err(err) if self.read().keys.is_empty() => Err(err),
            Err(err) => {
                tracing::warn!(reason = %err, "kept the cached signing keys: fetching them again failed");
                Ok(())
            }
        }
    }

    async fn fetch_now(&self) -> Result<usize, AuthError> {
        {
            let mut state = self
                .inner
                .state
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.last_attempt = Some(Instant::now());
            state.fetches += 1;
        }
        let set = self.inner.source.fetch().await?;
        let keys = usable_keys(&set);
        if keys.is_empty() {
            return Err(AuthError::KeysUnavailable(format!(
                "{} holds no signing key this server can use (RSA, EC P-256/P-384 or Ed25519)",
                self.inner.source.describe()
            )));
        }
        let count = keys.len();
        let mut state = self
            .inner
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.keys = keys;
        state.fetched_at = Some(Instant::now());
        tracing::debug!(keys = count, source = %self.inner.source.describe(), "fetched the signing keys");
        Ok(count)
    }
}

fn usable_keys(set: &JwkSet) -> Vec<CachedKey> {
    set.keys
        .iter()
        .filter_map(|jwk| {
            let algorithms = algorithms_of(jwk);
            if algorithms.is_empty() {
                return None;
            }
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some(CachedKey {
                kid: jwk.common.key_id.clone(),
                algorithms,
                key,
            })
        })
        .collect()
}

/// The algorithms a JWK may verify: its `alg` if given, otherwise those of its type.
fn algorithms_of(jwk: &Jwk) -> Vec<Algorithm> {
    if matches!(
        jwk.common.public_key_use,
        Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
    ) {
        return Vec::new();
    }
    let by_type: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => PROVIDER_ALGORITHMS
            .into_iter()
            .filter(|a| a.family() == AlgorithmFamily::Rsa)
            .collect(),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => Vec::new(),
        },
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            vec![Algorithm::EdDSA]
        }
        _ => Vec::new(),
    };
    match jwk.common.key_algorithm {
        None => by_type,
        Some(alg) => match Algorithm::from_str(&alg.to_string()) {
            Ok(alg) if by_type.contains(&alg) => vec![alg],
            _ => Vec::new(),
        },
    }
}

/// Parses a JWKS document (`{"keys": [...]}`) leniently: keys that do not parse (an
/// unknown type, an encryption key of a kind this crate does not model) are skipped rather
/// than failing the whole set. For a key set read from a file for
/// [`IdentityConfig::with_jwks`](super::IdentityConfig::with_jwks), too.
pub fn parse_key_set(body: &[u8]) -> Result<JwkSet, String> {
    #[derive(serde::Deserialize)]
    struct RawSet {
        keys: Vec<serde_json::Value>,
    }
    let raw: RawSet = serde_json::from_slice(body)
        .map_err(|e| format!("not a JWK set ({{\"keys\": [...]}}): {e}"))?;
    Ok(JwkSet {
        keys: raw
            .keys
            .into_iter()
            .filter_map(|k| serde_json::from_value(k).ok())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_set_with_unknown_keys_keeps_the_usable_ones() {
        let body = br#"{"keys": [
            {"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA", "kid": "hmac"},
            {"kty": "EC", "crv": "P-256", "kid": "ec-1", "use": "sig",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "crv": "P-256", "kid": "ec-enc", "use": "enc",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "weird", "kid": "w"}
        ]}"#;
        let set = parse_key_set(body).unwrap();
        let keys = usable_keys(&set);
        assert_eq!(keys.len(), 1, "only the EC signing key is usable");
        assert_eq!(keys[0].kid.as_deref(), Some("ec-1"));
        assert_eq!(keys[0].algorithms, vec![Algorithm::ES256]);
        assert!(parse_key_set(b"[]").unwrap_err().contains("not a JWK set"));
    }
}
