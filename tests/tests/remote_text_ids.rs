//! A remote draft into a REST ERP that names its documents with strings
//! (`tests/src/rest_erp.rs`, as ERPNext's `PUR-ORD-2026-00001`): the ERP's own id is carried
//! unchanged to the audit row, the idempotency key, the review console (its loader and the
//! `{id}` of the ERP link) and the card's links, and a resend after a 502 is found by its
//! marker; a retry of a key a killed process left `sending` waits for its lease and then
//! finds the draft by its marker, exactly once; on SQLite and PostgreSQL.

use std::sync::{Arc, Mutex};

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::mcp::apps::{LINKS_META_KEY, McpApps};
use erp_tools_core::prelude::*;
use erp_tools_core::remote::{BoxFuture, RemoteDraft, RemoteError, RemoteWrite};
use erp_tools_core::review::DocumentView;
use erp_tools_core::{DocumentId, Principal, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::mcp::{apps_host, call, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, REVIEWER};
use erp_tools_tests::rest_erp::{Fault, RestErp};
use erp_tools_tests::review::{Browser, ReviewServer};
use serde_json::{Value, json};

/// Each test's fixture ERP (its base URL), by the agent run the test drafts in.
static ERPS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// One create into the fixture ERP at `url`, as its buyer.
struct Order {
    url: String,
    body: Value,
}

async fn send(request: reqwest::RequestBuilder) -> Result<Value, RemoteError> {
    let response = request
        .header("Authorization", format!("token {}", RestErp::BUYER_KEY))
        .send()
        .await
        .map_err(|e| RemoteError::Unreachable {
            detail: e.to_string(),
        })?;
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        let message = body["message"].as_str().unwrap_or_default();
        return Err(RemoteError::from_status(status, "buyer", message));
    }
    Ok(body["data"].clone())
}

fn document(order: &Value) -> Option<DocumentRef> {
    let name = order["name"].as_str()?;
    Some(DocumentRef::new("purchase_order", name, name))
}

impl RemoteWrite for Order {
    fn system(&self) -> &str {
        "RestERP"
    }
    fn find_by_marker<'a>(
        &'a self,
        marker: &'a str,
    ) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>> {
        Box::pin(async move {
            let url = format!("{}/api/resource/Purchase Order", self.url);
            let filters = json!([["erp_tools_marker", "=", marker]]).to_string();
            let url = reqwest::Url::parse_with_params(&url, [("filters", filters)]).unwrap();
            let found = send(reqwest::Client::new().get(url)).await?;
            Ok(found.as_array().and_then(|a| a.first()).and_then(document))
        })
    }
    fn create<'a>(&'a self, marker: &'a str) -> BoxFuture<'a, Result<DocumentRef, RemoteError>> {
        Box::pin(async move {
            let url = format!("{}/api/resource/Purchase Order", self.url);
            let mut body = self.body.clone();
            body["erp_tools_marker"] = json!(marker);
            let order = send(reqwest::Client::new().post(url).json(&body)).await?;
            document(&order).ok_or(RemoteError::NoResult {
                status: 200,
                detail: order.to_string(),
            })
        })
    }
}

#[tool_args]
struct OrderArgs {
    /// Supplier id, e.g. SUP-0001
    supplier: String,
    /// Your own id for this order within the run. Reuse it when retrying.
    client_ref: String,
}

#[tool_output]
struct Ordered {
    /// The ERP's name of the order
    name: String,
}

/// Create a DRAFT purchase order in the REST ERP.
#[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
async fn draft_order(
    ctx: &ToolContext,
    erp: &mut RemoteDraft,
    args: OrderArgs,
) -> Result<Ordered, ToolError> {
    let url = ERPS
        .lock()
        .unwrap()
        .iter()
        .find(|(run, _)| run == ctx.agent_run_id())
        .map(|(_, url)| url.clone())
        .ok_or_else(|| ToolError::internal("no fixture ERP for this run"))?;
    let body = json!({"supplier": args.supplier, "items": [{"item_code": "BRG-0042", "qty": "1"}]});
    let doc = erp.write(&Order { url, body }).await?;
    Ok(Ordered { name: doc.number })
}

/// The pipeline over [`draft_order`] on `t`, drafting into a new fixture ERP for a new
/// run named `prefix-<unique>`: the runtime, the ERP and the run.
async fn drafting(t: &TestDb, prefix: &str) -> (ToolRuntime, RestErp, String) {
    let erp = RestErp::start(0).await;
    let run = format!("{prefix}-{}", erp_tools_tests::ids::unique_suffix());
    ERPS.lock().unwrap().push((run.clone(), erp.url()));
    let registry = ToolRegistry::builder()
        .module(
            "purchasing",
            "Purchase orders in the REST ERP. Cannot submit them.",
        )
        .tools(tools![draft_order])
        .card::<draft_order>(erp_tools_core::mcp::apps::DRAFT_CARD)
        .build()
        .unwrap();
    let runtime = ToolRuntime::new(Arc::new(registry), t.db.clone());
    (runtime, erp, run)
}

async fn string_ids_reach_the_audit_row_the_console_and_the_card(t: &TestDb) {
    let (runtime, erp, run) = drafting(t, "text-ids").await;
    let buyer = Principal::builder(BUYER.user_id, REVIEWER.branch.id, REVIEWER.branch.code)
        .scopes(["purchasing:draft"])
        .agent_run_id(run.clone())
        .build();
    let apps = McpApps::new()
        .console_url("http://127.0.0.1:8765/review")
        .erp_document_url("http://erp.test/app/purchase-order/{id}");
    let host = apps_host(ErpMcpServer::with_principal(runtime, buyer).with_apps(apps)).await;

    // A 502 after the ERP committed, then the resend: one order, found by its marker.
    erp.arm(Fault::NoResult);
    let args = json!({"supplier": "SUP-0001", "client_ref": "po-1"});
    let lost = host
        .call_tool(call("purchasing_draft_order", args.clone()))
        .await
        .unwrap();
    assert_eq!(lost.is_error, Some(true));
    assert!(
        text_of(&lost).starts_with("RestERP answered the draft with status 502 and no result"),
        "{}",
        text_of(&lost)
    );
    let result = host
        .call_tool(call("purchasing_draft_order", args))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert_eq!(erp.orders().len(), 1);
    let name = "PUR-ORD-2026-00001";
    assert_eq!(result.structured_content.as_ref().unwrap()["name"], name);

    // The card: the document as recorded, its id a JSON string, and the ERP link by id.
    let links = &result.meta.as_ref().unwrap().0[LINKS_META_KEY];
    assert_eq!(
        links["document_ref"],
        json!({"doc_type": "purchase_order", "id": name, "number": name})
    );
    assert_eq!(
        links["document"],
        json!(format!("http://erp.test/app/purchase-order/{name}"))
    );

    // The audit row and the key: the string id in document_text_id, unchanged.
    let log = t.db.audit_log(Some(&run)).await.unwrap();
    let row = log
        .iter()
        .rev()
        .find(|r| r.tool_name.as_deref() == Some("purchasing_draft_order"))
        .unwrap();
    let doc = row.document.clone().expect("the call's document");
    assert_eq!(doc.id, DocumentId::Text(name.into()));
    let (id, text_id): (Option<i64>, Option<String>) = erp_tools_core::sqlx::query_as(
        "SELECT document_id, document_text_id FROM erp_audit_log WHERE id = $1",
    )
    .bind(row.id)
    .fetch_one(t.db.audit_pool())
    .await
    .unwrap();
    assert_eq!((id, text_id.as_deref()), (None, Some(name)));
    let (id, text_id): (Option<i64>, Option<String>) = erp_tools_core::sqlx::query_as(
        "SELECT document_id, document_text_id FROM erp_idempotency_keys \
         WHERE agent_run_id = $1 AND client_ref = 'po-1'",
    )
    .bind(&run)
    .fetch_one(t.db.pool())
    .await
    .unwrap();
    assert_eq!((id, text_id.as_deref()), (None, Some(name)));

    // The console: Drafts lists it; its page loads it by the ERP's id and links to it.
    let loaded: Arc<Mutex<Vec<DocumentId>>> = Arc::default();
    let seen = loaded.clone();
    let view = DocumentView::new("purchase_order", "Purchase order in the REST ERP")
        .field("Name", "/name")
        .erp_url("http://erp.test/app/purchase-order/{id}")
        .loader(move |_branch, id, _number| {
            seen.lock().unwrap().push(id.clone());
            async move { Ok(Some(json!({"name": id.to_string()}))) }
        });
    let console = ReviewServer::configured(t, 20, |c| c.document_view(view)).await;
    let mut b = Browser::new(&console);
    let signed_in = b.sign_in(&console.token(&REVIEWER.principal())).await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.html);
    let drafts = b.get("/drafts").await;
    assert!(drafts.html.contains(name), "{}", drafts.html);
    let page = b.get(&format!("/documents/purchase_order/{name}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    // The link as the page writes it (the template escapes `/` in attributes).
    let link = format!("http://erp.test/app/purchase-order/{name}").replace('/', "&#x2f;");
    assert!(page.html.contains(&link), "{}", page.html);
    assert_eq!(*loaded.lock().unwrap(), [DocumentId::Text(name.into())]);
}
on_both_backends!(string_ids_reach_the_audit_row_the_console_and_the_card);

/// A process killed while its create was in flight leaves the key `sending`, owned by a
/// dead owner, with a lease that still runs (the create reached the ERP, the answer was
/// lost). Two retries of it do not answer "still writing" at once: they wait for the
/// lease, then the draft is looked up by its marker and settled; both answer it, and
/// the ERP holds one order, created once.
async fn a_retry_waits_for_a_dead_owners_sending_key_and_finds_the_draft(t: &TestDb) {
    let (runtime, erp, run) = drafting(t, "dead-sending").await;
    let buyer = Arc::new(
        Principal::builder(BUYER.user_id, REVIEWER.branch.id, REVIEWER.branch.code)
            .scopes(["purchasing:draft"])
            .build(),
    );
    let args = json!({"supplier": "SUP-0001", "client_ref": "po-killed"});
    erp.arm(Fault::NoResult);
    let lost = call_as(
        &runtime,
        &buyer,
        &run,
        "c1",
        "purchasing_draft_order",
        args.clone(),
    )
    .await;
    assert!(lost.is_error(), "{}", lost.text);
    // As the killed process left it: sending, its owner gone, its lease running 2 s more.
    let lease = (chrono::Utc::now() + chrono::Duration::seconds(2))
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let marked = erp_tools_core::sqlx::query(
        "UPDATE erp_idempotency_keys SET remote_state = 'sending', \
         remote_owner = 'killed-replica/1', remote_lease_until = $1 \
         WHERE agent_run_id = $2 AND client_ref = 'po-killed'",
    )
    .bind(lease)
    .bind(&run)
    .execute(t.db.pool())
    .await
    .unwrap();
    assert_eq!(marked.rows_affected(), 1);

    let began = std::time::Instant::now();
    let (a, b) = tokio::join!(
        call_as(
            &runtime,
            &buyer,
            &run,
            "c2",
            "purchasing_draft_order",
            args.clone()
        ),
        call_as(
            &runtime,
            &buyer,
            &run,
            "c3",
            "purchasing_draft_order",
            args.clone()
        ),
    );
    let waited = began.elapsed();
    println!("two retries of a dead owner's sending key answered after {waited:?}");
    for o in [&a, &b] {
        assert!(!o.is_error(), "{}", o.text);
        assert_eq!(o.structured["name"], "PUR-ORD-2026-00001", "{}", o.text);
    }
    assert!(
        waited >= std::time::Duration::from_millis(1500),
        "{waited:?}"
    );
    let bound = erp_tools_core::remote::retry_wait(erp_tools_core::remote::request_timeout());
    assert!(waited < bound, "{waited:?}");
    assert_eq!(erp.orders().len(), 1, "one order");
    assert_eq!(erp.creates(), 1, "created once, found by its marker after");
    assert_eq!(
        erp_tools_core::remote::pending_keys(&t.db).await.unwrap(),
        0
    );
}
on_both_backends!(a_retry_waits_for_a_dead_owners_sending_key_and_finds_the_draft);
