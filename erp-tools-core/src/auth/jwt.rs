//! Checking a signed JWT against what this server expects: the signature (with a key and
//! algorithm chosen by the caller, never by the token), `exp` and `nbf` with a small
//! leeway, `iss` exactly, `aud` naming this server's resource, and an optional maximum
//! age. One path for development and provider tokens alike.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::error::AuthError;

/// Most clock difference tolerated when checking `exp` and `nbf`, in seconds, unless
/// configured otherwise.
pub const CLOCK_SKEW_SECS: u64 = 5;

/// What a token must say to be accepted here.
#[derive(Clone, Debug)]
pub(crate) struct Expectations<'a> {
    /// The exact `iss`.
    pub issuer: &'a str,
    /// A value `aud` must contain.
    pub audience: &'a str,
    /// Leeway for `exp` and `nbf`.
    pub leeway: Duration,
    /// Longest accepted lifetime (`exp - iat`) and age (`now - iat`).
    pub max_age: Option<Duration>,
}

/// The verified claims of an access token: the registered claims read out, and every
/// claim as the provider sent it for a [`PrincipalResolver`](super::PrincipalResolver).
/// A `run` claim in them is a valid run id.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenClaims {
    /// `iss`: who issued the token (checked against the configured issuer).
    pub issuer: String,
    /// `sub`: whom the token is about; names the ERP user.
    pub subject: String,
    /// `aud`: the resources the token is for (one of them is this server).
    pub audience: Vec<String>,
    /// `exp`, seconds since the Unix epoch.
    pub expires_at: u64,
    /// `iat`, seconds since the Unix epoch, if present.
    pub issued_at: Option<u64>,
    /// `nbf`, seconds since the Unix epoch, if present.
    pub not_before: Option<u64>,
    /// The granted scopes: `scope` (space-separated, RFC 8693 / RFC 9068) and `scp` (a
    /// string or an array, as Entra ID and Okta send it), sorted and deduplicated.
    pub scopes: Vec<String>,
    /// Every claim of the token.
    pub raw: Map<String, Value>,
}

impl TokenClaims {
    /// A claim by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.raw.get(name)
    }

    /// A string claim by name.
    pub fn str_claim(&self, name: &str) -> Option<&str> {
        self.raw.get(name).and_then(Value::as_str)
    }

    /// When the token expires.
    pub fn expiry(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.expires_at)
    }

    fn from_raw(raw: Map<String, Value>) -> Result<Self, AuthError> {
        let string = |name: &str| -> Result<String, AuthError> {
            match raw.get(name) {
                Some(Value::String(s)) => Ok(s.clone()),
                None => Ok(String::new()),
                Some(_) => Err(AuthError::InvalidClaims(format!(
                    "the `{name}` claim must be a string"
                ))),
            }
        };
        let time = |name: &str| -> Result<Option<u64>, AuthError> {
            match raw.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
                    .map(Some)
                    .ok_or_else(|| {
                        AuthError::InvalidClaims(format!(
                            "the `{name}` claim must be a number of seconds"
                        ))
                    }),
            }
        };
        let audience = match raw.get("aud") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    AuthError::InvalidClaims("the `aud` claim must hold strings".into())
                })?,
            Some(_) => {
                return Err(AuthError::InvalidClaims(
                    "the `aud` claim must be a string or an array of strings".into(),
                ));
            }
        };
        let mut scopes = Vec::new();
        for name in ["scope", "scp"] {
            match raw.get(name) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => {
                    scopes.extend(s.split_ascii_whitespace().map(str::to_string))
                }
                Some(Value::Array(items)) => {
                    for item in items {
                        let s = item.as_str().ok_or_else(|| {
                            AuthError::InvalidClaims(format!(
                                "the `{name}` claim must hold strings"
                            ))
                        })?;
                        scopes.push(s.to_string());
                    }
                }
                Some(_) => {
                    return Err(AuthError::InvalidClaims(format!(
                        "the `{name}` claim must be a string or an array of strings"
                    )));
                }
            }
        }
        scopes.sort();
        scopes.dedup();
        check_run_claim(raw.get("run"))?;
        Ok(TokenClaims {
            issuer: string("iss")?,
            subject: string("sub")?,
            audience,
            expires_at: time("exp")?
                .ok_or_else(|| AuthError::InvalidClaims("the `exp` claim is missing".into()))?,
            issued_at: time("iat")?,
            not_before: time("nbf")?,
            scopes,
            raw,
        })
    }
}

/// A `run` claim, when present, must be a valid run id (a string of 1 to 128 visible
/// ASCII characters): an empty, oversized or non-string one makes the token invalid.
/// Checked once, where every verified token's claims are read, so no way of turning a
/// token into a principal can skip it.
fn check_run_claim(run: Option<&Value>) -> Result<(), AuthError> {
    match run {
        None => Ok(()),
        Some(Value::String(run)) if crate::tool::context::valid_run_id(run) => Ok(()),
        Some(Value::String(_)) => Err(AuthError::InvalidClaims(format!(
            "the `run` claim must be 1 to {} visible ASCII characters",
            crate::tool::context::MAX_RUN_ID_LEN
        ))),
        Some(_) => Err(AuthError::InvalidClaims(
            "the `run` claim must be a string".into(),
        )),
    }
}

/// Verifies `token`'s signature with `key` and `algorithm` (both chosen by the server)
/// and its claims against `expect`.
pub(crate) fn validate(
    token: &str,
    key: &DecodingKey,
    algorithm: Algorithm,
    expect: &Expectations<'_>,
) -> Result<TokenClaims, AuthError> {
    let mut v = Validation::new(algorithm);
    v.leeway = expect.leeway.as_secs();
    v.validate_exp = true;
    v.validate_nbf = true;
    // `iss` and `aud` are checked below, to say what the token names.
    v.validate_aud = false;
    v.iss = None;
    v.set_required_spec_claims(&["exp", "sub"]);
    let data =
        jsonwebtoken::decode::<Map<String, Value>>(token, key, &v).map_err(|e| match e.kind() {
            ErrorKind::InvalidSignature => AuthError::BadSignature,
            ErrorKind::InvalidAlgorithm => {
                AuthError::UnsupportedAlgorithm(format!("an algorithm other than {algorithm:?}"))
            }
            ErrorKind::ExpiredSignature => AuthError::Expired,
            ErrorKind::ImmatureSignature => AuthError::NotYetValid,
            ErrorKind::MissingRequiredClaim(c) => {
                AuthError::InvalidClaims(format!("the `{c}` claim is missing"))
            }
            ErrorKind::InvalidClaimFormat(c) => {
                AuthError::InvalidClaims(format!("the `{c}` claim has the wrong type"))
            }
            ErrorKind::Json(err) => AuthError::InvalidClaims(err.to_string()),
            _ => AuthError::Malformed,
        })?;
    let claims = TokenClaims::from_raw(data.claims)?;
    if claims.issuer != expect.issuer {
        return Err(AuthError::WrongIssuer {
            expected: expect.issuer.to_string(),
            found: claims.issuer.clone(),
        });
    }
    if !claims.audience.iter().any(|a| a == expect.audience) {
        return Err(AuthError::WrongAudience {
            expected: expect.audience.to_string(),
            found: claims.audience.join(", "),
        });
    }
    if claims.subject.trim().is_empty() {
        return Err(AuthError::InvalidClaims(
            "the `sub` claim must not be empty".into(),
        ));
    }
    if let Some(max) = expect.max_age {
        let max_secs = max.as_secs();
        let iat = claims.issued_at.ok_or_else(|| {
            AuthError::InvalidClaims(
                "the `iat` claim is missing; this server limits the age of tokens".into(),
            )
        })?;
        let leeway = expect.leeway.as_secs();
        let lifetime = claims.expires_at.saturating_sub(iat);
        let age = now_secs().saturating_sub(iat);
        if lifetime > max_secs || age > max_secs.saturating_add(leeway) {
            return Err(AuthError::TooOld { max_secs });
        }
    }
    Ok(claims)
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
