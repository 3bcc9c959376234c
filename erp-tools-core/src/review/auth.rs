//! Signing in and out. The token is checked by [`authenticate`], the console's only call
//! into token verification.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::json;

use super::config::REVIEW_READ;
use super::pages::Console;
use super::render;
use super::session::{
    SESSION_COOKIE, SIGN_IN_COOKIE, SIGN_IN_TTL_SECS, cookie, now_secs, random_token, same_secret,
    set_cookie,
};
use crate::auth::{AuthError, Authenticator};
use crate::tool::context::Principal;

/// Verifies a reviewer's token exactly as the MCP endpoint does, with the same
/// [`Authenticator`] (signature, expiry, audience, issuer, the principal resolver): the
/// caller and when the token expires (seconds since the Unix epoch).
pub(super) async fn authenticate(
    authenticator: &Authenticator,
    token: &str,
) -> Result<(Principal, u64), AuthError> {
    let identity = authenticator.authenticate(token).await?;
    let expires = identity
        .expires_at
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(u64::MAX, |d| d.as_secs());
    Ok((identity.principal, expires))
}

/// The sign-in form's fields.
#[derive(Deserialize)]
pub(super) struct SignInForm {
    #[serde(default)]
    token: String,
    #[serde(default)]
    csrf: String,
    /// The console page to return to.
    #[serde(default)]
    next: String,
}

/// The sign-in page's query: the page asked for before signing in.
#[derive(Deserialize)]
pub(super) struct NextQuery {
    #[serde(default)]
    next: String,
}

/// `GET /sign-in?next=`: the form, with a fresh CSRF token in the form and in a cookie.
pub(super) async fn sign_in_page(
    State(c): State<Arc<Console>>,
    Query(q): Query<NextQuery>,
) -> Response {
    sign_in_form(&c, StatusCode::OK, None, &q.next)
}

fn sign_in_form(c: &Console, status: StatusCode, error: Option<String>, next: &str) -> Response {
    let next = c.local_path(next);
    let Some(csrf) = random_token() else {
        return c.message(
            None,
            StatusCode::SERVICE_UNAVAILABLE,
            "Cannot sign in now",
            "The server could not create a sign-in form; try again.",
        );
    };
    let mut response = render::page(
        &c.env,
        status,
        "sign_in.html",
        json!({
            "base": c.base(), "csrf": csrf, "error": error, "me": null, "notice": null,
            "nav": "", "next": next,
        }),
    );
    let cookie = set_cookie(
        SIGN_IN_COOKIE,
        &csrf,
        c.base(),
        SIGN_IN_TTL_SECS,
        c.config.secure_cookie,
    );
    if let Ok(v) = cookie.parse() {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// `POST /sign-in`: checks the form's CSRF token against its cookie, then the token; a
/// token without [`REVIEW_READ`] is refused.
pub(super) async fn sign_in(
    State(c): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let expected = cookie(&headers, SIGN_IN_COOKIE).unwrap_or_default();
    if expected.is_empty() || !same_secret(&expected, form.csrf.trim()) {
        return c.csrf_refused(None);
    }
    let (principal, expires) = match authenticate(&c.config.authenticator, form.token.trim()).await
    {
        Ok(ok) => ok,
        Err(e) => {
            let why = format!("The token was refused: {e}.");
            return sign_in_form(&c, StatusCode::UNAUTHORIZED, Some(why), &form.next);
        }
    };
    if !principal.has_scope(REVIEW_READ) {
        return c.message(
            None,
            StatusCode::FORBIDDEN,
            "Not a reviewer",
            &format!(
                "This token is valid but does not grant {REVIEW_READ}, which the review \
                 console needs. Ask for a token with {REVIEW_READ} (and review:approve to \
                 decide approvals)."
            ),
        );
    }
    let now = now_secs();
    let Some(id) = c.sessions.start(principal, expires).await else {
        return c.message(
            None,
            StatusCode::SERVICE_UNAVAILABLE,
            "Cannot sign in now",
            "The server could not start a session; try again.",
        );
    };
    let secure = c.config.secure_cookie;
    let session = set_cookie(
        SESSION_COOKIE,
        &id,
        c.base(),
        expires.saturating_sub(now),
        secure,
    );
    let clear = set_cookie(SIGN_IN_COOKIE, "", c.base(), 0, secure);
    let to = c
        .local_path(form.next.trim())
        .unwrap_or_else(|| format!("{}/runs", c.base()));
    let mut response = Redirect::to(&to).into_response();
    for v in [session, clear] {
        if let Ok(v) = v.parse() {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    response
}

/// The sign-out form's fields.
#[derive(Deserialize)]
pub(super) struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /sign-out`.
pub(super) async fn sign_out(
    State(c): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let Some(session) = c.sessions.current(&headers).await else {
        return Redirect::to(&format!("{}/sign-in", c.base())).into_response();
    };
    if !same_secret(&session.csrf, form.csrf.trim()) {
        return c.csrf_refused(Some(&session));
    }
    c.sessions.end(&headers).await;
    let clear = set_cookie(SESSION_COOKIE, "", c.base(), 0, c.config.secure_cookie);
    let mut response = Redirect::to(&format!("{}/sign-in", c.base())).into_response();
    if let Ok(v) = clear.parse() {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}
