//! `resources/list`, `resources/templates/list` and `resources/read` of the cards.

use rmcp::ErrorData;
use rmcp::model::{
    CacheScope, ListResourceTemplatesRequestMethod, ListResourceTemplatesResult,
    ListResourcesRequestMethod, ListResourcesResult, MetaObject, ReadResourceResult, Resource,
    ResourceContents,
};
use serde_json::json;

use super::cards::{APPROVAL_CARD, CARD_MIME, DRAFT_CARD, card_html, card_meta, card_title};

/// How long a host may keep a card's page: they change only with the server's version.
const CARD_TTL_MS: u64 = 3_600_000;

fn meta() -> Option<MetaObject> {
    card_meta().as_object().cloned().map(MetaObject)
}

/// The cards `served` (their URIs), as `resources/list` lists them; a server serving none
/// declares no resources and answers as it did without apps (method not found).
pub(crate) fn list_resources(served: &[&'static str]) -> Result<ListResourcesResult, ErrorData> {
    if served.is_empty() {
        return Err(ErrorData::method_not_found::<ListResourcesRequestMethod>());
    }
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

/// No templates: every card has a fixed URI (method not found when no card is served).
pub(crate) fn list_resource_templates(
    served: &[&'static str],
) -> Result<ListResourceTemplatesResult, ErrorData> {
    if served.is_empty() {
        return Err(ErrorData::method_not_found::<
            ListResourceTemplatesRequestMethod,
        >());
    }
    Ok(ListResourceTemplatesResult::with_all_items(Vec::new())
        .with_cache_scope(CacheScope::Public)
        .with_ttl_ms(CARD_TTL_MS))
}

/// Card `uri`'s page, if it is one of the cards `served`.
pub(crate) fn read_resource(
    served: &[&'static str],
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let html = served
        .iter()
        .find(|s| **s == uri)
        .and_then(|uri| card_html(uri))
        .ok_or_else(|| {
            ErrorData::resource_not_found(
                format!(
                    "no resource `{uri}`: this server serves {} and {}",
                    DRAFT_CARD, APPROVAL_CARD
                ),
                Some(json!({ "uri": uri })),
            )
        })?;
    Ok(
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
