//! A small REST ERP that names its documents with strings, as ERPNext does
//! (`PUR-ORD-2026-00001`), for the remote-draft tests and the guide's remote-draft server (guide/src/drafts.md):
//!
//! - `GET /api/resource/Supplier`: `{"data": [{"name": "SUP-0001", "supplier_name": ..}]}`;
//! - `POST /api/resource/Purchase Order` with `{"supplier", "items": [{"item_code",
//!   "qty"}], "erp_tools_marker"}`: `{"data": {"name": "PUR-ORD-2026-00001", "status":
//!   "Draft", ..}}`, or `417 {"exception": .., "message": "Could not find Supplier: X"}`;
//! - `GET /api/resource/Purchase Order?filters=[["erp_tools_marker","=","<marker>"]]`: the
//!   orders carrying that marker;
//! - every request needs `Authorization: token <key>` of a known person (401 otherwise);
//! - `POST /_fixture/arm?fault=no-result|hold`: the next create is committed, then
//!   answered `502` without a result, or held 3 s (past a client's timeout); `GET
//!   /_fixture/orders` lists every order (the tests' and CI's count).
//!
//! Listens on 127.0.0.1 only.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// What the next create does after committing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Answers normally.
    None,
    /// Commits, then answers `502 Bad Gateway` (as a proxy in front of the ERP would).
    NoResult,
    /// Commits, then holds the answer for 3 s.
    Hold,
}

#[derive(Default)]
struct Books {
    orders: Vec<Value>,
    creates: u64,
    next: Option<Fault>,
}

#[derive(Clone)]
struct Erp {
    books: Arc<Mutex<Books>>,
    /// key → person
    keys: Arc<Vec<(String, String)>>,
}

/// The suppliers every person sees.
const SUPPLIERS: &[(&str, &str)] = &[
    ("SUP-0001", "PT Sumber Beras"),
    ("SUP-0002", "CV Minyak Jaya"),
];

/// A running REST ERP.
pub struct RestErp {
    /// Where it listens (127.0.0.1).
    pub addr: SocketAddr,
    books: Arc<Mutex<Books>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for RestErp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestErp").field("addr", &self.addr).finish()
    }
}

impl RestErp {
    /// The API key of `buyer` (the one person it knows besides `clerk`, whose key is
    /// [`CLERK_KEY`]).
    pub const BUYER_KEY: &'static str = "key-buyer";

    /// Starts it on a free port of 127.0.0.1 (`port` 0) or on `port`.
    pub async fn start(port: u16) -> RestErp {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("address");
        let books = Arc::new(Mutex::new(Books::default()));
        let erp = Erp {
            books: books.clone(),
            keys: Arc::new(vec![
                (Self::BUYER_KEY.into(), "buyer".into()),
                (CLERK_KEY.into(), "clerk".into()),
            ]),
        };
        let app = Router::new()
            .route("/api/resource/Supplier", get(suppliers))
            .route("/api/resource/{doctype}", get(search).post(create))
            .route("/_fixture/arm", post(arm))
            .route("/_fixture/orders", get(all_orders))
            .with_state(erp);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        RestErp { addr, books, task }
    }

    /// The base URL, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sets what the next create does after committing.
    pub fn arm(&self, fault: Fault) {
        self.books.lock().unwrap().next = Some(fault);
    }

    /// Every order, oldest first.
    pub fn orders(&self) -> Vec<Value> {
        self.books.lock().unwrap().orders.clone()
    }

    /// Creates received (committed or not).
    pub fn creates(&self) -> u64 {
        self.books.lock().unwrap().creates
    }
}

impl Drop for RestErp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The API key of `clerk`, who may read but not create purchase orders (403).
pub const CLERK_KEY: &str = "key-clerk";

/// The person whose key the request carries, if it is a known key.
fn person(erp: &Erp, headers: &HeaderMap) -> Option<String> {
    let key = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("token "))
        .unwrap_or_default();
    erp.keys
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, p)| p.clone())
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"message": "Invalid API key"})),
    )
        .into_response()
}

async fn suppliers(State(erp): State<Erp>, headers: HeaderMap) -> Response {
    if person(&erp, &headers).is_none() {
        return unauthorized();
    }
    let data: Vec<Value> = SUPPLIERS
        .iter()
        .map(|(name, title)| json!({"name": name, "supplier_name": title}))
        .collect();
    Json(json!({ "data": data })).into_response()
}

async fn search(
    State(erp): State<Erp>,
    Path(doctype): Path<String>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if person(&erp, &headers).is_none() {
        return unauthorized();
    }
    if doctype != "Purchase Order" {
        return not_found(&doctype);
    }
    let filters: Value = q
        .get("filters")
        .and_then(|f| serde_json::from_str(f).ok())
        .unwrap_or(json!([]));
    let marker = filters[0][2].as_str().map(str::to_string);
    let books = erp.books.lock().unwrap();
    let data: Vec<Value> = books
        .orders
        .iter()
        .filter(|o| marker.is_none() || o["erp_tools_marker"].as_str() == marker.as_deref())
        .cloned()
        .collect();
    Json(json!({ "data": data })).into_response()
}

async fn create(
    State(erp): State<Erp>,
    Path(doctype): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let Some(who) = person(&erp, &headers) else {
        return unauthorized();
    };
    if doctype != "Purchase Order" {
        return not_found(&doctype);
    }
    let fault = {
        let mut books = erp.books.lock().unwrap();
        books.creates += 1;
        if who == "clerk" {
            return (
                StatusCode::FORBIDDEN,
                Json(json!({"exception": "frappe.exceptions.PermissionError",
                    "message": "Insufficient Permission for Purchase Order"})),
            )
                .into_response();
        }
        let supplier = body["supplier"].as_str().unwrap_or_default();
        if !SUPPLIERS.iter().any(|(s, _)| *s == supplier) {
            return (
                StatusCode::EXPECTATION_FAILED,
                Json(json!({"exception": "frappe.exceptions.LinkValidationError",
                    "message": format!("Could not find Supplier: {supplier}")})),
            )
                .into_response();
        }
        let name = format!("PUR-ORD-2026-{:05}", books.orders.len() + 1);
        let mut order = body.clone();
        order["name"] = json!(name);
        order["status"] = json!("Draft");
        order["owner"] = json!(who);
        books.orders.push(order);
        books.next.take().unwrap_or(Fault::None)
    };
    let order = erp.books.lock().unwrap().orders.last().cloned();
    match fault {
        Fault::NoResult => (StatusCode::BAD_GATEWAY, "Bad Gateway").into_response(),
        Fault::Hold => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(json!({ "data": order })).into_response()
        }
        Fault::None => Json(json!({ "data": order })).into_response(),
    }
}

fn not_found(doctype: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Json(json!({"message": format!("DocType {doctype} not found")})),
    )
        .into_response()
}

async fn arm(
    State(erp): State<Erp>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let fault = match q.get("fault").map(String::as_str) {
        Some("no-result") => Fault::NoResult,
        Some("hold") => Fault::Hold,
        _ => return (StatusCode::BAD_REQUEST, "fault=no-result|hold").into_response(),
    };
    erp.books.lock().unwrap().next = Some(fault);
    StatusCode::NO_CONTENT.into_response()
}

async fn all_orders(State(erp): State<Erp>) -> Response {
    Json(json!({ "data": erp.books.lock().unwrap().orders })).into_response()
}
