//! Tokens from an identity provider (a fake OpenID provider on 127.0.0.1): RS256, PS256,
//! ES256 and EdDSA JWTs verified against its discovered JWKS; the algorithm taken from the
//! key; keys cached by `kid` and fetched again at most once per interval; `iss`, `aud`,
//! `exp`, `nbf` and the maximum age, each refused with its own reason.

use std::time::Duration;

use erp_tools_core::Principal;
use erp_tools_core::auth::{
    AuthError, Authenticator, IdentityConfig, TokenConfig, effective_scopes, mint,
};
use erp_tools_tests::identity::{Key, Metadata, Provider, TEST_REFRESH, now, sign, sign_as};
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

const RESOURCE: &str = "http://127.0.0.1:8765/mcp";

/// Claims a provider that carries everything sends: the default resolver reads them.
fn full_claims(provider: &Provider) -> Value {
    let mut claims = provider.claims("u-1042", RESOURCE, "purchasing:read inventory:read");
    claims["branch_id"] = json!(1);
    claims["branch_code"] = json!("SBY-01");
    claims["roles"] = json!(["buyer"]);
    claims
}

async fn authenticator_for(provider: &Provider) -> Authenticator {
    let config = IdentityConfig::provider(&provider.issuer, RESOURCE)
        .unwrap()
        .with_key_refresh_interval(TEST_REFRESH);
    Authenticator::from_config(config).await.expect("discovery")
}

#[tokio::test]
async fn rs256_es256_and_eddsa_tokens_verify_against_the_discovered_keys() {
    let provider = Provider::start(&[Key::Rsa1, Key::Ec1, Key::Ed1], Metadata::OpenId).await;
    let auth = authenticator_for(&provider).await;
    assert_eq!(
        auth.authorization_servers(),
        std::slice::from_ref(&provider.issuer)
    );
    let expected = Principal::builder("u-1042", 1, "SBY-01")
        .role("buyer")
        .scopes(["inventory:read", "purchasing:read"])
        .build();
    for key in [Key::Rsa1, Key::Ec1, Key::Ed1] {
        let token = sign_as(key, &full_claims(&provider));
        let identity = auth
            .authenticate(&token)
            .await
            .unwrap_or_else(|e| panic!("{key:?}: {e}"));
        assert_eq!(identity.principal, expected, "{key:?}");
        assert!(identity.expires_at.is_some());
    }
    assert_eq!(
        provider.jwks_fetches(),
        1,
        "one fetch serves every kid it holds"
    );
}

#[tokio::test]
async fn ps256_is_accepted_from_an_rsa_key_published_without_alg() {
    let provider = Provider::start(&[], Metadata::OpenId).await;
    provider.publish(&[Key::Rsa1], false);
    let auth = authenticator_for(&provider).await;
    for alg in [Algorithm::PS256, Algorithm::RS256] {
        let token = sign(Key::Rsa1, alg, Some("rsa-1"), &full_claims(&provider));
        assert!(auth.authenticate(&token).await.is_ok(), "{alg:?}");
    }
    // An RSA key never verifies an ES256 header.
    let token = sign(
        Key::Ec1,
        Algorithm::ES256,
        Some("rsa-1"),
        &full_claims(&provider),
    );
    let err = auth.authenticate(&token).await.unwrap_err();
    assert!(matches!(err, AuthError::UnsupportedAlgorithm(_)), "{err}");
}

#[tokio::test]
async fn the_algorithm_comes_from_the_key_not_from_the_token_header() {
    let provider = Provider::start(&[Key::Rsa1], Metadata::OpenId).await;
    let auth = authenticator_for(&provider).await;
    let claims = full_claims(&provider);

    // The JWK says RS256: a PS256 header is refused even though the key could do it.
    let ps = sign(Key::Rsa1, Algorithm::PS256, Some("rsa-1"), &claims);
    let err = auth.authenticate(&ps).await.unwrap_err();
    assert!(
        matches!(&err, AuthError::UnsupportedAlgorithm(a) if a.contains("PS256") && a.contains("RS256")),
        "{err}"
    );

    // HS256 "signed" with the public key as a secret: the classic confusion attack.
    let public = serde_json::to_vec(&Key::Rsa1.jwk(true)).unwrap();
    let mut header = jsonwebtoken::Header::new(Algorithm::HS256);
    header.kid = Some("rsa-1".into());
    let forged = jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(&public).unwrap(),
    )
    .unwrap();
    assert_eq!(
        auth.authenticate(&forged).await.unwrap_err(),
        AuthError::UnsupportedAlgorithm("HS256".into())
    );

    // A development token is refused once an identity provider is configured.
    let dev = TokenConfig::development().for_resource(RESOURCE);
    let dev_token = mint(
        &dev,
        &Principal::builder("7", 1, "SBY-01").build(),
        Duration::from_secs(60),
    );
    let err = auth.authenticate(&dev_token).await.unwrap_err();
    assert_eq!(err, AuthError::UnsupportedAlgorithm("HS256".into()));
    assert_eq!(
        err.to_string(),
        "the token is signed with HS256, which this server does not accept"
    );

    // A tampered payload fails the signature.
    let good = sign_as(Key::Rsa1, &claims);
    let mut parts: Vec<String> = good.split('.').map(str::to_string).collect();
    let mut other = claims.clone();
    other["sub"] = json!("admin");
    parts[1] = sign_as(Key::Rsa1, &other)
        .split('.')
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(
        auth.authenticate(&parts.join(".")).await.unwrap_err(),
        AuthError::BadSignature
    );
}

#[tokio::test]
async fn unknown_kids_refresh_the_keys_at_most_once_per_interval_and_rotation_works() {
    let provider = Provider::start(&[Key::Rsa1], Metadata::OpenId).await;
    let claims = full_claims(&provider);
    // Signed beforehand (signing is slow in a debug build; verification is not), with an
    // EC key: the kid is made up either way.
    let forged = |prefix: &str| -> Vec<String> {
        (0..50)
            .map(|i| {
                sign(
                    Key::Ec1,
                    Algorithm::ES256,
                    Some(&format!("{prefix}-{i}")),
                    &claims,
                )
            })
            .collect()
    };
    let (storm, second_storm) = (forged("forged"), forged("again"));
    let auth = authenticator_for(&provider).await;
    assert_eq!(provider.jwks_fetches(), 1, "fetched once at start-up");

    // A storm of made-up kids: at most one fetch per refresh interval, however many.
    let started = std::time::Instant::now();
    for token in &storm {
        let err = auth.authenticate(token).await.unwrap_err();
        assert!(matches!(err, AuthError::UnknownKey(_)), "{err}");
    }
    let intervals = (started.elapsed().as_millis() / TEST_REFRESH.as_millis()) as usize;
    let after_storm = provider.jwks_fetches();
    assert!(
        after_storm <= 1 + intervals,
        "{after_storm} fetches in {intervals} interval(s)"
    );

    // The provider rotates to rsa-2; after the interval, its first token fetches once.
    provider.publish(&[Key::Rsa1, Key::Rsa2], true);
    tokio::time::sleep(TEST_REFRESH + Duration::from_millis(100)).await;
    let rotated = sign_as(Key::Rsa2, &claims);
    let mut handles = Vec::new();
    for _ in 0..20 {
        let auth = auth.clone();
        let token = rotated.clone();
        handles.push(tokio::spawn(async move { auth.authenticate(&token).await }));
    }
    for handle in handles {
        assert!(
            handle.await.unwrap().is_ok(),
            "the rotated key is accepted without a restart"
        );
    }
    let after_rotation = provider.jwks_fetches();
    assert_eq!(
        after_rotation,
        after_storm + 1,
        "20 concurrent tokens, one fetch"
    );

    // Another storm right after that fetch, within the interval: no fetch.
    let started = std::time::Instant::now();
    for token in &second_storm {
        assert!(auth.authenticate(token).await.is_err());
    }
    let intervals = (started.elapsed().as_millis() / TEST_REFRESH.as_millis()) as usize;
    assert!(provider.jwks_fetches() <= after_rotation + intervals);

    // rsa-1 withdrawn: once the cached set is refreshed, its tokens stop verifying.
    provider.publish(&[Key::Rsa2], true);
    tokio::time::sleep(TEST_REFRESH + Duration::from_millis(100)).await;
    let unknown = sign(Key::Rsa2, Algorithm::RS256, Some("next"), &claims);
    assert!(auth.authenticate(&unknown).await.is_err()); // triggers the refresh
    let old = sign_as(Key::Rsa1, &claims);
    let err = auth.authenticate(&old).await.unwrap_err();
    assert!(matches!(err, AuthError::UnknownKey(_)), "{err}");
}

#[tokio::test]
async fn issuer_audience_and_time_claims_are_refused_with_their_own_reason() {
    let provider = Provider::start(&[Key::Ec1], Metadata::OpenId).await;
    let config = IdentityConfig::provider(&provider.issuer, RESOURCE)
        .unwrap()
        .with_max_token_age(Duration::from_secs(3600));
    let auth = Authenticator::from_config(config).await.unwrap();
    let base = full_claims(&provider);
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = base.clone();
        edit(&mut c);
        sign_as(Key::Ec1, &c)
    };

    let array_aud = with(&|c| c["aud"] = json!(["https://other.example/api", RESOURCE]));
    assert!(
        auth.authenticate(&array_aud).await.is_ok(),
        "aud as an array naming us"
    );

    let cases: Vec<(&str, String, String)> = vec![
        (
            "issuer with a trailing slash",
            with(&|c| c["iss"] = json!(format!("{}/", c["iss"].as_str().unwrap()))),
            format!(
                "the token was issued by an unknown issuer: expected {0}, the token names {0}/",
                provider.issuer
            ),
        ),
        (
            "another resource",
            with(&|c| c["aud"] = json!("http://127.0.0.1:9999/mcp")),
            format!(
                "the token was issued for another audience: expected {RESOURCE}, the token names http://127.0.0.1:9999/mcp"
            ),
        ),
        (
            "several other resources",
            with(&|c| c["aud"] = json!(["https://a.example", "https://b.example"])),
            format!(
                "the token was issued for another audience: expected {RESOURCE}, the token names https://a.example, https://b.example"
            ),
        ),
        (
            "expired",
            with(&|c| c["exp"] = json!(now() - 60)),
            "the token has expired".into(),
        ),
        (
            "not valid yet",
            with(&|c| c["nbf"] = json!(now() + 600)),
            "the token is not valid yet (its `nbf` is in the future)".into(),
        ),
        (
            "lives too long",
            with(&|c| c["exp"] = json!(now() + 30 * 24 * 3600)),
            "the token is older than the 3600 s this server accepts".into(),
        ),
        (
            "no iat under a maximum age",
            with(&|c| {
                c.as_object_mut().unwrap().remove("iat");
            }),
            "the token claims are invalid: the `iat` claim is missing; this server limits the age of tokens".into(),
        ),
        (
            "no subject",
            with(&|c| {
                c.as_object_mut().unwrap().remove("sub");
            }),
            "the token claims are invalid: the `sub` claim is missing".into(),
        ),
        (
            "an empty run claim",
            with(&|c| c["run"] = json!("")),
            "the token claims are invalid: the `run` claim must be 1 to 128 visible ASCII characters".into(),
        ),
        (
            "no branch for the default resolver",
            with(&|c| {
                c.as_object_mut().unwrap().remove("branch_id");
            }),
            "the token claims are invalid: the token has no `branch_id` claim; configure a PrincipalResolver that looks the user up in the ERP, or have the provider add the claim".into(),
        ),
    ];
    for (case, token, expected) in cases {
        let err = auth.authenticate(&token).await.unwrap_err();
        assert_eq!(err.to_string(), expected, "{case}");
    }
}

#[tokio::test]
async fn discovery_falls_back_to_rfc_8414_and_checks_the_issuer() {
    let oauth_only = Provider::start(&[Key::Ed1], Metadata::OAuthOnly).await;
    let auth = authenticator_for(&oauth_only).await;
    let token = sign_as(Key::Ed1, &full_claims(&oauth_only));
    assert!(auth.authenticate(&token).await.is_ok());

    let liar = Provider::start(&[Key::Ed1], Metadata::WrongIssuer).await;
    let config = IdentityConfig::provider(&liar.issuer, RESOURCE).unwrap();
    let err = Authenticator::from_config(config)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("names the issuer https://someone-else.example, not the configured"),
        "{err}"
    );

    // A JWKS URL given directly skips discovery.
    let direct = IdentityConfig::provider(&liar.issuer, RESOURCE)
        .unwrap()
        .with_jwks_uri(liar.jwks_uri())
        .unwrap();
    let auth = Authenticator::from_config(direct).await.unwrap();
    assert!(
        auth.authenticate(&sign_as(Key::Ed1, &full_claims(&liar)))
            .await
            .is_ok()
    );

    // Nobody listening: a start-up error naming both well-known URLs.
    let gone = IdentityConfig::provider("http://127.0.0.1:9", RESOURCE).unwrap();
    let err = Authenticator::from_config(gone)
        .await
        .unwrap_err()
        .to_string();
    for part in [
        "cannot discover the identity provider http://127.0.0.1:9",
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ] {
        assert!(err.contains(part), "{err}");
    }
}

#[test]
fn effective_scopes_never_exceed_what_the_roles_grant() {
    let token: Vec<String> = vec!["inventory:read".into(), "purchasing:draft".into()];
    assert_eq!(
        effective_scopes(&token, ["inventory:read"]),
        ["inventory:read"]
    );
}
