//! Verified tokens remembered for a while ([`TokenCache`]), so a client that sends the
//! same bearer token on every request has its signature and claims checked once.
//!
//! An entry is keyed by the token's exact text and lives at most the configured time
//! ([`DEFAULT_TOKEN_CACHE_TTL`]), never past the token's `exp` (without leeway) nor past
//! its maximum age; a token that fails verification is never remembered. The cache holds
//! at most its capacity of tokens: when full, expired entries are dropped, and if none
//! were, the whole cache is emptied (the next requests verify again).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::identity::Identity;
use super::jwt::TokenClaims;

/// How long a verified token is remembered unless configured: 60 s.
pub const DEFAULT_TOKEN_CACHE_TTL: Duration = Duration::from_secs(60);
/// How many verified tokens are remembered at most unless configured.
pub const DEFAULT_TOKEN_CACHE_CAPACITY: usize = 4096;

/// What verifying a token gave: its claims, and the caller when no resolver is involved
/// (with a [`PrincipalResolver`](super::PrincipalResolver) the caller is resolved on every
/// request, so a change of the user's roles in the ERP counts at once).
#[derive(Clone)]
pub(crate) struct Verified {
    pub claims: Arc<TokenClaims>,
    pub identity: Option<Identity>,
}

struct Entry {
    verified: Verified,
    until: SystemTime,
}

/// Verified tokens by their text, bounded in number and time.
pub(crate) struct TokenCache {
    ttl: Duration,
    capacity: usize,
    entries: Mutex<HashMap<Box<str>, Entry>>,
}

impl TokenCache {
    /// A cache keeping at most `capacity` tokens for at most `ttl` each; `ttl` zero or
    /// `capacity` zero keeps none.
    pub(crate) fn new(ttl: Duration, capacity: usize) -> TokenCache {
        TokenCache {
            ttl,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn enabled(&self) -> bool {
        !self.ttl.is_zero() && self.capacity > 0
    }

    /// What `token` was verified as, if it was and the entry has not expired.
    pub(crate) fn get(&self, token: &str) -> Option<Verified> {
        if !self.enabled() {
            return None;
        }
        let now = SystemTime::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(token) {
            Some(entry) if now < entry.until => Some(entry.verified.clone()),
            Some(_) => {
                entries.remove(token);
                None
            }
            None => None,
        }
    }

    /// Remembers that `token` verified as `verified`, until the earliest of now plus the
    /// cache's time, the token's `exp` and, with `max_age`, its `iat` plus `max_age`.
    pub(crate) fn put(&self, token: &str, verified: Verified, max_age: Option<Duration>) {
        if !self.enabled() {
            return;
        }
        let now = SystemTime::now();
        let claims = &verified.claims;
        let mut until = (now + self.ttl).min(UNIX_EPOCH + Duration::from_secs(claims.expires_at));
        if let (Some(max), Some(iat)) = (max_age, claims.issued_at) {
            until = until.min(UNIX_EPOCH + Duration::from_secs(iat) + max);
        }
        if until <= now {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity && !entries.contains_key(token) {
            entries.retain(|_, e| now < e.until);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(token.into(), Entry { verified, until });
    }

    /// How many tokens are remembered (expired ones included until they are dropped).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    fn claims(exp_in: i64, iat_ago: Option<u64>) -> Verified {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        Verified {
            claims: Arc::new(TokenClaims {
                issuer: "i".into(),
                subject: "7".into(),
                audience: vec!["a".into()],
                expires_at: now.saturating_add_signed(exp_in),
                issued_at: iat_ago.map(|ago| now - ago),
                not_before: None,
                scopes: Vec::new(),
                raw: Map::new(),
            }),
            identity: None,
        }
    }

    #[test]
    fn remembers_a_token_until_the_earliest_of_ttl_exp_and_max_age() {
        let cache = TokenCache::new(Duration::from_secs(60), 8);
        cache.put("t1", claims(600, None), None);
        assert!(cache.get("t1").is_some());
        assert!(cache.get("t2").is_none(), "another token is not known");
        // Expired already: never remembered.
        cache.put("old", claims(-1, None), None);
        assert!(cache.get("old").is_none());
        // Issued longer ago than the maximum age allows: not remembered.
        cache.put(
            "aged",
            claims(600, Some(120)),
            Some(Duration::from_secs(60)),
        );
        assert!(cache.get("aged").is_none());
        cache.put(
            "young",
            claims(600, Some(10)),
            Some(Duration::from_secs(60)),
        );
        assert!(cache.get("young").is_some());
    }

    #[test]
    fn an_entry_expires_with_the_cache_time() {
        let cache = TokenCache::new(Duration::from_millis(30), 8);
        cache.put("t", claims(600, None), None);
        assert!(cache.get("t").is_some());
        std::thread::sleep(Duration::from_millis(60));
        assert!(cache.get("t").is_none(), "expired after the cache's time");
        assert_eq!(cache.len(), 0, "an expired entry is dropped when met");
    }

    #[test]
    fn stays_within_its_capacity_and_can_be_turned_off() {
        let cache = TokenCache::new(Duration::from_secs(60), 3);
        for i in 0..10 {
            cache.put(&format!("t{i}"), claims(600, None), None);
            assert!(cache.len() <= 3, "{} entries", cache.len());
        }
        assert!(cache.get("t9").is_some(), "the newest token is kept");
        let off = TokenCache::new(Duration::ZERO, 3);
        off.put("t", claims(600, None), None);
        assert!(off.get("t").is_none());
        let none = TokenCache::new(Duration::from_secs(60), 0);
        none.put("t", claims(600, None), None);
        assert!(none.get("t").is_none());
    }
}
