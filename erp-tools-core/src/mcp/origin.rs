//! Which browser pages may call the MCP endpoint (`Origin`) and under which names the
//! server may be reached (`Host`, against DNS rebinding).
//!
//! - A request without `Origin` (every non-browser client) is checked as before: by its
//!   token.
//! - A same-origin request is accepted: its `Origin` names the host the request was sent
//!   to (the `Host` header, itself an allowed host) or the origin of the resource URL.
//!   That is the server's own page, and what the MCP conformance suite's
//!   `dns-rebinding-protection` scenario sends for `localhost`.
//! - An `Origin` listed in [`HttpConfig::with_allowed_origins`](super::HttpConfig::with_allowed_origins)
//!   is accepted, with CORS headers.
//! - Any other `Origin` (including `null`) gets `403`, before the token is looked at. A
//!   `Host` that is not allowed gets `403` too.

use axum::http::{HeaderMap, HeaderValue, header};

/// The origin and host rules of one server.
#[derive(Clone, Debug)]
pub(crate) struct OriginPolicy {
    allowed_origins: Vec<String>,
    resource_origin: Option<String>,
    allowed_hosts: Vec<String>,
}

/// What the rules say about one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OriginCheck {
    /// No `Origin` header: not a browser page.
    NoOrigin,
    /// The server's own origin.
    SameOrigin,
    /// A configured cross-origin page: answer with CORS headers for this value.
    Cors(HeaderValue),
    /// Refused (`403`), with the reason for the log.
    Refused(&'static str),
}

impl OriginPolicy {
    /// `allowed_origins` as browsers send them, the resource URL's origin, and the
    /// allowed `Host` values (empty: any host).
    pub(crate) fn new(
        allowed_origins: &[String],
        resource_url: &str,
        allowed_hosts: &[String],
    ) -> Self {
        OriginPolicy {
            allowed_origins: allowed_origins.iter().map(|o| normalise(o)).collect(),
            resource_origin: origin_of(resource_url).map(|o| normalise(&o)),
            allowed_hosts: allowed_hosts
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether `host` (a `Host` header value, `name` or `name:port`) is allowed.
    pub(crate) fn host_allowed(&self, host: &str) -> bool {
        if self.allowed_hosts.is_empty() {
            return true;
        }
        let host = host.trim().to_ascii_lowercase();
        let name = host_name(&host);
        self.allowed_hosts
            .iter()
            .any(|allowed| *allowed == host || *allowed == name)
    }

    /// The rule for a request with these headers.
    pub(crate) fn check(&self, headers: &HeaderMap) -> OriginCheck {
        let Some(value) = headers.get(header::ORIGIN) else {
            return OriginCheck::NoOrigin;
        };
        let Ok(origin) = value.to_str() else {
            return OriginCheck::Refused("the Origin header is not text");
        };
        let origin = normalise(origin);
        if self.allowed_origins.contains(&origin) {
            return OriginCheck::Cors(value.clone());
        }
        if self.resource_origin.as_deref() == Some(origin.as_str()) {
            return OriginCheck::SameOrigin;
        }
        let Some(authority) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return OriginCheck::Refused("the Origin is neither http nor https");
        };
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(|h| h.trim().to_ascii_lowercase());
        match host {
            Some(host) if host == authority && self.host_allowed(&host) => OriginCheck::SameOrigin,
            _ => OriginCheck::Refused("the Origin is neither this server nor an allowed origin"),
        }
    }
}

/// `scheme://authority` of an absolute URL.
pub(crate) fn origin_of(url: &str) -> Option<String> {
    let uri: ::http::Uri = url.parse().ok()?;
    Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?))
}

/// The `Host` value a URL is reached at (`host` or `host:port`).
pub(crate) fn authority_of(url: &str) -> Option<String> {
    let uri: ::http::Uri = url.parse().ok()?;
    uri.authority().map(|a| a.as_str().to_string())
}

pub(crate) fn normalise(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// `name` of `name:port` (IPv6 in brackets kept whole).
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split_once(']')
            .map_or(host, |(name, _)| &host[..=name.len()]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    fn policy() -> OriginPolicy {
        OriginPolicy::new(
            &["http://localhost:5173".to_string()],
            "https://erp.example.com/mcp",
            &[
                "localhost".into(),
                "127.0.0.1".into(),
                "erp.example.com".into(),
            ],
        )
    }

    #[test]
    fn same_origin_and_configured_origins_pass_others_are_refused() {
        let p = policy();
        assert_eq!(p.check(&headers(&[])), OriginCheck::NoOrigin);
        let own = [
            ("origin", "http://localhost:3000"),
            ("host", "localhost:3000"),
        ];
        assert_eq!(p.check(&headers(&own)), OriginCheck::SameOrigin);
        let resource = [
            ("origin", "https://erp.example.com"),
            ("host", "10.1.2.3:8080"),
        ];
        assert_eq!(p.check(&headers(&resource)), OriginCheck::SameOrigin);
        let cors = [
            ("origin", "http://localhost:5173"),
            ("host", "localhost:3000"),
        ];
        assert!(matches!(p.check(&headers(&cors)), OriginCheck::Cors(_)));
        for refused in [
            [
                ("origin", "https://attacker.example"),
                ("host", "localhost:3000"),
            ],
            // Same-origin with a rebound name is not same-origin with an allowed host.
            [
                ("origin", "http://evil.example:3000"),
                ("host", "evil.example:3000"),
            ],
            [
                ("origin", "http://localhost:3001"),
                ("host", "localhost:3000"),
            ],
            [("origin", "null"), ("host", "localhost:3000")],
        ] {
            assert!(
                matches!(p.check(&headers(&refused)), OriginCheck::Refused(_)),
                "{refused:?}"
            );
        }
    }

    #[test]
    fn hosts_match_with_or_without_port() {
        let p = policy();
        assert!(p.host_allowed("localhost:8765"));
        assert!(p.host_allowed("ERP.example.com"));
        assert!(!p.host_allowed("rebound.attacker.example"));
        assert_eq!(host_name("[::1]:8765"), "[::1]");
        assert_eq!(host_name("127.0.0.1:80"), "127.0.0.1");
    }
}
