//! HTML rendering: the console's templates (minijinja, every value HTML-escaped), its
//! stylesheet and the headers every response gets.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;

/// `(name, source)` of each named file under `templates/`.
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("templates/", $name)))),*]
    };
}

const TEMPLATES: &[(&str, &str)] = templates![
    "base.html",
    "sign_in.html",
    "message.html",
    "runs.html",
    "run.html",
    "drafts.html",
    "approvals.html",
    "pager.html",
    "macros.html",
    "document.html",
];

const STYLESHEET: &str = include_str!("templates/style.css");

/// The templates, loaded once. Every template escapes every value as HTML: nothing a
/// model wrote can become markup.
pub(super) fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .expect("the console's templates are valid (checked by its tests)");
    }
    env
}

/// Renders `template` with `context`, as a page with `status`.
pub(super) fn page(
    env: &Environment<'static>,
    status: StatusCode,
    template: &str,
    context: impl Serialize,
) -> Response {
    match env.get_template(template).and_then(|t| t.render(context)) {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => {
            tracing::error!(error = %e, template, "the review console could not render a page");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The page could not be rendered; the server log has the detail.",
            )
                .into_response()
        }
    }
}

/// `GET /style.css`.
pub(super) async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

/// Headers of every response: no scripts, no framing, nothing cached but the stylesheet,
/// no sniffing, no referrer outside the console.
pub(super) async fn security_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// `value` as one URL path segment: every byte but unreserved characters percent-encoded.
pub(super) fn path_segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Arguments as stored (JSON text), pretty-printed for reading; as stored if not JSON.
/// A tool surface's fingerprint as a person compares it: its first 12 hexadecimal
/// digits (`sha256:` dropped).
pub(super) fn short_surface(fingerprint: &str) -> String {
    let hex = fingerprint.strip_prefix("sha256:").unwrap_or(fingerprint);
    hex.chars().take(12).collect()
}

pub(super) fn pretty_json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| text.to_string())
}

/// A stored time as the templates show it: `text` for people ("3 min ago", "in 23 h",
/// "20 Nov 2026, 08:15 UTC"), `utc` to the second for the hover, `iso` for `datetime`.
pub(super) fn when(text: &str) -> serde_json::Value {
    serde_json::json!({
        "text": human_time(text, chrono::Utc::now()),
        "utc": short_time(text),
        "iso": text,
    })
}

/// `text` relative to `now` when it is within a day, else the date and minute in UTC.
pub(super) fn human_time(text: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) else {
        return short_time(text);
    };
    let t = t.with_timezone(&chrono::Utc);
    let secs = (now - t).num_seconds();
    let (ago, s) = if secs >= 0 {
        (true, secs)
    } else {
        (false, -secs)
    };
    let span = match s {
        0..60 => {
            return if ago {
                "just now".into()
            } else {
                "in under a minute".into()
            };
        }
        60..3600 => format!("{} min", s / 60),
        3600..86400 => format!("{} h {} min", s / 3600, (s % 3600) / 60),
        _ => return t.format("%-d %b %Y, %H:%M UTC").to_string(),
    };
    if ago {
        format!("{span} ago")
    } else {
        format!("in {span}")
    }
}

/// A stored time (`2026-11-20T08:15:02.123456Z`) to the second, as people read it.
pub(super) fn short_time(text: &str) -> String {
    match text.split_once('T') {
        Some((date, time)) => {
            let time: String = time.chars().take(8).collect();
            format!("{date} {time} UTC")
        }
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_load() {
        let env = environment();
        for (name, _) in TEMPLATES {
            assert!(env.get_template(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn path_segments_encode_everything_reserved() {
        assert_eq!(path_segment("run-1.a_b~"), "run-1.a_b~");
        assert_eq!(path_segment("a/b?c#d e"), "a%2Fb%3Fc%23d%20e");
    }

    #[test]
    fn values_are_escaped() {
        let env = environment();
        let html = env
            .render_str(
                "{{ v }}",
                serde_json::json!({"v": "<script>alert(1)</script>"}),
            )
            .unwrap();
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn times_read_as_people_say_them() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(human_time("2026-11-20T09:59:30.5Z", now), "just now");
        assert_eq!(human_time("2026-11-20T09:57:00Z", now), "3 min ago");
        assert_eq!(human_time("2026-11-20T07:30:00Z", now), "2 h 30 min ago");
        assert_eq!(human_time("2026-11-21T09:00:00Z", now), "in 23 h 0 min");
        assert_eq!(
            human_time("2026-11-02T08:15:02Z", now),
            "2 Nov 2026, 08:15 UTC"
        );
        assert_eq!(human_time("not a time", now), "not a time");
    }

    #[test]
    fn times_read_to_the_second() {
        assert_eq!(
            short_time("2026-11-20T08:15:02.123456Z"),
            "2026-11-20 08:15:02 UTC"
        );
    }
}
