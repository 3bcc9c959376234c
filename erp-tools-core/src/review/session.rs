//! Sessions of signed-in reviewers: an opaque random id in an `HttpOnly`,
//! `SameSite=Strict` cookie; the principal and a CSRF token kept in the database
//! (`erp_review_sessions`, keyed by the id's SHA-256), so every replica of one database
//! knows every session and signing out ends it on all of them. A session expires with the
//! token the reviewer signed in with.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;
use sha2::{Digest, Sha256};

use crate::store::Database;
use crate::store::review_sessions::{self as sql, SessionRow};
use crate::tool::context::Principal;

/// Cookie holding the session id.
pub(super) const SESSION_COOKIE: &str = "erp_review_session";
/// Cookie holding the sign-in form's CSRF token (before there is a session).
pub(super) const SIGN_IN_COOKIE: &str = "erp_review_sign_in";
/// How long a sign-in form stays valid, in seconds.
pub(super) const SIGN_IN_TTL_SECS: u64 = 15 * 60;

/// One signed-in reviewer.
#[derive(Clone, Debug)]
pub(super) struct Session {
    pub principal: Principal,
    pub csrf: String,
    /// A one-time message for the next page (the result of a decision).
    pub notice: Option<String>,
}

/// The console's sessions, in the database of its approval queue.
pub(super) struct Sessions {
    db: Database,
}

impl Sessions {
    pub(super) fn new(db: Database) -> Self {
        Sessions { db }
    }

    /// Starts a session for `principal` until `expires`; returns its id. `None` when no
    /// random id could be drawn or the database refused the row (logged).
    pub(super) async fn start(&self, principal: Principal, expires: u64) -> Option<String> {
        let id = random_token()?;
        let row = SessionRow {
            principal: serde_json::to_string(&principal).ok()?,
            csrf: random_token()?,
            expires_at: secs(expires),
            notice: None,
        };
        match sql::insert(self.db.pool(), &id_hash(&id), &row, secs(now_secs())).await {
            Ok(()) => Some(id),
            Err(e) => {
                tracing::error!(error = %e, "review console: could not store a session");
                None
            }
        }
    }

    /// The live session named by the request's cookie, taking its one-time notice.
    pub(super) async fn current(&self, headers: &HeaderMap) -> Option<Session> {
        let hash = id_hash(&cookie(headers, SESSION_COOKIE)?);
        let row = match sql::load(self.db.pool(), &hash, secs(now_secs())).await {
            Ok(row) => row?,
            Err(e) => {
                tracing::error!(error = %e, "review console: could not read a session");
                return None;
            }
        };
        let principal = serde_json::from_str(&row.principal).ok()?;
        let notice = match row.notice {
            Some(n) => match sql::take_notice(self.db.pool(), &hash, &n).await {
                Ok(true) => Some(n),
                _ => None,
            },
            None => None,
        };
        Some(Session {
            principal,
            csrf: row.csrf,
            notice,
        })
    }

    /// Leaves `notice` for the next page of the request's session.
    pub(super) async fn notify(&self, headers: &HeaderMap, notice: String) {
        if let Some(id) = cookie(headers, SESSION_COOKIE)
            && let Err(e) = sql::set_notice(self.db.pool(), &id_hash(&id), &notice).await
        {
            tracing::warn!(error = %e, "review console: could not keep a notice");
        }
    }

    /// Ends the request's session, on every replica.
    pub(super) async fn end(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, SESSION_COOKIE)
            && let Err(e) = sql::delete(self.db.pool(), &id_hash(&id)).await
        {
            tracing::error!(error = %e, "review console: could not end a session");
        }
    }
}

/// The stored key of a session id: its SHA-256, hex.
fn id_hash(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// Seconds as the database stores them.
fn secs(s: u64) -> i64 {
    i64::try_from(s).unwrap_or(i64::MAX)
}

/// 32 random bytes, hex: a session id or a CSRF token.
pub(super) fn random_token() -> Option<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).ok()?;
    Some(hex::encode(bytes))
}

/// Compares two secrets in time independent of where they differ.
pub(super) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The value of cookie `name` in the request.
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, scoped to `path`, for `max_age`
/// seconds (0 deletes it).
pub(super) fn set_cookie(
    name: &str,
    value: &str,
    path: &str,
    max_age: u64,
    secure: bool,
) -> String {
    let path = if path.is_empty() { "/" } else { path };
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_exact_name() {
        let mut h = HeaderMap::new();
        h.insert(
            axum::http::header::COOKIE,
            "other=1; erp_review_session_x=2; erp_review_session=abc"
                .parse()
                .unwrap(),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&h, SIGN_IN_COOKIE), None);
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abcd", "abcd"));
        assert!(!same_secret("abcd", "abce"));
        assert!(!same_secret("abcd", "abc"));
        assert!(!same_secret("", "a"));
    }

    #[test]
    fn session_cookie_is_http_only_and_strict() {
        let c = set_cookie(SESSION_COOKIE, "v", "/review", 60, true);
        assert_eq!(
            c,
            "erp_review_session=v; Path=/review; Max-Age=60; HttpOnly; SameSite=Strict; Secure"
        );
    }

    #[tokio::test]
    async fn sessions_live_in_the_database() {
        let dir = std::env::temp_dir().join(format!("erp-review-sessions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("s.db").display());
        let db = Database::open(&url).await.unwrap();
        let p = Principal::builder("u", 1, "B").build();
        let with = |id: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                axum::http::header::COOKIE,
                format!("{SESSION_COOKIE}={id}").parse().unwrap(),
            );
            h
        };
        let a = Sessions::new(db.clone());
        let live = a.start(p.clone(), now_secs() + 60).await.unwrap();
        let dead = a.start(p.clone(), now_secs() - 1).await.unwrap();
        // Another console on the same database (another replica) knows the session.
        let b = Sessions::new(db.clone());
        let seen = b
            .current(&with(&live))
            .await
            .expect("the session is shared");
        assert_eq!(seen.principal, p);
        assert!(b.current(&with(&dead)).await.is_none());
        assert!(b.current(&with("forged")).await.is_none());
        // A notice is shown once, whichever console reads it.
        a.notify(&with(&live), "decided".into()).await;
        assert_eq!(
            b.current(&with(&live)).await.unwrap().notice.as_deref(),
            Some("decided")
        );
        assert_eq!(a.current(&with(&live)).await.unwrap().notice, None);
        // The cookie's value is not what is stored.
        let stored: Vec<String> = sqlx::query_scalar("SELECT id_hash FROM erp_review_sessions")
            .fetch_all(db.pool())
            .await
            .unwrap();
        assert!(!stored.contains(&live));
        // Signing out on one ends it on the other.
        b.end(&with(&live)).await;
        assert!(a.current(&with(&live)).await.is_none());
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
