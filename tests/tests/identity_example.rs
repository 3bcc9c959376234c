//! The distributor example's identity: its users table maps the provider's subjects to
//! ERP users (sub "7" buyer in SBY-01, "8" warehouse in SBY-01, "9" buyer in JKT-01), the
//! role bounds the token's scopes (a warehouse role never grants `purchasing:draft`), an
//! unknown subject is refused, and development tokens must pair branch id and code.

mod example;
#[path = "../../examples/distributor/identity.rs"]
mod identity;

use example::{app, buying, data, inventory, printing, purchasing};

use std::time::Duration;

use erp_tools_core::Principal;
use erp_tools_core::auth::{
    AuthError, Authenticator, Claims, IdentityConfig, JwkSet, TokenConfig, encode, mint,
};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::identity::{Key, now, sign_as};
use erp_tools_tests::on_both_backends;
use serde_json::json;

const ISSUER: &str = "https://id.distributor.example/realms/erp";
const RESOURCE: &str = "https://erp.distributor.example/mcp";
const EVERY_SCOPE: &str = "purchasing:read purchasing:draft inventory:read";

fn token(sub: &str, scope: &str) -> String {
    let t = now();
    sign_as(
        Key::Rsa1,
        &json!({"iss": ISSUER, "sub": sub, "aud": RESOURCE, "scope": scope, "iat": t, "exp": t + 300}),
    )
}

async fn users_table_maps_subjects_and_roles_bound_scopes(t: &TestDb) {
    app::prepare(&t.db).await.unwrap();
    identity::prepare(&t.db).await.unwrap();
    identity::prepare(&t.db)
        .await
        .expect("preparing twice keeps the seeded users");
    let config = IdentityConfig::provider(ISSUER, RESOURCE)
        .unwrap()
        .with_jwks(JwkSet {
            keys: vec![Key::Rsa1.jwk(true)],
        });
    let auth = Authenticator::from_config(config)
        .await
        .unwrap()
        .with_resolver(identity::ErpUsers::new(t.db.clone()));

    let seven = auth
        .authenticate(&token("7", EVERY_SCOPE))
        .await
        .unwrap()
        .principal;
    assert_eq!(
        seven,
        Principal::builder("7", 1, "SBY-01")
            .role("buyer")
            .scopes(["inventory:read", "purchasing:draft", "purchasing:read"])
            .build()
    );
    let eight = auth
        .authenticate(&token("8", EVERY_SCOPE))
        .await
        .unwrap()
        .principal;
    assert_eq!(eight.branch_code(), "SBY-01");
    assert_eq!(eight.roles(), ["warehouse"]);
    assert_eq!(
        eight.scopes().iter().collect::<Vec<_>>(),
        ["inventory:read"],
        "a warehouse role never grants purchasing:draft, whatever the token says"
    );
    let nine = auth
        .authenticate(&token("9", "purchasing:read"))
        .await
        .unwrap()
        .principal;
    assert_eq!((nine.branch_id(), nine.branch_code()), (2, "JKT-01"));
    assert_eq!(
        nine.scopes().iter().collect::<Vec<_>>(),
        ["purchasing:read"]
    );

    assert_eq!(
        auth.authenticate(&token("42", EVERY_SCOPE))
            .await
            .unwrap_err(),
        AuthError::UnknownSubject("42".into())
    );
}
on_both_backends!(users_table_maps_subjects_and_roles_bound_scopes);

async fn development_tokens_must_pair_the_branch_id_and_code(t: &TestDb) {
    app::prepare(&t.db).await.unwrap();
    let branches = identity::branches(&t.db).await.unwrap();
    assert_eq!(
        branches,
        [(1, "SBY-01".to_string()), (2, "JKT-01".to_string())]
    );
    let tokens = TokenConfig::development()
        .for_resource(RESOURCE)
        .with_branches(branches);
    let auth = Authenticator::shared_secret(tokens.clone());
    let buyer = Principal::builder("7", 1, "SBY-01")
        .scopes(["purchasing:read"])
        .build();
    let good = mint(&tokens, &buyer, Duration::from_secs(60));
    assert_eq!(auth.authenticate(&good).await.unwrap().principal, buyer);

    let mut forged = Claims::for_principal(&tokens, &buyer, Duration::from_secs(60));
    forged.branch_id = 2; // Jakarta's id with Surabaya's code
    let err = auth
        .authenticate(&encode(&tokens, &forged))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the token claims are invalid: `branch_code` SBY-01 is not the code of `branch_id` 2 (JKT-01)"
    );
}
on_both_backends!(development_tokens_must_pair_the_branch_id_and_code);
