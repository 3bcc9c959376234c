//! The MCP endpoint with tokens from an identity provider: a resolver that looks the
//! subject up (effective scopes = token scopes ∩ what the role grants, unknown subjects
//! refused), the RFC 9728 metadata naming the provider, development tokens refused, and
//! the development key refused on a non-loopback address.

use erp_tools_core::auth::{
    AuthError, Authenticator, BoxFuture, IdentityConfig, JwksUri, KeyCache, PrincipalResolver,
    TokenClaims, TokenConfig, effective_scopes,
};
use erp_tools_core::mcp::{HttpConfig, router, serve_http};
use erp_tools_core::{Principal, ToolRuntime};
use erp_tools_tests::app::App;
use erp_tools_tests::app::tools::{FOR_BUYER, GET_STOCK};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{
    HttpServer, SCOPES_SUPPORTED, SESSIONS, challenge, initialize_body, post,
};
use erp_tools_tests::identity::{Key, Metadata, Provider, sign_as};
use erp_tools_tests::mcp::assert_list_matches;
use erp_tools_tests::principals::{BUYER, WAREHOUSE};
use serde_json::{Value, json};

/// The fixture's users, as an ERP holds them: subject → role and branch.
struct Users;

impl PrincipalResolver for Users {
    fn resolve<'a>(
        &'a self,
        claims: &'a TokenClaims,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(async move {
            let (role, granted): (_, &[&str]) = match claims.subject.as_str() {
                "u-buyer" => (BUYER, BUYER.scopes),
                "u-warehouse" => (WAREHOUSE, &["inventory:read"]),
                other => return Err(AuthError::UnknownSubject(other.to_string())),
            };
            Ok(
                Principal::builder(role.user_id, role.branch.id, role.branch.code)
                    .role(role.role)
                    .scopes(effective_scopes(&claims.scopes, granted.iter().copied()))
                    .build(),
            )
        })
    }
}

const EVERY_SCOPE: &str = "purchasing:read purchasing:draft inventory:read finance:draft";

async fn server_with_provider(t: &TestDb, provider: &Provider) -> HttpServer {
    let runtime = App::new(&t.db).await.runtime;
    let issuer = provider.issuer.clone();
    let jwks_uri = provider.jwks_uri();
    HttpServer::start_configured(runtime, move |url| {
        // The server's URL is known only once it listens: the key cache over the
        // provider's JWKS is made here, synchronously (keys are fetched on first use).
        let config = IdentityConfig::provider(&issuer, url).unwrap();
        let keys = KeyCache::new(JwksUri::new(jwks_uri).unwrap());
        HttpConfig::from_authenticator(
            Authenticator::with_key_cache(config, keys).with_resolver(Users),
        )
    })
    .await
}

/// Asserts that a session opened with `token` lists exactly `expected`.
async fn assert_token_lists(server: &HttpServer, token: &str, expected: &[&str]) {
    let client = server.client(token, &SESSIONS, None).await;
    assert_list_matches(
        &client.list_tools(None).await.unwrap(),
        server.runtime.registry(),
        expected,
    );
    client.cancel().await.unwrap();
}

/// The `WWW-Authenticate` challenge of the `401` an initialize with `token` gets.
async fn refused(server: &HttpServer, token: &str) -> String {
    let response = post(&server.url, &initialize_body())
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    challenge(&response)
}

async fn roles_bound_the_token_scopes_and_unknown_subjects_are_refused(t: &TestDb) {
    let provider = Provider::start(&[Key::Rsa1, Key::Ec1], Metadata::OpenId).await;
    let server = server_with_provider(t, &provider).await;

    let buyer = sign_as(
        Key::Rsa1,
        &provider.claims("u-buyer", &server.url, EVERY_SCOPE),
    );
    assert_token_lists(&server, &buyer, &FOR_BUYER).await;

    // The clerk's token carries every scope; the warehouse role grants inventory:read only.
    let clerk = sign_as(
        Key::Ec1,
        &provider.claims("u-warehouse", &server.url, EVERY_SCOPE),
    );
    assert_token_lists(&server, &clerk, &[GET_STOCK]).await;

    // A buyer whose token lacks the draft scope cannot draft, whatever the role allows.
    let narrow = sign_as(
        Key::Rsa1,
        &provider.claims("u-buyer", &server.url, "inventory:read"),
    );
    assert_token_lists(&server, &narrow, &[GET_STOCK]).await;

    let stranger = sign_as(
        Key::Rsa1,
        &provider.claims("u-nobody", &server.url, EVERY_SCOPE),
    );
    let header = refused(&server, &stranger).await;
    assert!(
        header.contains("The token's subject is not a user here"),
        "{header}"
    );

    // A development token, valid for this URL, is refused once a provider is configured.
    let dev = server.token(&BUYER.principal());
    let header = refused(&server, &dev).await;
    assert!(header.contains("signed with HS256"), "{header}");

    // A provider token for another resource is refused with both URLs named.
    let elsewhere = sign_as(
        Key::Rsa1,
        &provider.claims("u-buyer", "https://other.example/mcp", EVERY_SCOPE),
    );
    let header = refused(&server, &elsewhere).await;
    assert!(
        header.contains(&format!(
            "expected {}, the token names https://other.example/mcp",
            server.url
        )),
        "{header}"
    );
    assert!(server.db().audit_log(None).await.unwrap().is_empty());
}
erp_tools_tests::on_both_backends!(roles_bound_the_token_scopes_and_unknown_subjects_are_refused);

async fn the_metadata_names_the_provider_and_the_registry_scopes(t: &TestDb) {
    let provider = Provider::start(&[Key::Rsa1], Metadata::OpenId).await;
    let server = server_with_provider(t, &provider).await;
    let doc: Value = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource",
        server.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(doc["resource"], json!(server.url));
    assert_eq!(doc["authorization_servers"], json!([provider.issuer]));
    assert_eq!(doc["scopes_supported"], json!(SCOPES_SUPPORTED));
    let response = post(&server.url, &initialize_body()).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge(&response),
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\", scope=\"finance:draft inventory:read purchasing:draft purchasing:read\"",
            server.base
        )
    );
}
erp_tools_tests::on_both_backends!(the_metadata_names_the_provider_and_the_registry_scopes);

/// The error of serving `runtime` with the development token configuration on `addr`, a
/// refusal to start (`InvalidInput`).
async fn development_refused_on(runtime: ToolRuntime, addr: &str) -> std::io::Error {
    let config = HttpConfig::new(TokenConfig::development());
    let options = config.serve_options();
    let app = router(runtime, config);
    let err = serve_http(addr.parse().unwrap(), app, options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    err
}

async fn the_development_key_is_refused_beyond_loopback(t: &TestDb) {
    let runtime = App::new(&t.db).await.runtime;
    let err = development_refused_on(runtime, "0.0.0.0:0").await;
    assert!(
        err.to_string().starts_with(
            "refusing to serve on 0.0.0.0:0 with the published DEVELOPMENT signing key"
        ),
        "{err}"
    );
    // The check is about the key: a secret of the team's own is not the development key.
    let own = TokenConfig::new(
        b"a secret of our own, 32 bytes or more".to_vec(),
        "erp",
        "http://erp.test/mcp",
    )
    .unwrap();
    assert!(!HttpConfig::new(own).authenticator().is_development());
}
erp_tools_tests::on_both_backends!(the_development_key_is_refused_beyond_loopback);

/// `TokenConfig::development()` names the default development URL as its audience: a
/// server on another port would accept tokens minted for that URL and refuse its own, so
/// it does not start, and says what to write instead. Naming the URL serves.
async fn the_default_development_audience_is_served_only_on_its_port(t: &TestDb) {
    let runtime = App::new(&t.db).await.runtime;
    let text = development_refused_on(runtime.clone(), "127.0.0.1:9")
        .await
        .to_string();
    assert!(
        text.starts_with("refusing to serve on 127.0.0.1:9: the development token configuration expects this server at http://127.0.0.1:8765/mcp"),
        "{text}"
    );
    assert!(
        text.contains(r#"TokenConfig::development().for_resource("http://127.0.0.1:9/mcp")"#),
        "{text}"
    );
    // With the URL named, the same address is served (stopped at once by its token).
    let config = HttpConfig::new(TokenConfig::development().for_resource("http://127.0.0.1:0/mcp"));
    let options = config.serve_options();
    options.cancellation().cancel();
    let app = router(runtime, config);
    serve_http("127.0.0.1:0".parse().unwrap(), app, options)
        .await
        .expect("a named development URL is served on loopback");
}
erp_tools_tests::on_both_backends!(the_default_development_audience_is_served_only_on_its_port);
