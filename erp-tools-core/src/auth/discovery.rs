//! Finding an identity provider's keys from its issuer URL (feature `oidc`): the OpenID
//! Connect discovery document (`<issuer>/.well-known/openid-configuration`) or, for a
//! plain OAuth server, RFC 8414 metadata (`/.well-known/oauth-authorization-server`);
//! and fetching the JWKS it names.

use std::time::Duration;

use futures::future::BoxFuture;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;

use super::config::check_provider_url;
use super::error::AuthError;
use super::jwks::{KeySource, parse_key_set};

/// Largest accepted discovery document or key set.
const MAX_DOCUMENT_BYTES: usize = 1 << 20;

/// How long one request to the provider may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// What this server reads from the provider's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ProviderMetadata {
    /// The issuer, equal to the configured one.
    pub issuer: String,
    /// Where the provider publishes its signing keys.
    pub jwks_uri: String,
    /// The token endpoint, if published.
    #[serde(default)]
    pub token_endpoint: Option<String>,
}

/// An HTTP client for the provider: rustls, short timeouts, no redirects to other hosts.
pub(crate) fn http_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::limited(3))
        .build()
        .map_err(|e| AuthError::Config(format!("cannot build the HTTP client: {e}")))
}

/// The metadata URLs of `issuer`, in the order they are tried.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let mut urls = vec![format!("{trimmed}/.well-known/openid-configuration")];
    // RFC 8414 §3: the well-known segment goes between the host and the issuer's path.
    if let Ok(uri) = trimmed.parse::<::http::Uri>()
        && let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority())
    {
        let path = uri.path().trim_end_matches('/');
        urls.push(format!(
            "{scheme}://{authority}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls
}

/// Fetches the provider's metadata from `issuer`'s well-known URLs and checks that it
/// names the same issuer (RFC 8414 §3.3) and a usable `jwks_uri`.
pub async fn discover(issuer: &str) -> Result<ProviderMetadata, AuthError> {
    let client = http_client()?;
    let mut problems = Vec::new();
    for url in metadata_urls(issuer) {
        match get(&client, &url).await {
            Ok(body) => {
                let metadata: ProviderMetadata = serde_json::from_slice(&body).map_err(|e| {
                    AuthError::Config(format!("{url} is not provider metadata: {e}"))
                })?;
                if metadata.issuer != issuer {
                    return Err(AuthError::Config(format!(
                        "{url} names the issuer {}, not the configured {issuer}; set \
                         ERP_TOOLS_ISSUER to the provider's issuer exactly",
                        metadata.issuer
                    )));
                }
                check_provider_url(&metadata.jwks_uri, "the provider's jwks_uri")?;
                return Ok(metadata);
            }
            Err(problem) => problems.push(problem),
        }
    }
    Err(AuthError::Config(format!(
        "cannot discover the identity provider {issuer}: {}",
        problems.join("; ")
    )))
}

async fn get(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let mut response = client
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| format!("{url}: {}", chain(&e)))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{url}: {}", chain(&e)))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url} sent more than {MAX_DOCUMENT_BYTES} bytes"));
        }
    }
    Ok(body)
}

/// An error and its causes, `outer: inner: root`.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The key set at a `jwks_uri`, fetched over HTTPS (or HTTP on loopback).
#[derive(Clone, Debug)]
pub struct JwksUri {
    client: reqwest::Client,
    uri: String,
}

impl JwksUri {
    /// The key set at `uri`.
    pub fn new(uri: impl Into<String>) -> Result<Self, AuthError> {
        let uri = uri.into();
        check_provider_url(&uri, "the JWKS URL")?;
        Ok(JwksUri {
            client: http_client()?,
            uri,
        })
    }
}

impl KeySource for JwksUri {
    fn fetch(&self) -> BoxFuture<'_, Result<JwkSet, AuthError>> {
        Box::pin(async move {
            let body = get(&self.client, &self.uri)
                .await
                .map_err(AuthError::KeysUnavailable)?;
            parse_key_set(&body)
                .map_err(|e| AuthError::KeysUnavailable(format!("{}: {e}", self.uri)))
        })
    }
    fn describe(&self) -> String {
        self.uri.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_oidc_then_rfc_8414() {
        assert_eq!(
            metadata_urls("https://id.example.com/realms/erp"),
            [
                "https://id.example.com/realms/erp/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server/realms/erp",
            ]
        );
        assert_eq!(
            metadata_urls("https://tenant.auth0.com/"),
            [
                "https://tenant.auth0.com/.well-known/openid-configuration",
                "https://tenant.auth0.com/.well-known/oauth-authorization-server",
            ]
        );
    }
}
