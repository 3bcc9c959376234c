//! The Tryton example against a real Tryton 8.2 (scripts/tryton/), through the pipeline
//! MCP uses: one draft is exactly one draft purchase with the right company, supplier,
//! lines, prices and creator; a retry replays it; other arguments are refused; Tryton's
//! validation and access answers become model-facing errors quoting Tryton; another
//! company's suppliers and purchases are out of reach; a stopped Tryton is a clear error;
//! every call's ERP outcome is on its audit row.
//!
//! Runs with `ERP_TOOLS_TRYTON=1` (`.ci/run` sets it); skipped otherwise.

mod tryton_example;

use tryton_example::{purchasing, review, tryton};

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::remote::{self, RemoteError};
use erp_tools_core::sqlx;
use erp_tools_core::{CallOutcome, Principal, ToolRegistry, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::ids::unique_suffix;
use erp_tools_tests::tryton::TrytonRun;
use serde_json::{Value, json};

const DRAFT: &str = "purchasing_draft_purchase";
const SCOPES: &[&str] = &["purchasing:read", "purchasing:draft"];

fn registry() -> Arc<ToolRegistry> {
    tryton_example::registry(erp_tools_core::tools![
        purchasing::list_suppliers,
        purchasing::search_products,
        purchasing::get_product,
        purchasing::draft_purchase,
    ])
}

/// A run id of its own for this test run.
fn unique_run(prefix: &str) -> String {
    format!("{prefix}-{}", unique_suffix())
}

fn person(user: &str, company: i64, code: &str) -> Arc<Principal> {
    Arc::new(
        Principal::builder(user, company, code)
            .scopes(SCOPES.iter().copied())
            .build(),
    )
}

async fn call(
    rt: &ToolRuntime,
    who: &Arc<Principal>,
    run: &str,
    tool: &str,
    args: Value,
) -> CallOutcome {
    call_as(rt, who, run, format!("{tool}-call"), tool, args).await
}

fn draft_args(client_ref: &str, supplier: i64, lines: &[(i64, &str)]) -> Value {
    json!({
        "supplier_id": supplier,
        "client_ref": client_ref,
        "note": "tryton test",
        "lines": lines.iter().map(|(p, q)| json!({"product_id": p, "quantity": q})).collect::<Vec<_>>(),
    })
}

/// A call of the draft tool with [`draft_args`].
async fn draft(
    rt: &ToolRuntime,
    who: &Arc<Principal>,
    run: &str,
    client_ref: &str,
    supplier: i64,
    lines: &[(i64, &str)],
) -> CallOutcome {
    call(rt, who, run, DRAFT, draft_args(client_ref, supplier, lines)).await
}

/// The audit row's outcome, document number and ERP columns of the last call of `run`.
async fn audit_of(
    db: &erp_tools_core::Database,
    run: &str,
) -> (String, Option<String>, Option<String>, Option<String>) {
    db.flush_audit().await.expect("flush");
    // The ERP columns are written right after the outcome is queued.
    tokio::time::sleep(Duration::from_millis(100)).await;
    sqlx::query_as(
        "SELECT outcome, document_number, erp_outcome, erp_error FROM erp_audit_log \
         WHERE agent_run_id = $1 AND source = 'runtime' ORDER BY id DESC LIMIT 1",
    )
    .bind(run)
    .fetch_one(db.audit_pool())
    .await
    .expect("the call's audit row")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drafts_into_a_real_tryton() {
    let Some(tr) = TrytonRun::start("drafts_into_a_real_tryton") else {
        return;
    };
    remote::set_request_timeout(Duration::from_secs(5));
    purchasing::install(
        tryton::Tryton::new(&tr.url, tr.keys.clone(), Duration::from_secs(5)).unwrap(),
    );
    let t = TestDb::sqlite().await;
    let rt = ToolRuntime::new(registry(), t.db.clone());
    let (sby, jkt) = (
        tr.fact("companies", "SBY-01"),
        tr.fact("companies", "JKT-01"),
    );
    let rice = tr.fact("products", "RICE-25");
    let oil = tr.fact("products", "OIL-2L");
    let sugar = tr.fact("products", "SUGAR");
    let minyak = tr.fact("suppliers", "CV Minyak Jaya");
    let beras = tr.fact("suppliers", "PT Sumber Beras");
    let gula = tr.fact("suppliers", "PT Gula Jakarta");
    let buyer = person("buyer-sby", sby, "SBY-01");
    let run = unique_run("tryton");

    // One draft: exactly one draft purchase, right company, supplier, lines and prices
    // (Tryton's supplier prices), created by the person's own Tryton user.
    let args = draft_args("po-1", minyak, &[(oil, "10"), (rice, "5")]);
    let first = call(&rt, &buyer, &run, DRAFT, args.clone()).await;
    assert!(!first.is_error(), "{}", first.text);
    let s = &first.structured;
    assert_eq!(s["replayed"], json!(false), "{s}");
    assert_eq!(s["state"], "draft");
    assert_eq!(s["lines"][0]["unit_price"], "31250.50");
    assert_eq!(s["lines"][1]["unit_price"], "351000.00");
    assert_eq!(s["untaxed_total"], "2067505.00");
    let marker = remote::marker(&run, "po-1");
    let found = tr.with_marker("buyer-sby", sby, &marker).await;
    assert_eq!(found.len(), 1, "one purchase for one draft: {found:?}");
    let p = &found[0];
    assert_eq!(p["id"], s["purchase_id"]);
    assert_eq!(p["state"], "draft");
    assert_eq!(p["company"], json!(sby));
    assert_eq!(p["party"], json!(minyak));
    assert_eq!(
        p["create_uid"],
        json!(tr.fact("users", "buyer-sby")),
        "created as the person"
    );
    let lines = p["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["unit_price"]["decimal"], "31250.50");
    assert_eq!(lines[0]["quantity"], json!(10.0));
    assert_eq!(lines[1]["unit_price"]["decimal"], "351000.00");
    let (outcome, number, erp, erp_error) = audit_of(&t.db, &run).await;
    assert_eq!(outcome, "ok");
    assert_eq!(number.as_deref(), Some(format!("#{}", p["id"]).as_str()));
    assert!(
        erp.as_deref()
            .unwrap_or_default()
            .starts_with("created purchase.purchase"),
        "{erp:?}"
    );
    assert_eq!(erp_error, None);
    println!("tryton created: {p}");
    console_shows_the_tryton_draft(&t, sby, &s["purchase_id"]).await;

    // The price step applies by quantity, as Tryton's own rule does.
    let tiered = draft(&rt, &buyer, &run, "po-tier", beras, &[(rice, "60")]).await;
    assert_eq!(
        tiered.structured["lines"][0]["unit_price"], "335000.00",
        "{}",
        tiered.text
    );

    // A retry replays: the same purchase, nothing sent, still one purchase.
    let again = call(&rt, &buyer, &run, DRAFT, args.clone()).await;
    assert!(!again.is_error(), "{}", again.text);
    assert_eq!(again.structured["replayed"], json!(true));
    assert_eq!(again.structured["purchase_id"], s["purchase_id"]);
    assert_eq!(tr.with_marker("buyer-sby", sby, &marker).await.len(), 1);

    // The same client_ref with other arguments is refused; nothing is sent.
    let other = draft(&rt, &buyer, &run, "po-1", minyak, &[(oil, "11")]).await;
    assert!(other.is_error());
    assert!(other.text.contains("client_ref"), "{}", other.text);
    assert_eq!(tr.with_marker("buyer-sby", sby, &marker).await.len(), 1);

    // A user without purchase rights: refused by Tryton, reported as such, nothing drafted.
    let clerk = person("clerk-sby", sby, "SBY-01");
    let crun = unique_run("tryton-clerk");
    let refused = draft(&rt, &clerk, &crun, "po-clerk", beras, &[(rice, "1")]).await;
    assert!(refused.is_error());
    println!("tryton refused the clerk: {}", refused.text);
    assert!(
        refused.text.contains("You are not allowed to access"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("clerk-sby"), "{}", refused.text);
    assert!(
        refused.text.contains("No draft was created"),
        "{}",
        refused.text
    );
    let clerk_marker = remote::marker(&crun, "po-clerk");
    assert!(
        tr.with_marker("buyer-sby", sby, &clerk_marker)
            .await
            .is_empty()
    );

    // Another company's supplier is not reachable: no price in this branch, nothing sent.
    let foreign = draft(&rt, &buyer, &run, "po-gula", gula, &[(sugar, "10")]).await;
    assert!(foreign.is_error());
    assert!(
        foreign.text.contains("no price for product"),
        "{}",
        foreign.text
    );
    let product = call(
        &rt,
        &buyer,
        &run,
        "purchasing_get_product",
        json!({"product_id": sugar}),
    )
    .await;
    assert_eq!(
        product.structured["suppliers"],
        json!([]),
        "{}",
        product.text
    );
    let suppliers = call(&rt, &buyer, &run, "purchasing_list_suppliers", json!({})).await;
    assert!(
        !suppliers.text.contains("PT Gula Jakarta"),
        "{}",
        suppliers.text
    );

    // Another company's purchase is not reachable: the Jakarta buyer's draft is invisible
    // to the Surabaya buyer, and a token naming Jakarta for the Surabaya buyer is refused
    // by Tryton's company rules.
    let jkt_buyer = person("buyer-jkt", jkt, "JKT-01");
    let jrun = unique_run("tryton-jkt");
    let j = draft(&rt, &jkt_buyer, &jrun, "po-j", gula, &[(sugar, "120")]).await;
    assert!(!j.is_error(), "{}", j.text);
    assert_eq!(j.structured["lines"][0]["unit_price"], "13900.00");
    let jmarker = remote::marker(&jrun, "po-j");
    assert_eq!(tr.with_marker("buyer-jkt", jkt, &jmarker).await.len(), 1);
    assert!(tr.with_marker("buyer-sby", sby, &jmarker).await.is_empty());
    assert!(tr.with_marker("buyer-sby", jkt, &jmarker).await.is_empty());
    let wrong_company = person("buyer-sby", jkt, "JKT-01");
    let crossed = draft(
        &rt,
        &wrong_company,
        &unique_run("x"),
        "po-x",
        gula,
        &[(sugar, "1")],
    )
    .await;
    assert!(crossed.is_error(), "{}", crossed.text);
    println!("tryton refused another company: {}", crossed.text);

    // Tryton's validation answer (a line without its unit) as the example maps it.
    let client = tryton::Tryton::new(&tr.url, tr.keys.clone(), Duration::from_secs(5)).unwrap();
    let who = tryton::Caller {
        user: "buyer-sby",
        company: sby,
    };
    let bad = json!({"party": beras, "company": sby, "lines": [["create", [{"product": rice, "quantity": 24.0,
        "unit_price": tryton::to_decimal("342500".parse().unwrap())}]]]});
    let invalid = client
        .create(&who, "purchase.purchase", &bad, &["number"])
        .await
        .unwrap_err();
    println!("tryton validation: {invalid:?}");
    assert!(
        matches!(&invalid, RemoteError::Invalid { status: 400, message } if message.contains("A value is required for field \"Unit\""))
    );
    let text = invalid.to_tool_error("Tryton").to_string();
    assert!(
        text.contains("refused the draft as invalid")
            && text.ends_with("No draft was created in Tryton."),
        "{text}"
    );
    let nobody = tryton::Caller {
        user: "nobody",
        company: sby,
    };
    let mut with_bad_key = tr.keys.clone();
    with_bad_key.insert("nobody".into(), "not-a-key".into());
    let bad_key = tryton::Tryton::new(&tr.url, with_bad_key, Duration::from_secs(5)).unwrap();
    let unauthorised = bad_key
        .create(&nobody, "purchase.purchase", &bad, &[])
        .await
        .unwrap_err();
    assert!(
        matches!(unauthorised, RemoteError::Denied { status: 401, .. }),
        "{unauthorised:?}"
    );

    // Nothing is left pending.
    assert_eq!(remote::pending_keys(&t.db).await.unwrap(), 0);

    // Tryton stopped: a clear error, nothing pending.
    tr.stop();
    let down = draft(&rt, &buyer, &run, "po-down", beras, &[(rice, "1")]).await;
    assert!(down.is_error());
    println!("tryton stopped: {}", down.text);
    assert!(down.text.contains("Tryton"), "{}", down.text);
    assert!(down.text.contains("No draft was created"), "{}", down.text);
    assert!(
        down.text
            .contains("Tryton could not be reached: the read was not sent."),
        "{}",
        down.text
    );
    assert_eq!(remote::pending_keys(&t.db).await.unwrap(), 0);
    // A read tool says the same, and that nothing changed.
    let read = call(&rt, &buyer, &run, "purchasing_list_suppliers", json!({})).await;
    assert!(read.is_error());
    assert!(
        read.text
            .starts_with("Tryton could not be reached: the read was not sent.")
            && read.text.contains("Nothing was changed in Tryton."),
        "{}",
        read.text
    );
}

/// The example's review console on the same store shows the Tryton draft in Drafts and
/// on its page: Tryton's number, the supplier, the priced lines and the total.
async fn console_shows_the_tryton_draft(t: &TestDb, company: i64, purchase_id: &Value) {
    use erp_tools_core::auth::{self, Authenticator, TokenConfig};
    use erp_tools_core::mcp::{HttpConfig, serve_listener};
    use erp_tools_tests::review::Browser;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let tokens = TokenConfig::development().for_resource(format!("http://{addr}/mcp"));
    let console = review::console(Authenticator::shared_secret(tokens.clone()), t.db.clone());
    let options = HttpConfig::new(tokens.clone()).serve_options();
    let stop = options.cancellation().clone();
    let router = axum::Router::new().nest("/review", console);
    tokio::spawn(serve_listener(listener, router, options));

    let reviewer = Principal::builder("buyer-sby", company, "SBY-01")
        .scopes(review::REVIEW_SCOPES)
        .build();
    let mut b = Browser::at(&format!("http://{addr}/review"));
    let signed = b
        .sign_in(&auth::mint(&tokens, &reviewer, Duration::from_secs(600)))
        .await;
    assert_eq!(signed.status, 303, "{}", signed.html);
    let number = format!("#{purchase_id}");
    let drafts = b.get("/drafts").await;
    assert_eq!(drafts.status, 200);
    assert!(drafts.html.contains(&number), "{}", drafts.html);
    assert!(drafts.html.contains("CV Minyak Jaya"), "{}", drafts.html);
    let page = b
        .get(&format!("/documents/purchase.purchase/%23{purchase_id}"))
        .await;
    assert_eq!(page.status, 200, "{}", page.html);
    // Money as the console writes it: thousands grouped by a narrow no-break space.
    for shown in [
        "Draft purchase in Tryton",
        "CV Minyak Jaya",
        "31\u{202f}250.50",
        "2\u{202f}067\u{202f}505.00",
    ] {
        assert!(
            page.html.contains(shown),
            "{shown} on the page: {}",
            page.html
        );
    }
    stop.cancel();
}
