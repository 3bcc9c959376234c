//! `resources/list`, `resources/templates/list` and `resources/read` of the cards (the
//! documents calls produced are read in `mcp/documents.rs`).

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, MetaObject, ReadResourceResult,
    Resource, ResourceContents,
};

use super::cards::{CARD_MIME, card_html, card_meta, card_title};

/// How long a host may keep a card's page: they change only with the server's version.
const CARD_TTL_MS: u64 = 3_600_000;

fn meta() -> Option<MetaObject> {
    card_meta().as_object().cloned().map(MetaObject)
}

/// The cards `served` (their URIs), as `resources/list` lists them (none for a server
/// serving no card). Documents calls produced are not listed: each is read by the URI
/// its call returned.
pub(crate) fn list_resources(served: &[&'static str]) -> Result<ListResourcesResult, ErrorData> {
    let resources = served
        .iter()
        .map(|uri| {
            let (name, description) = card_title(uri);
            let mut r = Resource::new(*uri, name).with_description(description);
            r.mime_type = Some(CARD_MIME.into());
            r.meta = meta();
            r
        })
        .collect();
    Ok(ListResourcesResult::with_all_items(resources)
        .with_cache_scope(CacheScope::Public)
        .with_ttl_ms(CARD_TTL_MS))
}

/// No templates: every card has a fixed URI, and a document the URI its call returned.
pub(crate) fn list_resource_templates() -> Result<ListResourceTemplatesResult, ErrorData> {
    Ok(ListResourceTemplatesResult::with_all_items(Vec::new())
        .with_cache_scope(CacheScope::Public)
        .with_ttl_ms(CARD_TTL_MS))
}

/// Card `uri`'s page, if it is one of the cards `served`.
pub(crate) fn read_resource(served: &[&'static str], uri: &str) -> Option<ReadResourceResult> {
    let html = served
        .iter()
        .find(|s| **s == uri)
        .and_then(|uri| card_html(uri))?;
    Some(
        ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
            uri: uri.to_string(),
            mime_type: Some(CARD_MIME.into()),
            text: html,
            meta: meta(),
        }])
        .with_cache_scope(CacheScope::Public)
        .with_ttl_ms(CARD_TTL_MS),
    )
}
