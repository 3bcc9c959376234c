//! Forms are accepted from the console's own origin only: before a POST's CSRF token is
//! read, its `Sec-Fetch-Site` (sent by browsers) must be `same-origin` (or `none`, typed
//! by the person) and its `Origin`, when sent, must be the console's own (the request's
//! `Host`) or one the application allowed ([`ReviewConfig::allow_origin`]).
//!
//! [`ReviewConfig::allow_origin`]: super::ReviewConfig::allow_origin

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::pages::Console;

/// The middleware: refuses a cross-site POST, lets everything else through.
pub(super) async fn same_origin(
    State(c): State<Arc<Console>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::POST
        && let Some(why) = foreign(request.headers(), &c.config.origins)
    {
        let session = c.sessions.current(request.headers()).await;
        return c.message(
            session.as_ref(),
            StatusCode::FORBIDDEN,
            "Form refused",
            &format!(
                "This form was sent from another site ({why}), so nothing was done. Open \
                 the console itself and submit the form there."
            ),
        );
    }
    next.run(request).await
}

/// Why a POST with these headers came from another site, if it did.
pub(super) fn foreign(headers: &HeaderMap, allowed: &[String]) -> Option<String> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = get("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Some(format!("Sec-Fetch-Site: {site}"));
    }
    let origin = get(header::ORIGIN.as_str())?.trim_end_matches('/');
    if allowed.iter().any(|a| a == origin) {
        return None;
    }
    let host = get(header::HOST.as_str()).unwrap_or_default();
    let origin_host = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    match origin_host {
        Some(h) if !host.is_empty() && h.eq_ignore_ascii_case(host) => None,
        _ => Some(format!("Origin: {origin}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_the_consoles_own_origin_posts() {
        let none: &[String] = &[];
        let host = ("host", "127.0.0.1:8765");
        assert_eq!(foreign(&headers(&[host]), none), None);
        let own = ("origin", "http://127.0.0.1:8765");
        assert_eq!(foreign(&headers(&[host, own]), none), None);
        let same = ("sec-fetch-site", "same-origin");
        assert_eq!(foreign(&headers(&[host, own, same]), none), None);
        let evil = ("origin", "https://evil.example");
        assert!(foreign(&headers(&[host, evil]), none).is_some());
        assert!(foreign(&headers(&[host, ("origin", "null")]), none).is_some());
        let cross = ("sec-fetch-site", "cross-site");
        assert!(foreign(&headers(&[host, own, cross]), none).is_some());
        let sibling = ("sec-fetch-site", "same-site");
        assert!(foreign(&headers(&[host, sibling]), none).is_some());
        let allowed = ["https://evil.example".to_string()];
        assert_eq!(foreign(&headers(&[host, evil]), &allowed), None);
    }
}
