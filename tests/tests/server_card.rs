//! The Server Card at `/mcp/server-card` of a server on 127.0.0.1: valid against the v1
//! card schema written from the experimental extension's text
//! (`tests/schemas/server-card.schema.json`), public, generated from the registry and the
//! HTTP configuration, agreeing with what a connected client is told, with the extension's
//! CORS and caching headers and `304` on a matching `If-None-Match`.

use erp_tools_core::auth::TokenConfig;
use erp_tools_core::mcp::{
    ErpMcpServer, HttpConfig, SERVER_CARD_MEDIA_TYPE, SERVER_CARD_PATH, SERVER_CARD_SCHEMA,
};
use erp_tools_tests::app::App;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, SCOPES_SUPPORTED, SESSIONS};
use erp_tools_tests::principals::BUYER;
use rmcp::ServerHandler;
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

/// The identity provider the configuration names.
const ISSUER: &str = "https://id.erp.example/realms/erp";

fn card_schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schemas/server-card.schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The schema's complaints about `card`.
fn problems(card: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&card_schema()).expect("the card schema compiles");
    validator
        .iter_errors(card)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_card_is_valid_public_and_agrees_with_the_connection() {
    let t = TestDb::sqlite().await;
    let runtime = App::new(&t.db).await.runtime;
    let server = HttpServer::start_configured(runtime, |url| {
        HttpConfig::new(TokenConfig::development().for_resource(url))
            .with_authorization_servers([ISSUER])
    })
    .await;
    let url = format!("{}{SERVER_CARD_PATH}", server.base);
    assert_eq!(url, format!("{}/server-card", server.url));
    let http = reqwest::Client::new();
    let answer = http
        .get(&url)
        .header("accept", SERVER_CARD_MEDIA_TYPE)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "served without a token");
    let headers = answer.headers().clone();
    let header = |name: &str| headers[name].to_str().unwrap().to_string();
    assert_eq!(header("content-type"), SERVER_CARD_MEDIA_TYPE);
    assert_eq!(header("access-control-allow-origin"), "*");
    assert_eq!(header("access-control-allow-methods"), "GET");
    assert_eq!(
        header("access-control-allow-headers"),
        "Content-Type, If-None-Match"
    );
    assert_eq!(header("access-control-expose-headers"), "ETag");
    assert_eq!(header("cache-control"), "public, max-age=3600");
    let etag = header("etag");
    let card: Value = answer.json().await.unwrap();
    println!("server card: {card:#}");
    assert_eq!(problems(&card), Vec::<String>::new());

    // Generated from the registry and the HTTP configuration.
    let registry = server.runtime.registry();
    let declared = ErpMcpServer::new(server.runtime.clone()).get_info();
    assert_eq!(card["$schema"], SERVER_CARD_SCHEMA);
    assert_eq!(card["name"], "localhost/erp-tools");
    let remote = &card["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], server.url.as_str());
    let versions: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(|v| v.as_str())
        .collect();
    assert_eq!(remote["supportedProtocolVersions"], json!(versions));
    assert_eq!(remote["headers"][0]["name"], "Authorization");
    assert_eq!(remote["headers"][0]["value"], "Bearer {token}");
    let auth = &card["_meta"]["erp-tools/authorization"];
    assert_eq!(
        auth["resource_metadata"],
        format!("{}/.well-known/oauth-protected-resource", server.base)
    );
    let metadata_url = auth["resource_metadata"].as_str().unwrap();
    let metadata: Value = reqwest::get(metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(auth["metadata"], metadata);
    assert_eq!(
        auth["metadata"]["scopes_supported"],
        json!(SCOPES_SUPPORTED)
    );
    let extensions = declared.capabilities.extensions.clone().unwrap_or_default();
    assert_eq!(card["_meta"]["erp-tools/extensions"], json!(extensions));
    assert_eq!(
        card["_meta"]["erp-tools/surface"],
        registry.fingerprint().as_str()
    );
    let description = card["description"].as_str().unwrap();
    assert!(description.contains(&format!(
        "{} scoped read and draft tools",
        registry.tools().len()
    )));

    // What a connected client is told agrees with the card.
    let client = server
        .client(&server.token(&BUYER.principal()), &SESSIONS, None)
        .await;
    let info = client
        .peer_info()
        .and_then(|p| p.server_info.clone())
        .expect("initialized");
    assert_eq!(card["version"], info.version.as_str());
    assert_eq!(card["title"], json!(info.title));
    assert!(
        card["name"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/{}", info.name))
    );
    client.cancel().await.unwrap();

    // A client that has the card revalidates it.
    let again = http
        .get(&url)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    let other = http
        .get(&url)
        .header("if-none-match", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
}

/// The schema holds the extension's rules: a card with a dated schema URL, a name without
/// its namespace, a version range or a description over 100 characters is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_schema_refuses_what_the_extension_refuses() {
    let t = TestDb::sqlite().await;
    let server = HttpServer::on(&t).await;
    let url = format!("{}{SERVER_CARD_PATH}", server.base);
    let card: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    let broken = |key: &str, value: Value| {
        let mut c = card.clone();
        c[key] = value;
        problems(&c)
    };
    let dated = "https://static.modelcontextprotocol.io/schemas/2025-11-25/server-card.schema.json";
    for (key, value) in [
        ("$schema", json!(dated)),
        ("name", json!("erp-tools")),
        ("version", json!("^0.1.0")),
        ("description", json!("x".repeat(101))),
    ] {
        assert_eq!(broken(key, value.clone()).len(), 1, "{key}: {value}");
    }
    let mut without_name = card.clone();
    without_name.as_object_mut().unwrap().remove("name");
    assert!(!problems(&without_name).is_empty());
}
