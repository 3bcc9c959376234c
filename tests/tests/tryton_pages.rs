//! The Tryton example's searches as pages, against a real Tryton 8.2 (scripts/tryton/),
//! through the pipeline MCP uses: `purchasing_search_products` and
//! `purchasing_list_suppliers` page by keyset over Tryton's REST search (a domain after
//! the last `(name, id)`, Tryton's order, a limit of one more than the page, no offset);
//! walking every supplier page while the buyer's colleague creates suppliers returns
//! each one that existed before exactly once, in order; another person's cursor is
//! refused.
//!
//! Runs with `ERP_TOOLS_TRYTON=1` (`.ci/run` sets it); skipped otherwise.

mod tryton_example;

use tryton_example::{purchasing, tryton};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::remote;
use erp_tools_core::{CallOutcome, Outcome, Principal, ToolRegistry, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::tryton::TrytonRun;
use serde_json::{Value, json};

const PRODUCTS: &str = "purchasing_search_products";
const SUPPLIERS: &str = "purchasing_list_suppliers";

fn registry() -> Arc<ToolRegistry> {
    tryton_example::registry(erp_tools_core::tools![
        purchasing::list_suppliers,
        purchasing::search_products,
    ])
}

fn person(user: &str, company: i64, code: &str) -> Arc<Principal> {
    Arc::new(
        Principal::builder(user, company, code)
            .scopes(["purchasing:read"])
            .build(),
    )
}

async fn call(
    rt: &ToolRuntime,
    who: &Arc<Principal>,
    n: usize,
    tool: &str,
    args: Value,
) -> CallOutcome {
    call_as(rt, who, "", format!("{tool}-{n}"), tool, args).await
}

/// Creates a supplier (a party) with a price row for `template` in `company`, as `user`:
/// the `purchase.product_supplier` id.
async fn create_supplier(
    tryton: &tryton::Tryton,
    user: &str,
    company: i64,
    name: &str,
    template: i64,
) -> i64 {
    let who = tryton::Caller { user, company };
    let party = tryton
        .create(&who, "party.party", &json!({"name": name}), &["name"])
        .await
        .unwrap_or_else(|e| panic!("create party {name}: {e:?}"));
    let row = tryton
        .create(
            &who,
            "purchase.product_supplier",
            &json!({"party": party["id"], "template": template, "company": company}),
            &["party.name"],
        )
        .await
        .unwrap_or_else(|e| panic!("create supplier prices for {name}: {e:?}"));
    row["id"].as_i64().expect("an id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tryton_searches_page_by_keyset() {
    let Some(tr) = TrytonRun::start("tryton_searches_page_by_keyset") else {
        return;
    };
    remote::set_request_timeout(Duration::from_secs(10));
    let client = tryton::Tryton::new(&tr.url, tr.keys.clone(), Duration::from_secs(10)).unwrap();
    purchasing::install(client.clone());
    let t = TestDb::sqlite().await;
    let rt = ToolRuntime::new(registry(), t.db.clone());
    let sby = tr.fact("companies", "SBY-01");
    let jkt = tr.fact("companies", "JKT-01");
    let buyer = person("buyer-sby", sby, "SBY-01");
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };

    // Products, one a page: by name, each once, the last page without a cursor.
    let mut names = Vec::new();
    let mut ids = Vec::new();
    let mut cursor = Value::Null;
    for page_no in 1.. {
        let args = json!({"name_contains": null, "page_size": 1, "cursor": cursor});
        let page = call(&rt, &buyer, next(), PRODUCTS, args).await;
        assert_eq!(page.outcome, Outcome::Ok, "{}", page.text);
        for item in page.structured["items"].as_array().unwrap() {
            names.push(item["name"].as_str().unwrap().to_string());
            ids.push(item["product_id"].as_i64().unwrap());
        }
        cursor = page.structured["next_cursor"].clone();
        if page_no == 1 {
            assert!(
                page.text.starts_with(
                    "purchasing_search_products: items 1 to 1; more remain.\nproduct "
                ),
                "{}",
                page.text
            );
        }
        if cursor.is_null() {
            assert!(page.text.contains("the last page"), "{}", page.text);
            break;
        }
    }
    assert_eq!(names, ["Beras 25kg", "Gula Pasir", "Minyak Goreng 2L"]);
    assert_eq!(
        ids,
        [
            tr.fact("products", "RICE-25"),
            tr.fact("products", "SUGAR"),
            tr.fact("products", "OIL-2L")
        ]
    );
    let args = json!({"name_contains": "GULA", "page_size": null, "cursor": null});
    let found = call(&rt, &buyer, next(), PRODUCTS, args).await;
    assert_eq!(
        found.structured["items"][0]["name"], "Gula Pasir",
        "{}",
        found.text
    );
    assert_eq!(found.structured["items"].as_array().unwrap().len(), 1);

    // Suppliers: 40 more in Surabaya, so the list takes several pages of 7.
    let rice = tr.fact("templates", "RICE-25");
    for i in 0..40 {
        create_supplier(
            &client,
            "buyer-sby",
            sby,
            &format!("Pemasok {:02}", (i * 7) % 40),
            rice,
        )
        .await;
    }
    let existing: Vec<(String, i64)> = {
        let who = tryton::Caller {
            user: "buyer-sby",
            company: sby,
        };
        client
            .search(
                &who,
                "purchase.product_supplier",
                &json!([["company", "=", sby]]),
                &["party.name"],
                None,
            )
            .await
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["party"]["name"].as_str().unwrap().to_string(),
                    r["id"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    assert!(existing.len() >= 43, "{existing:?}");

    // A colleague creates suppliers during the walk, named before and after its position.
    let creator = {
        let client = client.clone();
        tokio::spawn(async move {
            for i in 0..12 {
                let name = format!("Pemasok {:02}b{i}", (i * 11) % 40);
                create_supplier(&client, "buyer-sby", sby, &name, rice).await;
            }
        })
    };
    let mut received: Vec<(String, i64)> = Vec::new();
    let mut cursor = Value::Null;
    let mut first_cursor = None;
    loop {
        let args = json!({"page_size": 7, "cursor": cursor});
        let page = call(&rt, &buyer, next(), SUPPLIERS, args).await;
        assert_eq!(page.outcome, Outcome::Ok, "{}", page.text);
        let items = page.structured["items"].as_array().unwrap();
        assert!(items.len() <= 7);
        for item in items {
            let name = item["name"].as_str().unwrap().to_string();
            assert_ne!(name, "PT Gula Jakarta", "another company's supplier");
            received.push((name, item["supplier_id"].as_i64().unwrap()));
        }
        cursor = page.structured["next_cursor"].clone();
        first_cursor.get_or_insert(cursor.clone());
        if cursor.is_null() {
            break;
        }
    }
    creator.await.expect("the colleague's suppliers");
    assert!(received.len() >= existing.len(), "{received:?}");
    // By name, and every supplier price row that existed before the walk exactly once
    // (a supplier is one item per product it has prices for: its name and party).
    assert!(
        received.windows(2).all(|w| w[0].0 <= w[1].0),
        "{received:?}"
    );
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &received {
        *seen.entry(name.as_str()).or_default() += 1;
    }
    let mut expected: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, _) in &existing {
        *expected.entry(name.as_str()).or_default() += 1;
    }
    for (name, count) in &expected {
        assert_eq!(seen.get(name), Some(count), "{name} in {received:?}");
    }

    // The cursor belongs to the buyer: the Jakarta buyer is told to start again.
    let other = person("buyer-jkt", jkt, "JKT-01");
    let args = json!({"page_size": 7, "cursor": first_cursor.unwrap()});
    let refused = call(&rt, &other, next(), SUPPLIERS, args).await;
    assert_eq!(refused.outcome, Outcome::ToolError);
    assert!(
        refused.text.contains("with cursor null"),
        "{}",
        refused.text
    );
}
