//! The Tryton example's own start-up against a fresh Tryton, as its users run it: the
//! `serve` process (which reads Tryton's companies as every configured person) and the
//! `token` command, then a draft as each seeded person over MCP.
//!
//! Tryton keeps each user's companies per process, from that user's first request after
//! a start: a first request with a company that is not the user's own (once, company 0)
//! leaves the user seeing no supplier price and no purchase until Tryton restarts. The
//! Tryton here is fresh (`scripts/tryton/start.sh` sends no user's request), so the
//! example's own requests are the first each user makes. Each buyer's draft must be priced
//! from their company's supplier prices and land in their company; the person without
//! purchase rights gets Tryton's own refusal, quoted; a token for a company the person does
//! not belong to is refused.
//!
//! Runs with `ERP_TOOLS_TRYTON=1` (`.ci/run` sets it); skipped otherwise.

use std::time::Duration;

use erp_tools_core::remote;
use erp_tools_tests::tryton::{Example, TrytonRun, example_binary, mcp_call, result_text};
use serde_json::{Value, json};

const DRAFT: &str = "purchasing_draft_purchase";
const SCOPES: &str = "purchasing:read,purchasing:draft";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_examples_start_up_leaves_every_person_their_company() {
    let Some(tr) = TrytonRun::start("the_examples_start_up_leaves_every_person_their_company")
    else {
        return;
    };
    let example = Example::new(example_binary(), &tr.url, &tr.keys_path(), 10_000);
    // The real start-up: `serve` reads the companies (its branches) as every person.
    let (mut server, _) = example.serve();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let url = example.mcp_url();

    // (person, branch, supplier, product, quantity, the supplier's unit price there)
    let buyers = [
        (
            "buyer-sby",
            "SBY-01",
            "CV Minyak Jaya",
            "OIL-2L",
            "10",
            "31250.50",
        ),
        (
            "buyer-jkt",
            "JKT-01",
            "PT Gula Jakarta",
            "SUGAR",
            "120",
            "13900.00",
        ),
    ];
    for (user, branch, supplier, product, quantity, price) in buyers {
        let run = format!("startup-{user}");
        let token = example
            .token(user, branch, SCOPES, Some(&run))
            .unwrap_or_else(|e| panic!("token for {user}: {e}"));
        let company = tr.fact("companies", branch);
        let listed = mcp_call(&http, &url, &token, "purchasing_list_suppliers", &json!({}))
            .await
            .unwrap_or_else(|e| panic!("{user}: {e}"));
        assert_ne!(listed["isError"], json!(true), "{user}: {listed}");
        let names: Vec<&str> = listed["structuredContent"]["items"]
            .as_array()
            .expect("suppliers")
            .iter()
            .filter_map(|s| s["name"].as_str())
            .collect();
        assert!(
            names.contains(&supplier),
            "{user} in {branch} sees {names:?}"
        );

        let args = json!({
            "supplier_id": tr.fact("suppliers", supplier),
            "client_ref": "first",
            "note": "start-up test",
            "lines": [{"product_id": tr.fact("products", product), "quantity": quantity}],
        });
        let drafted = mcp_call(&http, &url, &token, DRAFT, &args)
            .await
            .unwrap_or_else(|e| panic!("{user}: {e}"));
        assert_ne!(
            drafted["isError"],
            json!(true),
            "{user} in {branch}: {}",
            result_text(&drafted)
        );
        let s = &drafted["structuredContent"];
        assert_eq!(s["lines"][0]["unit_price"], price, "{user}: {s}");
        assert_eq!(s["branch"], branch, "{user}: {s}");
        let purchases = tr
            .with_marker(user, company, &remote::marker(&run, "first"))
            .await;
        assert_eq!(purchases.len(), 1, "{user}: {purchases:?}");
        let p = &purchases[0];
        assert_eq!(p["id"], s["purchase_id"], "{user}: {p}");
        assert_eq!(p["company"].as_i64(), Some(company), "{user}: {p}");
        assert_eq!(
            p["create_uid"].as_i64(),
            tr.facts["users"][user].as_i64(),
            "{user}: {p}"
        );
    }

    // The person without purchase rights: Tryton's own refusal, quoted; nothing created.
    let token = example
        .token("clerk-sby", "SBY-01", SCOPES, Some("startup-clerk"))
        .expect("a token for the clerk");
    let args = json!({
        "supplier_id": tr.fact("suppliers", "CV Minyak Jaya"),
        "client_ref": "first",
        "lines": [{"product_id": tr.fact("products", "OIL-2L"), "quantity": "1"}],
    });
    let refused = mcp_call(&http, &url, &token, DRAFT, &args).await.unwrap();
    let text = result_text(&refused);
    assert_eq!(refused["isError"], json!(true), "{text}");
    assert!(
        text.contains("\"clerk-sby\"") && text.contains("You are not allowed"),
        "{text}"
    );
    assert!(!text.contains("has no price"), "{text}");

    // A token for a company the person does not belong to is refused up front.
    let err = example
        .token("buyer-sby", "JKT-01", SCOPES, None)
        .expect_err("buyer-sby is not a user of JKT-01");
    assert!(
        err.contains("not a user of JKT-01") && err.contains("SBY-01"),
        "{err}"
    );

    // And after all of that, a second start-up of the example still leaves each buyer
    // their company (Tryton kept the companies it learned first).
    server.kill().ok();
    server.wait().ok();
    let (mut again, _) = example.serve();
    let token = example.token("buyer-jkt", "JKT-01", SCOPES, None).unwrap();
    let product = mcp_call(
        &http,
        &url,
        &token,
        "purchasing_get_product",
        &json!({"product_id": tr.fact("products", "SUGAR")}),
    )
    .await
    .unwrap();
    let suppliers: Vec<&Value> = product["structuredContent"]["suppliers"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(suppliers.len(), 1, "{product}");
    again.kill().ok();
    again.wait().ok();
}

/// After a kill -9 with drafts in flight (their keys pending, their leases still running),
/// the restarted example listens at once and reconciles beside serving: `/readyz` says it
/// is reconciling, a resend meanwhile is told the call is in progress or answered, and in
/// the end every `client_ref` has exactly one purchase and no key is left pending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_listens_at_once_and_reconciles_beside_serving() {
    let Some(tr) = TrytonRun::start("a_restart_listens_at_once_and_reconciles_beside_serving")
    else {
        return;
    };
    // Creates reach Tryton at once; their answers come back 1 s later.
    let proxy = erp_tools_tests::fault_proxy::FaultProxy::start(tr.port()).await;
    proxy.delay_creates(Duration::from_millis(1000)).await;
    let example = Example::new(
        example_binary(),
        &tr.url_via(proxy.addr.port()),
        &tr.keys_path(),
        1500,
    );
    let (mut server, _) = example.serve();
    let run = "restart";
    let token = example
        .token("buyer-sby", "SBY-01", SCOPES, Some(run))
        .unwrap();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let url = example.mcp_url();
    let args = |client_ref: &str| {
        json!({
            "supplier_id": tr.fact("suppliers", "CV Minyak Jaya"),
            "client_ref": client_ref,
            "lines": [{"product_id": tr.fact("products", "OIL-2L"), "quantity": "2"}],
        })
    };
    let refs: Vec<String> = (0..4).map(|i| format!("in-flight-{i}")).collect();
    let calls: Vec<_> = refs
        .iter()
        .map(|r| {
            let (http, url, token, args) = (http.clone(), url.clone(), token.clone(), args(r));
            tokio::spawn(async move { mcp_call(&http, &url, &token, DRAFT, &args).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    server.kill().expect("kill -9");
    server.wait().ok();
    for c in calls {
        let _ = c.await; // cut off by the kill
    }
    let db = erp_tools_core::Database::open(&example.db_url)
        .await
        .unwrap();
    let pending = remote::pending_keys(&db).await.unwrap();
    db.close().await;
    assert!(pending > 0, "the kill left no key pending");

    let (mut server, listening) = example.serve();
    let ready = http
        .get(format!("http://127.0.0.1:{}/readyz", example.port))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let body: Value = ready.json().await.unwrap();
    let reconciling = body["remote_drafts"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reconciling.starts_with("reconciling remote drafts"),
        "{body}"
    );
    // A resend while the pass runs: in progress (retry) or answered, never a second one.
    let first = &refs[0];
    let mut answered = None;
    for _ in 0..20 {
        let r = mcp_call(&http, &url, &token, DRAFT, &args(first))
            .await
            .unwrap();
        if r["isError"] != json!(true) {
            answered = Some(r);
            break;
        }
        let text = result_text(&r);
        assert!(
            text.contains("still writing") || text.contains("Nothing is confirmed"),
            "{text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let answered = answered.expect("the resend was answered within 6 s");
    let mut reconciled = String::new();
    for _ in 0..100 {
        let body: Value = http
            .get(format!("http://127.0.0.1:{}/readyz", example.port))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        reconciled = body["remote_drafts"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if reconciled.starts_with("remote drafts reconciled") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        reconciled.starts_with("remote drafts reconciled"),
        "{reconciled}"
    );
    let sby = tr.fact("companies", "SBY-01");
    for r in &refs {
        let resent = mcp_call(&http, &url, &token, DRAFT, &args(r))
            .await
            .unwrap();
        assert_ne!(
            resent["isError"],
            json!(true),
            "{r}: {}",
            result_text(&resent)
        );
        let purchases = tr
            .with_marker("buyer-sby", sby, &remote::marker(run, r))
            .await;
        assert_eq!(purchases.len(), 1, "{r}: {purchases:?}");
        assert_eq!(
            purchases[0]["id"], resent["structuredContent"]["purchase_id"],
            "{r}"
        );
    }
    assert_eq!(
        answered["structuredContent"]["purchase_id"],
        tr.with_marker("buyer-sby", sby, &remote::marker(run, first))
            .await[0]["id"]
    );
    server.kill().ok();
    server.wait().ok();
    let db = erp_tools_core::Database::open(&example.db_url)
        .await
        .unwrap();
    assert_eq!(remote::pending_keys(&db).await.unwrap(), 0);
    db.close().await;
    println!(
        "restart after a kill with {pending} pending key(s): listening after {} ms; /readyz then: {reconciling}; later: {reconciled}",
        listening.as_millis()
    );
}
