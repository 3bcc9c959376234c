//! Sessions of signed-in reviewers: an opaque random id in an `HttpOnly`,
//! `SameSite=Strict` cookie, the principal and a CSRF token kept server-side, expiring
//! with the token the reviewer signed in with.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;

use crate::tool::context::Principal;

/// Cookie holding the session id.
pub(super) const SESSION_COOKIE: &str = "erp_review_session";
/// Cookie holding the sign-in form's CSRF token (before there is a session).
pub(super) const SIGN_IN_COOKIE: &str = "erp_review_sign_in";
/// How long a sign-in form stays valid, in seconds.
pub(super) const SIGN_IN_TTL_SECS: u64 = 15 * 60;
/// Most sessions kept at once; expired ones are dropped first.
const MAX_SESSIONS: usize = 10_000;

/// One signed-in reviewer.
#[derive(Clone, Debug)]
pub(super) struct Session {
    pub principal: Principal,
    /// The token's expiry, seconds since the Unix epoch.
    pub expires: u64,
    pub csrf: String,
    /// A one-time message for the next page (the result of a decision).
    pub notice: Option<String>,
}

/// Sessions in this process's memory.
#[derive(Default)]
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// Starts a session for `principal` until `expires`; returns its id.
    pub(super) fn start(&self, principal: Principal, expires: u64) -> Option<String> {
        let id = random_token()?;
        let csrf = random_token()?;
        let mut map = self.map.lock().ok()?;
        let now = now_secs();
        if map.len() >= MAX_SESSIONS {
            map.retain(|_, s| s.expires > now);
        }
        if map.len() >= MAX_SESSIONS {
            // Still full of live sessions: drop the one closest to expiry.
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        map.insert(
            id.clone(),
            Session {
                principal,
                expires,
                csrf,
                notice: None,
            },
        );
        Some(id)
    }

    /// The live session named by the request's cookie, taking its one-time notice.
    pub(super) fn current(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let mut map = self.map.lock().ok()?;
        let now = now_secs();
        match map.get_mut(&id) {
            Some(s) if s.expires > now => {
                let current = s.clone();
                s.notice = None;
                Some(current)
            }
            Some(_) => {
                map.remove(&id);
                None
            }
            None => None,
        }
    }

    /// Leaves `notice` for the next page of the request's session.
    pub(super) fn notify(&self, headers: &HeaderMap, notice: String) {
        if let (Some(id), Ok(mut map)) = (cookie(headers, SESSION_COOKIE), self.map.lock())
            && let Some(s) = map.get_mut(&id)
        {
            s.notice = Some(notice);
        }
    }

    /// Ends the request's session.
    pub(super) fn end(&self, headers: &HeaderMap) {
        if let (Some(id), Ok(mut map)) = (cookie(headers, SESSION_COOKIE), self.map.lock()) {
            map.remove(&id);
        }
    }
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

    #[test]
    fn expired_sessions_are_not_found() {
        let sessions = Sessions::default();
        let p = Principal::builder("u", 1, "B").build();
        let live = sessions.start(p.clone(), now_secs() + 60).unwrap();
        let dead = sessions.start(p, now_secs() - 1).unwrap();
        let with = |id: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                axum::http::header::COOKIE,
                format!("{SESSION_COOKIE}={id}").parse().unwrap(),
            );
            h
        };
        assert!(sessions.current(&with(&live)).is_some());
        assert!(sessions.current(&with(&dead)).is_none());
        assert!(sessions.current(&with("forged")).is_none());
    }
}
