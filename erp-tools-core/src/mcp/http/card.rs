//! The Server Card at [`SERVER_CARD_PATH`](super::SERVER_CARD_PATH): what a host or a
//! registry learns before connecting (experimental extension `experimental-ext-server-card`,
//! SEP-2127, as its repository read in July 2026: the `v1` card schema and
//! `docs/discovery.md`).
//!
//! The card is built once, when the router is: `name` from the resource URL's host in
//! reverse DNS (`https://erp.example.com/mcp` gives `com.example.erp/erp-tools`),
//! `version` and `title` as `initialize` and `server/discover` give them, one
//! `streamable-http` remote (the MCP URL, the protocol versions the server speaks, the
//! `Authorization: Bearer {token}` header it requires), and, since the card has no field
//! of its own for them, three namespaced `_meta` entries: `erp-tools/authorization` (the
//! protected-resource metadata and its URL), `erp-tools/extensions` (the extensions
//! `initialize` declares) and `erp-tools/surface` (the tool surface's fingerprint). It is
//! public (no token), served as `application/mcp-server-card+json` with the CORS and
//! caching headers the extension asks for, and an `ETag` that `If-None-Match` turns into
//! `304 Not Modified`.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ProtocolVersion, ServerConfig};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::lock::FINGERPRINT_META_KEY;
use crate::registry::ToolRegistry;

/// The `$schema` every card names.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// The card's media type.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The card's body and its entity tag.
#[derive(Debug)]
pub(super) struct Card {
    body: String,
    etag: String,
}

/// What the card is made from: the registry, the server's declared info and protocol
/// versions, and the HTTP configuration's resource URL and protected-resource metadata.
pub(super) struct CardSource<'a> {
    pub(super) registry: &'a ToolRegistry,
    pub(super) info: &'a ServerConfig,
    pub(super) versions: &'a [ProtocolVersion],
    pub(super) resource_url: &'a str,
    pub(super) metadata_url: String,
    pub(super) metadata: &'a Value,
}

impl Card {
    pub(super) fn new(source: CardSource<'_>) -> Arc<Card> {
        let body = serde_json::to_string_pretty(&card(&source)).unwrap_or_default();
        let etag = format!(
            "\"{}\"",
            &hex::encode(Sha256::digest(body.as_bytes()))[..32]
        );
        Arc::new(Card { body, etag })
    }
}

fn card(source: &CardSource<'_>) -> Value {
    let server = &source.info.server_info;
    let (tools, modules) = (
        source.registry.tools().len(),
        source.registry.namespaces().len(),
    );
    let extensions = source
        .info
        .capabilities
        .extensions
        .as_ref()
        .map_or_else(|| json!({}), |e| json!(e));
    json!({
        "$schema": SERVER_CARD_SCHEMA,
        "name": card_name(source.resource_url, &server.name),
        "version": server.version,
        "description": format!(
            "ERP tools for AI agents: {tools} scoped read and draft tools in {modules} modules, \
             audited"
        ),
        "title": server.title.as_deref().unwrap_or(&server.name),
        "remotes": [{
            "type": "streamable-http",
            "url": source.resource_url,
            "headers": [{
                "name": "Authorization",
                "description": "An OAuth access token for this resource, from one of the \
                                authorization servers its protected-resource metadata names",
                "isRequired": true,
                "isSecret": true,
                "value": "Bearer {token}",
                "variables": {"token": {
                    "description": "The access token",
                    "isRequired": true,
                    "isSecret": true,
                }},
            }],
            "supportedProtocolVersions":
                source.versions.iter().map(ProtocolVersion::as_str).collect::<Vec<_>>(),
        }],
        "_meta": {
            "erp-tools/authorization": {
                "resource_metadata": source.metadata_url,
                "metadata": source.metadata,
            },
            "erp-tools/extensions": extensions,
            FINGERPRINT_META_KEY: source.registry.fingerprint().as_str(),
        },
    })
}

/// `<host in reverse DNS>/<server>`: `com.example.erp/erp-tools` for
/// `https://erp.example.com/mcp`; `localhost/<server>` for a loopback name or an IP
/// address.
fn card_name(resource_url: &str, server: &str) -> String {
    let host = resource_url
        .split_once("://")
        .map_or(resource_url, |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    let label =
        |l: &&str| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let labels: Vec<&str> = host.split('.').collect();
    let namespace = if host.parse::<IpAddr>().is_ok() || !labels.iter().all(label) {
        "localhost".to_string()
    } else {
        labels.into_iter().rev().collect::<Vec<_>>().join(".")
    };
    format!("{namespace}/{server}")
}

/// `GET <mcp>/server-card`: the card, or `304` when `If-None-Match` names its tag.
pub(super) async fn server_card(State(card): State<Arc<Card>>, headers: HeaderMap) -> Response {
    let cors = [
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (header::ACCESS_CONTROL_ALLOW_METHODS, "GET"),
        (
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            "Content-Type, If-None-Match",
        ),
        (header::ACCESS_CONTROL_EXPOSE_HEADERS, "ETag"),
        (header::CACHE_CONTROL, "public, max-age=3600"),
    ];
    let etag = HeaderValue::from_str(&card.etag).unwrap_or(HeaderValue::from_static("\"\""));
    let matches = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| {
            let tag = tag.trim();
            tag == "*" || tag.trim_start_matches("W/") == card.etag
        });
    if matches {
        return (StatusCode::NOT_MODIFIED, cors, [(header::ETAG, etag)]).into_response();
    }
    (
        cors,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(SERVER_CARD_MEDIA_TYPE),
            ),
            (header::ETAG, etag),
        ],
        card.body.clone(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{JsonObject, ServerCapabilities};

    /// The extensions `initialize` declares are the card's, and `version`, `title` and
    /// the protocol versions are the server's.
    #[test]
    fn the_card_names_the_declared_extensions() {
        let registry = ToolRegistry::builder().build().unwrap();
        let mut capabilities = ServerCapabilities::default();
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert("io.modelcontextprotocol/tasks".into(), JsonObject::new());
        let info = ServerConfig::new(capabilities).with_server_info(
            rmcp::model::Implementation::new("erp-tools", "9.9.9").with_title("ERP tools"),
        );
        let metadata = json!({"authorization_servers": ["https://id.example"]});
        let card = card(&CardSource {
            registry: &registry,
            info: &info,
            versions: &[ProtocolVersion::V_2025_11_25],
            resource_url: "https://erp.example.com/mcp",
            metadata_url: "https://erp.example.com/.well-known/oauth-protected-resource".into(),
            metadata: &metadata,
        });
        assert_eq!(
            card["_meta"]["erp-tools/extensions"],
            json!({"io.modelcontextprotocol/tasks": {}})
        );
        assert_eq!(
            card["_meta"]["erp-tools/authorization"]["metadata"],
            metadata
        );
        assert_eq!(
            (&card["version"], &card["title"]),
            (&json!("9.9.9"), &json!("ERP tools"))
        );
        assert_eq!(card["name"], "com.example.erp/erp-tools");
        assert_eq!(
            card["remotes"][0]["supportedProtocolVersions"],
            json!(["2025-11-25"])
        );
    }

    #[test]
    fn names_are_the_host_in_reverse_dns() {
        let name = |url| card_name(url, "erp-tools");
        assert_eq!(
            name("https://erp.example.com/mcp"),
            "com.example.erp/erp-tools"
        );
        assert_eq!(
            name("https://erp.example.com:8443/mcp"),
            "com.example.erp/erp-tools"
        );
        assert_eq!(name("http://127.0.0.1:3000/mcp"), "localhost/erp-tools");
        assert_eq!(name("http://[::1]:3000/mcp"), "localhost/erp-tools");
        assert_eq!(name("http://localhost:3000/mcp"), "localhost/erp-tools");
        assert_eq!(name("/mcp"), "localhost/erp-tools");
    }
}
