//! Why a token (or the token configuration) was refused.

/// Why a token was refused, or why the server cannot check tokens.
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
    /// The token is signed with an algorithm this server does not accept for its key (an
    /// HS256 development token where an identity provider is configured, `none`, or an
    /// algorithm that does not fit the provider's key).
    #[error("the token is signed with {0}, which this server does not accept")]
    UnsupportedAlgorithm(String),
    /// The token's `kid` names no key of the identity provider, even after the key set
    /// was fetched again.
    #[error("the token names a signing key the identity provider does not publish: {0}")]
    UnknownKey(String),
    /// The identity provider's keys could not be fetched.
    #[error("the identity provider's keys could not be fetched: {0}")]
    KeysUnavailable(String),
    /// The token has expired (`exp` is past, beyond the leeway).
    #[error("the token has expired")]
    Expired,
    /// The token is not valid yet (`nbf` is in the future, beyond the leeway).
    #[error("the token is not valid yet (its `nbf` is in the future)")]
    NotYetValid,
    /// The token lives (or has lived) longer than the configured maximum.
    #[error("the token is older than the {max_secs} s this server accepts")]
    TooOld {
        /// The configured maximum age, in seconds.
        max_secs: u64,
    },
    /// The token was issued for another server: its `aud` claim does not name this
    /// server's resource URL.
    #[error(
        "the token was issued for another audience: expected {expected}, the token names {found}"
    )]
    WrongAudience {
        /// This server's audience (its MCP URL).
        expected: String,
        /// The token's `aud` claim (several values joined with `, `).
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
    /// The token's subject is not a user of this application.
    #[error("the token's subject {0} is not a user of this application")]
    UnknownSubject(String),
    /// A required claim is missing, has the wrong type, or contradicts another.
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
            AuthError::UnsupportedAlgorithm(alg) => format!(
                "The token is signed with {}, which this server does not accept",
                header_safe(alg)
            ),
            AuthError::UnknownKey(_) => {
                "The token names a signing key the identity provider does not publish".into()
            }
            AuthError::KeysUnavailable(_) => "The server cannot fetch the signing keys".into(),
            AuthError::Expired => "The token has expired".into(),
            AuthError::NotYetValid => "The token is not valid yet".into(),
            AuthError::TooOld { max_secs } => {
                format!("The token is older than the {max_secs} s this server accepts")
            }
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
            AuthError::UnknownSubject(_) => "The token's subject is not a user here".into(),
            AuthError::InvalidClaims(_) => "The token claims are invalid".into(),
            AuthError::Config(_) => "The server cannot check tokens".into(),
        }
    }

    /// Whether the server, not the token, is at fault (the keys could not be fetched, the
    /// configuration is unusable): answered `503`-like by callers that distinguish it.
    pub fn is_server_side(&self) -> bool {
        matches!(self, AuthError::KeysUnavailable(_) | AuthError::Config(_))
    }
}

/// A claim as it may appear inside a quoted header parameter: visible ASCII without `"`
/// or `\`, at most 120 characters.
pub(crate) fn header_safe(value: &str) -> String {
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
