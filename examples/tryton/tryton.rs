//! A small client for Tryton's REST API (`trytond/protocols/rest.py`): search, read and
//! create, as one Tryton user (their REST key) inside one company (the
//! `X-Tryton-Context` header on every request), with Tryton's answers mapped to
//! [`RemoteError`].
//!
//! Every request carries the caller's own company, never another: Tryton keeps each
//! user's companies per process, keyed by the user alone (`res.user.get_companies`, cached
//! from that user's first request after a start), so one request with a company the user
//! does not belong to (or none, `0`) would leave that user seeing no company-bound record
//! (no supplier prices, no purchases) until Tryton restarts. The client therefore learns
//! each person's companies first with Tryton's own login step
//! (`res.user/get_preferences`, no context: Tryton answers with the person's own company),
//! and refuses, without sending anything, a request for a company that is not theirs.
//!
//! What Tryton 8.2 answers (recorded against the scripted Tryton, see scripts/tryton/):
//! - a created record: HTTP 200 with the record (`{"__name__": "purchase.purchase", "id":
//!   7, "number": null, "state": "draft", ...}` for the fields asked with `f=`);
//! - validation: HTTP 400 `{"status": 400, "message": "A value is required for field
//!   \"Unit\" in record ...", "description": ""}`;
//! - access: HTTP 400 too, `"You are not allowed to access \"Purchase\"."` (no group) or
//!   `"You are not allowed to create records of \"Purchase Line\" because they fail on at
//!   least one of these rules:\nUser in companies"` (another company);
//! - a missing or unknown key: HTTP 401 (an HTML page);
//! - an unknown field or a server fault: HTTP 500 (an HTML page; the transaction was
//!   rolled back, but a 5xx may also come from a proxy after the commit: answered without
//!   a result, the outcome unknown).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use erp_tools_core::ToolError;
use erp_tools_core::page::{Condition, Page, PageRequest, RemoteKeyset};
use erp_tools_core::remote::RemoteError;
use serde_json::{Value, json};

/// Tryton's name in model-facing text.
pub const SYSTEM: &str = "Tryton";

/// The REST API of one Tryton database, with every person's key.
#[derive(Clone)]
pub struct Tryton {
    http: reqwest::Client,
    /// `http://host:port/<database>`.
    base: String,
    /// Subject → REST key (`res.user.application`).
    keys: HashMap<String, String>,
    /// Subject → the person's own Tryton companies, learned on their first request.
    companies: Arc<Mutex<HashMap<String, Vec<i64>>>>,
}

impl std::fmt::Debug for Tryton {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tryton")
            .field("base", &self.base)
            .field("users", &self.keys.len())
            .finish_non_exhaustive()
    }
}

/// Who a request runs as, and in which company.
#[derive(Clone, Debug)]
pub struct Caller<'a> {
    /// The person (token subject); their key is looked up.
    pub user: &'a str,
    /// The Tryton company of their branch.
    pub company: i64,
}

impl Tryton {
    /// From `ERP_TOOLS_TRYTON_URL` (base URL including the database) and
    /// `ERP_TOOLS_TRYTON_KEYS` (a JSON file: subject → key).
    pub fn from_env(timeout: Duration) -> Result<Tryton, String> {
        let base = std::env::var("ERP_TOOLS_TRYTON_URL").map_err(|_| {
            "set ERP_TOOLS_TRYTON_URL to Tryton's base URL including the database, e.g. \
             http://127.0.0.1:8000/erp (scripts/tryton/start.sh prints it)"
                .to_string()
        })?;
        let path = std::env::var("ERP_TOOLS_TRYTON_KEYS").map_err(|_| {
            "set ERP_TOOLS_TRYTON_KEYS to a JSON file mapping each subject to their Tryton REST key"
                .to_string()
        })?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("ERP_TOOLS_TRYTON_KEYS {path}: {e}"))?;
        let keys: HashMap<String, String> = serde_json::from_str(&text).map_err(|e| {
            format!("ERP_TOOLS_TRYTON_KEYS {path}: not a JSON object of subject -> key: {e}")
        })?;
        Tryton::new(&base, keys, timeout)
    }

    /// A client for `base` with `keys`.
    pub fn new(
        base: &str,
        keys: HashMap<String, String>,
        timeout: Duration,
    ) -> Result<Tryton, String> {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Tryton {
            http,
            base: base.trim_end_matches('/').to_string(),
            keys,
            companies: Arc::default(),
        })
    }

    /// The subjects that have a key, in order.
    pub fn subjects(&self) -> Vec<&str> {
        let mut subjects: Vec<&str> = self.keys.keys().map(String::as_str).collect();
        subjects.sort_unstable();
        subjects
    }

    /// The companies `user` belongs to in Tryton (their own company first), as Tryton's
    /// login step tells them: `POST res.user/get_preferences` without a context, so
    /// Tryton applies the person's own preferences. Asked once per person.
    pub async fn own_companies(&self, user: &str) -> Result<Vec<i64>, RemoteError> {
        if let Some(known) = self.known_companies(user) {
            return Ok(known);
        }
        let key = self.key(user)?;
        let request = self
            .http
            .post(format!("{}/get_preferences", self.url("res.user")))
            .json(&json!({"context_only": true}))
            .header("Authorization", format!("bearer {key}"));
        let prefs = self.answer(request, user).await?;
        let mut companies: Vec<i64> = prefs["companies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .collect();
        if let Some(own) = prefs["company"].as_i64() {
            companies.retain(|c| *c != own);
            companies.insert(0, own);
        }
        self.companies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(user.to_string(), companies.clone());
        Ok(companies)
    }

    fn known_companies(&self, user: &str) -> Option<Vec<i64>> {
        let known = self.companies.lock().unwrap_or_else(|e| e.into_inner());
        known.get(user).cloned()
    }

    fn key(&self, user: &str) -> Result<&str, RemoteError> {
        self.keys
            .get(user)
            .map(String::as_str)
            .ok_or_else(|| RemoteError::Denied {
                status: 401,
                user: user.to_string(),
                message: "this person has no Tryton REST key configured (ERP_TOOLS_TRYTON_KEYS)"
                    .into(),
            })
    }

    fn url(&self, model: &str) -> String {
        format!("{}/rest/model/{model}", self.base)
    }

    /// `GET .../<model>?d=<domain>&f=<fields>`: the records `caller` may see. (Field names
    /// and URL-safe base64 need no percent-encoding.)
    pub async fn search(
        &self,
        caller: &Caller<'_>,
        model: &str,
        domain: &Value,
        fields: &[&str],
        limit: Option<usize>,
    ) -> Result<Vec<Value>, RemoteError> {
        self.search_ordered(caller, model, domain, fields, &[], limit)
            .await
    }

    /// The same search in an order (`o=`: each field with `ASC` or `DESC`, as
    /// [`RemoteKeyset::order`](erp_tools_core::page::RemoteKeyset::order) gives it).
    pub async fn search_ordered(
        &self,
        caller: &Caller<'_>,
        model: &str,
        domain: &Value,
        fields: &[&str],
        order: &[(&str, &str)],
        limit: Option<usize>,
    ) -> Result<Vec<Value>, RemoteError> {
        let mut url = format!("{}?d={}", self.url(model), b64(domain));
        for f in fields {
            url.push_str("&f=");
            url.push_str(f);
        }
        if !order.is_empty() {
            url.push_str("&o=");
            url.push_str(&b64(&json!(order)));
        }
        if let Some(limit) = limit {
            url.push_str(&format!("&s={limit}"));
        }
        let request = self.http.get(url);
        let value = self.send(caller, request).await?;
        match value {
            Value::Array(records) => Ok(records),
            other => Err(RemoteError::NoResult {
                status: 200,
                detail: format!("a search answered something else than a list: {other}"),
            }),
        }
    }

    // ANCHOR: search_page
    /// One page of `model`'s records matching `base`, in `keyset`'s order, after the key
    /// in the page's cursor (a domain after the last key, Tryton's order, a limit of one
    /// more than the page, no offset), with `fields` (which name the key's fields). A
    /// failure is told to the model as a read that Tryton did not answer.
    pub async fn search_page(
        &self,
        caller: &Caller<'_>,
        model: &str,
        keyset: RemoteKeyset,
        base: Vec<Value>,
        fields: &[&str],
        page: &PageRequest,
    ) -> Result<Page<Value>, ToolError> {
        keyset
            .page(
                page,
                |after, limit| async move {
                    let domain = domain_after(base, after);
                    self.search_ordered(
                        caller,
                        model,
                        &domain,
                        fields,
                        &keyset.order(),
                        Some(limit),
                    )
                    .await
                    .map_err(|e| e.to_read_error(SYSTEM))
                },
                |row| {
                    keyset
                        .fields()
                        .iter()
                        .map(|f| field(row, f).clone())
                        .collect()
                },
            )
            .await
    }
    // ANCHOR_END: search_page

    /// `POST .../<model>?f=<fields>` with `body`: the created record.
    pub async fn create(
        &self,
        caller: &Caller<'_>,
        model: &str,
        body: &Value,
        fields: &[&str],
    ) -> Result<Value, RemoteError> {
        let fields: Vec<String> = fields.iter().map(|f| format!("f={f}")).collect();
        let url = format!("{}?{}", self.url(model), fields.join("&"));
        let request = self.http.post(url).json(body);
        self.send(caller, request).await
    }

    /// Sends `request` as `caller`, inside their company (which must be one of theirs).
    async fn send(
        &self,
        caller: &Caller<'_>,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, RemoteError> {
        let key = self.key(caller.user)?;
        let companies = self.own_companies(caller.user).await?;
        if !companies.contains(&caller.company) {
            return Err(RemoteError::Denied {
                status: 403,
                user: caller.user.to_string(),
                message: format!(
                    "company {} is not one of this person's Tryton companies ({companies:?}); \
                     the request was not sent",
                    caller.company
                ),
            });
        }
        let context = json!({"company": caller.company, "companies": [caller.company]});
        let request = request
            .header("Authorization", format!("bearer {key}"))
            .header("X-Tryton-Context", b64(&context));
        self.answer(request, caller.user).await
    }

    /// Sends a request that is ready (key and context set) and reads Tryton's answer.
    async fn answer(
        &self,
        request: reqwest::RequestBuilder,
        user: &str,
    ) -> Result<Value, RemoteError> {
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status().as_u16();
        let body = response.text().await.map_err(|e| RemoteError::Unknown {
            status: Some(status),
            detail: format!("the answer was cut off: {e}"),
        })?;
        if (200..300).contains(&status) {
            return serde_json::from_str(&body).map_err(|e| RemoteError::NoResult {
                status,
                detail: format!("the answer is not JSON ({e}): {}", short(&body)),
            });
        }
        Err(classify(status, &body, user))
    }
}

/// A request that failed without an HTTP answer: not sent (no connection), timed out, or
/// the connection ended without an answer.
fn transport_error(e: reqwest::Error) -> RemoteError {
    let e = e.without_url();
    if e.is_connect() {
        RemoteError::Unreachable {
            detail: e.to_string(),
        }
    } else if e.is_timeout() {
        RemoteError::TimedOut {
            detail: e.to_string(),
        }
    } else {
        RemoteError::Unknown {
            status: None,
            detail: e.to_string(),
        }
    }
}

/// Tryton's answer with an error status, as a [`RemoteError`]: access errors come as
/// HTTP 400 too, told apart by their message.
pub fn classify(status: u16, body: &str, user: &str) -> RemoteError {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let description = parsed
        .as_ref()
        .and_then(|v| v.get("description"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    let text = match (&message, &description) {
        (Some(m), Some(d)) => format!("{m} ({d})"),
        (Some(m), None) => m.clone(),
        _ => short(body),
    };
    match status {
        401 => RemoteError::Denied {
            status,
            user: user.to_string(),
            message: "Tryton did not accept this person's REST key".into(),
        },
        400 if message.as_deref().is_some_and(is_access_error) => RemoteError::Denied {
            status,
            user: user.to_string(),
            message: text,
        },
        _ => RemoteError::from_status(status, user, text),
    }
}

/// Whether a 400's message is one of Tryton's access errors.
fn is_access_error(message: &str) -> bool {
    message.starts_with("You are not allowed") || message.contains("User in companies")
}

// ANCHOR: domain_after
/// A Tryton domain: `base` (clauses that all hold) and, from the second page on, the
/// records after the last key (`["OR", [clauses], ..]`, from
/// [`RemoteKeyset::after`](erp_tools_core::page::RemoteKeyset::after)).
pub fn domain_after(base: Vec<Value>, after: Option<Vec<Vec<Condition>>>) -> Value {
    let mut domain = base;
    if let Some(after) = after {
        let mut or = vec![json!("OR")];
        or.extend(after.iter().map(|all| {
            Value::Array(
                all.iter()
                    .map(|c| json!([c.field, c.op.as_str(), c.value]))
                    .collect(),
            )
        }));
        domain.push(Value::Array(or));
    }
    Value::Array(domain)
}
// ANCHOR_END: domain_after

/// A record's field as the REST API returns it: `party.name` is `{"party": {"name": ..}}`.
fn field<'a>(record: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(record, |value, name| &value[name])
}

/// URL-safe base64 of a JSON value (Tryton's `d=`, `o=` and `X-Tryton-Context`).
pub fn b64(value: &Value) -> String {
    URL_SAFE.encode(value.to_string())
}

/// An HTML error page as one short line of text.
fn short(body: &str) -> String {
    let text: String = body
        .split(['<', '>'])
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, t)| t.trim())
        .filter(|t| !t.is_empty() && !t.starts_with("!doctype"))
        .collect::<Vec<_>>()
        .join(" ");
    text.chars().take(300).collect()
}

/// A Tryton decimal (`{"__class__": "Decimal", "decimal": "9.50"}`).
pub fn decimal(value: &Value) -> Option<rust_decimal::Decimal> {
    value.get("decimal")?.as_str()?.parse().ok()
}

/// A decimal as Tryton reads it.
pub fn to_decimal(d: rust_decimal::Decimal) -> Value {
    json!({"__class__": "Decimal", "decimal": d.to_string()})
}

/// The id of a many2one as the REST API returns it (an id, or `{"id": ..}` with `f=x.y`).
pub fn id_of(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| value.get("id")?.as_i64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_domain_after_a_key_is_an_or_of_the_keysets_alternatives() {
        use erp_tools_core::page::{PageRequest, RemoteKeyset};
        let keyset = RemoteKeyset::ascending(&["name", "id"]);
        let base = vec![json!(["purchasable", "=", true])];
        let first = keyset.after(&PageRequest::first(10)).unwrap();
        assert_eq!(
            domain_after(base.clone(), first),
            json!([["purchasable", "=", true]])
        );
        let next = keyset
            .after(&PageRequest::after_key(10, json!(["Gula", 3])))
            .unwrap();
        assert_eq!(
            domain_after(base, next),
            json!([
                ["purchasable", "=", true],
                [
                    "OR",
                    [["name", ">", "Gula"]],
                    [["name", "=", "Gula"], ["id", ">", 3]]
                ]
            ])
        );
    }

    #[test]
    fn tryton_answers_are_classified_by_status_and_message() {
        let access = r#"{"status": 400, "message": "You are not allowed to access \"Purchase\".", "description": "Within groups: "}"#;
        assert!(matches!(
            classify(400, access, "clerk"),
            RemoteError::Denied { .. }
        ));
        let invalid = r#"{"status": 400, "message": "A value is required for field \"Unit\".", "description": ""}"#;
        assert!(matches!(
            classify(400, invalid, "b"),
            RemoteError::Invalid { .. }
        ));
        assert!(matches!(
            classify(401, "<html>", "b"),
            RemoteError::Denied { .. }
        ));
        assert!(matches!(
            classify(502, "Bad Gateway", "b"),
            RemoteError::NoResult { status: 502, .. }
        ));
    }
}
