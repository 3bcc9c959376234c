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
        let names: Vec<&str> = listed["structuredContent"]["suppliers"]
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
