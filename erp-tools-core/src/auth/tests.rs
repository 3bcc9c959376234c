use std::time::Duration;

use super::dev::DEV_SIGNING_KEY;
use super::jwt::now_secs;
use super::*;
use crate::Principal;

fn config() -> TokenConfig {
    TokenConfig::new(vec![7u8; 32], "https://id.test", "https://erp.test/mcp").unwrap()
}

fn buyer() -> Principal {
    Principal::builder("u-1", 3, "SBY-01")
        .role("buyer")
        .scopes(["purchasing:read", "purchasing:draft"])
        .agent_run_id("run-9")
        .model("m-1")
        .prompt_version("p-2")
        .build()
}

fn claims(c: &TokenConfig) -> Claims {
    Claims::for_principal(c, &buyer(), Duration::from_secs(60))
}

#[test]
fn round_trip_keeps_every_field() {
    let c = config();
    let token = mint(&c, &buyer(), Duration::from_secs(60));
    assert_eq!(verify(&c, &token).unwrap(), buyer());
    let claims = verify_claims(&c, &token).unwrap();
    assert_eq!(claims.scope, "purchasing:draft purchasing:read");
    assert_eq!(claims.agent_run_id.as_deref(), Some("run-9"));
    let identity = verify_identity(&c, &token).unwrap();
    let expires = identity.expires_at.unwrap();
    let secs = expires
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(secs, claims.exp);
}

#[test]
fn refuses_bad_tokens_with_the_right_reason() {
    let c = config();
    let other_key =
        TokenConfig::new(vec![8u8; 32], "https://id.test", "https://erp.test/mcp").unwrap();
    let forged = mint(&other_key, &buyer(), Duration::from_secs(60));
    assert_eq!(verify(&c, &forged), Err(AuthError::BadSignature));

    let mut expired = claims(&c);
    expired.exp = now_secs() - CLOCK_SKEW_SECS - 30;
    assert_eq!(verify(&c, &encode(&c, &expired)), Err(AuthError::Expired));

    let mut wrong_aud = claims(&c);
    wrong_aud.aud = "https://other.test/mcp".into();
    let err = verify(&c, &encode(&c, &wrong_aud)).unwrap_err();
    assert_eq!(
        err,
        AuthError::WrongAudience {
            expected: "https://erp.test/mcp".into(),
            found: "https://other.test/mcp".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "the token was issued for another audience: expected https://erp.test/mcp, the \
         token names https://other.test/mcp"
    );
    assert_eq!(
        err.description(),
        "The token was issued for another resource: expected https://erp.test/mcp, the \
         token names https://other.test/mcp"
    );
    // A claim cannot break out of the quoted header parameter.
    wrong_aud.aud = "x\", error=\"forged\\".into();
    let err = verify(&c, &encode(&c, &wrong_aud)).unwrap_err();
    assert!(
        err.description()
            .ends_with("the token names x,error=forged"),
        "{err:?}"
    );

    let mut wrong_iss = claims(&c);
    wrong_iss.iss = "https://evil.test".into();
    assert_eq!(
        verify(&c, &encode(&c, &wrong_iss)),
        Err(AuthError::WrongIssuer {
            expected: "https://id.test".into(),
            found: "https://evil.test".into()
        })
    );

    for run in ["r".repeat(300 * 1024), "run é".to_string(), String::new()] {
        let mut with_run = claims(&c);
        with_run.agent_run_id = Some(run);
        let err = verify(&c, &encode(&c, &with_run)).unwrap_err();
        assert!(err.to_string().contains("`run` claim"), "{err}");
    }

    assert_eq!(verify(&c, "not.a.jwt"), Err(AuthError::Malformed));
    assert_eq!(verify(&c, ""), Err(AuthError::Malformed));
}

#[test]
fn a_token_not_valid_yet_is_not_called_expired() {
    let c = config();
    let mut early = claims(&c);
    early.nbf = Some(now_secs() + 600);
    let err = verify(&c, &encode(&c, &early)).unwrap_err();
    assert_eq!(err, AuthError::NotYetValid);
    assert!(err.to_string().contains("not valid yet"), "{err}");
    assert!(!err.to_string().contains("expired"), "{err}");
    // Within the leeway, a clock a little ahead is tolerated.
    early.nbf = Some(now_secs() + CLOCK_SKEW_SECS - 2);
    assert!(verify(&c, &encode(&c, &early)).is_ok());
}

#[test]
fn the_maximum_age_refuses_long_lived_and_old_tokens() {
    let c = config().with_max_age(Duration::from_secs(3600));
    let fresh = mint(&c, &buyer(), Duration::from_secs(600));
    assert!(verify(&c, &fresh).is_ok());
    let long_lived = mint(&c, &buyer(), Duration::from_secs(7 * 24 * 3600));
    assert_eq!(
        verify(&c, &long_lived),
        Err(AuthError::TooOld { max_secs: 3600 })
    );
    let mut old = claims(&c);
    old.iat = now_secs() - 2 * 3600;
    old.exp = now_secs() + 60;
    let err = verify(&c, &encode(&c, &old)).unwrap_err();
    assert_eq!(err, AuthError::TooOld { max_secs: 3600 });
    assert_eq!(
        err.to_string(),
        "the token is older than the 3600 s this server accepts"
    );
}

#[test]
fn the_branch_code_must_be_the_code_of_the_branch_id() {
    let c = config().with_branches([(3, "SBY-01"), (4, "JKT-01")]);
    assert!(verify(&c, &mint(&c, &buyer(), Duration::from_secs(60))).is_ok());
    let mut mixed = claims(&c);
    mixed.branch_code = "JKT-01".into();
    let err = verify(&c, &encode(&c, &mixed)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the token claims are invalid: `branch_code` JKT-01 is not the code of `branch_id` 3 (SBY-01)"
    );
    let mut unknown = claims(&c);
    unknown.branch_id = 99;
    let err = verify(&c, &encode(&c, &unknown)).unwrap_err();
    assert!(err.to_string().contains("names no branch"), "{err}");
}

#[test]
fn refuses_short_and_published_keys_and_redacts_the_key() {
    let err = TokenConfig::new(b"short".to_vec(), "i", "a").unwrap_err();
    assert!(err.to_string().contains("at least 32"), "{err}");
    let err = TokenConfig::new(DEV_SIGNING_KEY.to_vec(), "i", "a").unwrap_err();
    assert!(
        err.to_string().contains("published development key"),
        "{err}"
    );
    let dbg = format!("{:?}", TokenConfig::development());
    assert!(!dbg.contains("DEVELOPMENT signing"), "{dbg}");
    assert!(TokenConfig::development().is_development());
}

#[test]
fn effective_scopes_are_the_intersection() {
    let token: Vec<String> = ["purchasing:draft", "purchasing:read", "inventory:read"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        effective_scopes(&token, ["inventory:read"]),
        ["inventory:read"]
    );
    assert!(effective_scopes(&token, []).is_empty());
    assert!(effective_scopes(&[], ["inventory:read"]).is_empty());
}

/// Counts the callers it resolves; resolves everyone as the buyer.
struct CountingResolver(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl PrincipalResolver for CountingResolver {
    fn resolve<'a>(
        &'a self,
        _claims: &'a TokenClaims,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Ok(buyer()) })
    }
}

#[tokio::test]
async fn a_remembered_token_gives_the_same_caller_and_a_bad_one_is_never_remembered() {
    let c = config();
    for auth in [
        Authenticator::shared_secret(c.clone()),
        Authenticator::from_config(
            IdentityConfig::shared_secret(c.clone()).with_token_cache(Duration::ZERO, 0),
        )
        .await
        .unwrap(),
    ] {
        let token = mint(&c, &buyer(), Duration::from_secs(60));
        let first = auth.authenticate(&token).await.unwrap();
        assert_eq!(first.principal, buyer());
        assert_eq!(auth.authenticate(&token).await.unwrap(), first);
        assert_eq!(auth.verify_claims(&token).await.unwrap().subject, "u-1");
        // A forged token (another key), and the good token with one byte changed: refused
        // every time, before and after the good one was remembered.
        let other = TokenConfig::new(vec![8u8; 32], "https://id.test", "https://erp.test/mcp");
        let forged = mint(&other.unwrap(), &buyer(), Duration::from_secs(60));
        // One character in the middle of the signature changed.
        let at = token.len() - 10;
        let swapped = if &token[at..=at] == "A" { "B" } else { "A" };
        let tampered = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);
        for bad in [&forged, &tampered] {
            for _ in 0..2 {
                assert!(auth.authenticate(bad).await.is_err(), "{bad} accepted");
            }
        }
    }
}

#[tokio::test]
async fn a_resolver_resolves_the_caller_of_a_remembered_token_every_time() {
    let c = config();
    let resolved = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // A cache filled before the resolver was added is not used with it.
    let plain = Authenticator::shared_secret(c.clone());
    let token = mint(&c, &buyer(), Duration::from_secs(60));
    plain.authenticate(&token).await.unwrap();
    let auth = plain.with_resolver(CountingResolver(resolved.clone()));
    for _ in 0..3 {
        assert_eq!(auth.authenticate(&token).await.unwrap().principal, buyer());
    }
    assert_eq!(resolved.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[test]
fn the_token_cache_is_configured_in_code_and_from_the_environment() {
    let default = IdentityConfig::development("http://127.0.0.1:1/mcp");
    assert_eq!(
        default.token_cache(),
        (DEFAULT_TOKEN_CACHE_TTL, DEFAULT_TOKEN_CACHE_CAPACITY)
    );
    let env = |secs: &'static str| {
        move |name: &str| (name == "ERP_TOOLS_TOKEN_CACHE_SECS").then(|| secs.to_string())
    };
    let off = IdentityConfig::from_lookup(env("0")).unwrap();
    assert_eq!(off.token_cache().0, Duration::ZERO);
    let err = IdentityConfig::from_lookup(env("soon")).unwrap_err();
    assert!(
        err.to_string().contains("ERP_TOOLS_TOKEN_CACHE_SECS"),
        "{err}"
    );
}
