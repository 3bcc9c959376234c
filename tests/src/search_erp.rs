//! A small ERP whose search API reads Tryton-style domains, for the remote keyset tests
//! (no Python needed):
//!
//! - `GET /items?d=<domain>&o=<order>&s=<limit>`: the items matching the domain (URL-safe
//!   base64 of JSON: clauses `[field, op, value]` that all hold, an element `["OR",
//!   [clauses], ..]` for alternatives; fields `id` and `name`; ops `=`, `>`, `<`, `>=`),
//!   in the order (`[[field, "ASC" | "DESC"], ..]`), at most `s` of them. An offset (`p`)
//!   is refused: the keyset never needs one.
//! - `POST /items` with `{"name": ..}`: a new item, its id the next one.
//!
//! Every search is logged (its limit and how many items it answered) for the tests to
//! check what each page cost the ERP. Listens on 127.0.0.1 only.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use serde_json::{Value, json};

/// One search as the ERP received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// The limit asked for (`s`).
    pub limit: Option<usize>,
    /// Items answered.
    pub answered: usize,
}

#[derive(Default)]
struct Books {
    items: Vec<(i64, String)>,
    searches: Vec<Search>,
}

type Shared = Arc<Mutex<Books>>;

/// A running search ERP.
pub struct SearchErp {
    /// Where it listens (127.0.0.1).
    pub addr: SocketAddr,
    books: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for SearchErp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchErp")
            .field("addr", &self.addr)
            .finish()
    }
}

impl SearchErp {
    /// Starts it on a free port of 127.0.0.1 with `names` as its first items (ids 1, 2, ..).
    pub async fn start(names: impl IntoIterator<Item = String>) -> SearchErp {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("address");
        let books = Shared::default();
        for name in names {
            insert(&books, name);
        }
        let app = Router::new()
            .route("/items", get(search).post(create))
            .with_state(books.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        SearchErp { addr, books, task }
    }

    /// The base URL, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every item (id, name), in creation order.
    pub fn items(&self) -> Vec<(i64, String)> {
        self.books.lock().unwrap().items.clone()
    }

    /// Every search received, in order.
    pub fn searches(&self) -> Vec<Search> {
        self.books.lock().unwrap().searches.clone()
    }
}

impl Drop for SearchErp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn insert(books: &Shared, name: String) -> i64 {
    let mut books = books.lock().unwrap();
    let id = books.items.len() as i64 + 1;
    books.items.push((id, name));
    id
}

async fn create(State(books): State<Shared>, Json(body): Json<Value>) -> (StatusCode, Json<Value>) {
    let Some(name) = body["name"].as_str() else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"message": "name is required"})),
        );
    };
    let id = insert(&books, name.to_string());
    (StatusCode::OK, Json(json!({"id": id, "name": name})))
}

fn decoded(param: Option<&String>) -> Result<Value, String> {
    let Some(text) = param else {
        return Ok(json!([]));
    };
    let bytes = URL_SAFE.decode(text).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

async fn search(
    State(books): State<Shared>,
    Query(params): Query<HashMap<String, String>>,
) -> (StatusCode, Json<Value>) {
    let bad = |m: String| (StatusCode::BAD_REQUEST, Json(json!({"message": m})));
    if params.contains_key("p") {
        return bad("this ERP pages by key only: no offset".into());
    }
    let (domain, order) = match (decoded(params.get("d")), decoded(params.get("o"))) {
        (Ok(d), Ok(o)) => (d, o),
        (Err(e), _) | (_, Err(e)) => return bad(e),
    };
    let limit = match params.get("s").map(|s| s.parse::<usize>()) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => return bad(e.to_string()),
    };
    let mut books = books.lock().unwrap();
    let mut found = Vec::new();
    for (id, name) in &books.items {
        let item = json!({"id": id, "name": name});
        match matches_all(&domain, &item) {
            Ok(true) => found.push(item),
            Ok(false) => {}
            Err(e) => return bad(e),
        }
    }
    found.sort_by(|a, b| compare(&order, a, b));
    if let Some(limit) = limit {
        found.truncate(limit);
    }
    books.searches.push(Search {
        limit,
        answered: found.len(),
    });
    (StatusCode::OK, Json(Value::Array(found)))
}

/// Whether every clause of `domain` holds for `item`.
fn matches_all(domain: &Value, item: &Value) -> Result<bool, String> {
    let clauses = domain.as_array().ok_or("a domain is a list")?;
    for clause in clauses {
        if !matches(clause, item)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn matches(clause: &Value, item: &Value) -> Result<bool, String> {
    let parts = clause.as_array().ok_or("a clause is a list")?;
    if parts.first() == Some(&json!("OR")) {
        for alternative in &parts[1..] {
            if matches_all(alternative, item)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let [field, op, value] = parts.as_slice() else {
        return Err(format!("a clause has three parts: {clause}"));
    };
    let field = field.as_str().ok_or("a field is a string")?;
    let have = item
        .get(field)
        .ok_or_else(|| format!("unknown field {field}"))?;
    let ord = cmp_values(have, value);
    Ok(match op.as_str() {
        Some("=") => ord == Ordering::Equal,
        Some(">") => ord == Ordering::Greater,
        Some("<") => ord == Ordering::Less,
        Some(">=") => ord != Ordering::Less,
        _ => return Err(format!("unknown operator {op}")),
    })
}

fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .partial_cmp(&y.as_f64())
            .unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

fn compare(order: &Value, a: &Value, b: &Value) -> Ordering {
    for term in order.as_array().into_iter().flatten() {
        let field = term[0].as_str().unwrap_or("id");
        let ord = cmp_values(&a[field], &b[field]);
        let ord = if term[1] == "DESC" {
            ord.reverse()
        } else {
            ord
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}
