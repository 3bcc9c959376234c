//! A fake OpenID provider on 127.0.0.1 for the identity tests: its discovery document
//! (OpenID Connect and/or RFC 8414), a JWKS that can be rotated and counts its fetches, and
//! tokens signed with its RSA, EC P-256 and Ed25519 keys (`tests/keys/`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use erp_tools_core::auth::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A signing key of the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// RSA 2048, `kid` rsa-1.
    Rsa1,
    /// RSA 2048, `kid` rsa-2 (the rotated-in key).
    Rsa2,
    /// EC P-256, `kid` ec-1.
    Ec1,
    /// Ed25519, `kid` ed-1.
    Ed1,
}

impl Key {
    /// The key's `kid`.
    pub fn kid(self) -> &'static str {
        match self {
            Key::Rsa1 => "rsa-1",
            Key::Rsa2 => "rsa-2",
            Key::Ec1 => "ec-1",
            Key::Ed1 => "ed-1",
        }
    }

    /// The private key.
    pub fn encoding_key(self) -> EncodingKey {
        let pem: &[u8] = match self {
            Key::Rsa1 => include_bytes!("../keys/rsa-1.pem"),
            Key::Rsa2 => include_bytes!("../keys/rsa-2.pem"),
            Key::Ec1 => include_bytes!("../keys/ec-1.pem"),
            Key::Ed1 => include_bytes!("../keys/ed-1.pem"),
        };
        match self {
            Key::Rsa1 | Key::Rsa2 => EncodingKey::from_rsa_pem(pem),
            Key::Ec1 => EncodingKey::from_ec_pem(pem),
            Key::Ed1 => EncodingKey::from_ed_pem(pem),
        }
        .expect("a test key")
    }

    /// The algorithm the key's JWK names.
    pub fn algorithm(self) -> Algorithm {
        match self {
            Key::Rsa1 | Key::Rsa2 => Algorithm::RS256,
            Key::Ec1 => Algorithm::ES256,
            Key::Ed1 => Algorithm::EdDSA,
        }
    }

    /// The public JWK, with `kid`, `use: sig` and `alg` when `with_alg`.
    pub fn jwk(self, with_alg: bool) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.encoding_key(), self.algorithm())
            .expect("a public JWK of a test key");
        jwk.common.key_id = Some(self.kid().to_string());
        jwk.common.public_key_use = Some(jsonwebtoken::jwk::PublicKeyUse::Signature);
        if !with_alg {
            jwk.common.key_algorithm = None;
        }
        jwk
    }
}

/// Which metadata documents the provider publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metadata {
    /// `/.well-known/openid-configuration`.
    OpenId,
    /// Only RFC 8414 `/.well-known/oauth-authorization-server`.
    OAuthOnly,
    /// An OpenID document naming another issuer.
    WrongIssuer,
}

struct ProviderState {
    issuer: String,
    metadata: Metadata,
    keys: Mutex<JwkSet>,
    fetches: AtomicUsize,
}

/// The fake provider, serving until dropped.
pub struct Provider {
    /// Its issuer URL (`http://127.0.0.1:<port>`).
    pub issuer: String,
    state: Arc<ProviderState>,
    stop: CancellationToken,
}

impl Provider {
    /// A provider publishing `keys` (JWKs with `alg`) and `metadata`.
    pub async fn start(keys: &[Key], metadata: Metadata) -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let issuer = format!("http://{addr}");
        let state = Arc::new(ProviderState {
            issuer: issuer.clone(),
            metadata,
            keys: Mutex::new(JwkSet {
                keys: keys.iter().map(|k| k.jwk(true)).collect(),
            }),
            fetches: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(openid))
            .route("/.well-known/oauth-authorization-server", get(oauth))
            .route("/jwks", get(jwks))
            .with_state(state.clone());
        let stop = CancellationToken::new();
        let done = stop.clone();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { done.cancelled().await })
                .await
        });
        Provider {
            issuer,
            state,
            stop,
        }
    }

    /// Replaces the published keys (key rotation), as JWKs with or without `alg`.
    pub fn publish(&self, keys: &[Key], with_alg: bool) {
        *self.state.keys.lock().unwrap() = JwkSet {
            keys: keys.iter().map(|k| k.jwk(with_alg)).collect(),
        };
    }

    /// How many times the JWKS was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.state.fetches.load(Ordering::SeqCst)
    }

    /// Its JWKS URL.
    pub fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    /// Standard claims of a token from this provider for `sub` and `aud`, valid for 5
    /// minutes, with `scope`.
    pub fn claims(&self, sub: &str, aud: &str, scope: &str) -> Value {
        let now = now();
        json!({
            "iss": self.issuer, "sub": sub, "aud": aud, "scope": scope,
            "iat": now, "exp": now + 300, "client_id": "erp-agent",
        })
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Signs `claims` with `key`, the header naming `alg` and `kid`.
pub fn sign(key: Key, alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, &key.encoding_key()).expect("signing a test token")
}

/// Signs `claims` with `key` as a provider does: its own algorithm and `kid`.
pub fn sign_as(key: Key, claims: &Value) -> String {
    sign(key, key.algorithm(), Some(key.kid()), claims)
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A short refresh interval for tests that rotate keys.
pub const TEST_REFRESH: Duration = Duration::from_millis(1000);

async fn openid(State(s): State<Arc<ProviderState>>) -> Response {
    match s.metadata {
        Metadata::OpenId => metadata(&s, &s.issuer),
        Metadata::WrongIssuer => metadata(&s, "https://someone-else.example"),
        Metadata::OAuthOnly => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn oauth(State(s): State<Arc<ProviderState>>) -> Response {
    match s.metadata {
        Metadata::OAuthOnly => metadata(&s, &s.issuer),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

fn metadata(s: &ProviderState, issuer: &str) -> Response {
    axum::Json(json!({
        "issuer": issuer,
        "jwks_uri": format!("{}/jwks", s.issuer),
        "token_endpoint": format!("{}/token", s.issuer),
    }))
    .into_response()
}

async fn jwks(State(s): State<Arc<ProviderState>>) -> Response {
    s.fetches.fetch_add(1, Ordering::SeqCst);
    let keys = s.keys.lock().unwrap().clone();
    axum::Json(keys).into_response()
}
