//! Pages over another system's search API with `RemoteKeyset`, against a fixture ERP that
//! reads Tryton-style domains (`erp_tools_tests::search_erp`), through the pipeline MCP
//! uses: walking every page while another user creates items returns each item once, in
//! order; every search asks the ERP for one page and one item more, never with an
//! offset (page N costs the ERP what page 1 costs); the cursor is sealed like any page
//! tool's (tampered, another person's, other filters: refused, start again).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE;
use erp_tools_core::page::{Condition, RemoteKeyset};
use erp_tools_core::prelude::*;
use erp_tools_core::{CallOutcome, Outcome, Principal, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::search_erp::SearchErp;
use serde_json::{Value, json};

const LIST: &str = "catalog_list_items";
const PAGE: usize = 20;

/// The ERP's base URL, set by each test before its first call.
static ERP: OnceLock<std::sync::Mutex<String>> = OnceLock::new();

fn erp_url() -> String {
    ERP.get_or_init(Default::default).lock().unwrap().clone()
}

/// Arguments of `catalog_list_items`.
#[derive(Deserialize, ToolArgs)]
struct ListItemsArgs {
    /// Only items whose name sorts at or after this text. Null for all.
    name_from: Option<String>,
}

/// One item of the remote catalogue.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Item {
    /// The ERP's id.
    id: i64,
    /// Name.
    name: String,
}

const BY_NAME: RemoteKeyset = RemoteKeyset::ascending(&["name", "id"]);

/// The ERP's domain: `base` and the alternatives after the last key.
fn domain(mut base: Vec<Value>, after: Option<Vec<Vec<Condition>>>) -> Value {
    if let Some(after) = after {
        let mut or = vec![json!("OR")];
        for all in after {
            let clauses = all
                .iter()
                .map(|c| json!([c.field, c.op.as_str(), c.value]))
                .collect();
            or.push(Value::Array(clauses));
        }
        base.push(Value::Array(or));
    }
    Value::Array(base)
}

/// List the items of the remote catalogue by name.
#[erp_tool(module = "catalog", tier = "read", scopes = ["catalog:read"], page_size = 20)]
async fn list_items(
    _ctx: &ToolContext,
    args: ListItemsArgs,
    page: PageRequest,
) -> Result<Page<Item>, ToolError> {
    let mut base = Vec::new();
    if let Some(from) = args.name_from {
        base.push(json!(["name", ">=", from]));
    }
    BY_NAME
        .page(
            &page,
            |after, limit| async move {
                let b64 = |v: &Value| URL_SAFE.encode(v.to_string());
                let url = format!(
                    "{}/items?d={}&o={}&s={limit}",
                    erp_url(),
                    b64(&domain(base, after)),
                    b64(&json!(BY_NAME.order())),
                );
                let answer = reqwest::get(url).await.map_err(ToolError::internal)?;
                if !answer.status().is_success() {
                    return Err(ToolError::internal(answer.text().await.unwrap_or_default()));
                }
                answer
                    .json::<Vec<Item>>()
                    .await
                    .map_err(ToolError::internal)
            },
            |item: &Item| vec![json!(item.name), json!(item.id)],
        )
        .await
}

fn runtime(t: &TestDb) -> ToolRuntime {
    let registry = ToolRegistry::builder()
        .module(
            "catalog",
            "A remote catalogue. Read only: cannot change anything.",
        )
        .tools(erp_tools_core::tools![list_items])
        .build()
        .expect("registry");
    ToolRuntime::new(Arc::new(registry), t.db.clone())
        .with_cursor_key([7u8; 32], Duration::from_secs(600))
        .expect("key")
}

fn person(user: &str) -> Arc<Principal> {
    Arc::new(
        Principal::builder(user, 1, "SBY-01")
            .scopes(["catalog:read"])
            .build(),
    )
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

async fn call(rt: &ToolRuntime, who: &Arc<Principal>, args: Value) -> CallOutcome {
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    call_as(rt, who, "", format!("r{n}"), LIST, args).await
}

/// 300 items, every name twice (the id breaks the tie), created in no particular order.
fn seeded_names() -> Vec<String> {
    (0..300)
        .map(|i| format!("item-{:03}", (i * 37) % 150))
        .collect()
}

/// One test at a time talks to its ERP (the tool reads the URL from a static).
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start_erp() -> (tokio::sync::MutexGuard<'static, ()>, SearchErp) {
    let turn = ONE_AT_A_TIME.lock().await;
    let erp = SearchErp::start(seeded_names()).await;
    *ERP.get_or_init(Default::default).lock().unwrap() = erp.url();
    (turn, erp)
}

async fn every_item_once_while_items_are_created(t: &TestDb) {
    let (_turn, erp) = start_erp().await;
    let rt = runtime(t);
    let who = person("7");
    let seeded: BTreeSet<(String, i64)> = erp.items().into_iter().map(|(i, n)| (n, i)).collect();

    // Another user creates items the whole time, named before and after any position.
    let walking = Arc::new(AtomicBool::new(true));
    let creator = {
        let (walking, url) = (walking.clone(), erp.url());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut created = 0u32;
            while walking.load(Ordering::Relaxed) && created < 400 {
                let name = format!("item-{:03}-new{created}", (created * 53) % 150);
                let sent = http
                    .post(format!("{url}/items"))
                    .json(&json!({"name": name}))
                    .send()
                    .await;
                assert!(sent.is_ok_and(|r| r.status().is_success()));
                created += 1;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            created
        })
    };

    let mut received: Vec<(String, i64)> = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let page = call(&rt, &who, json!({"name_from": null, "cursor": cursor})).await;
        assert_eq!(page.outcome, Outcome::Ok, "{}", page.text);
        pages += 1;
        let items = page.structured["items"].as_array().expect("items");
        assert!(items.len() <= PAGE);
        received.extend(items.iter().map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                i["id"].as_i64().unwrap(),
            )
        }));
        cursor = page.structured["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    walking.store(false, Ordering::Relaxed);
    let created = creator.await.expect("creator");
    assert!(created > 0, "items were created during the walk");

    // In key order, no item twice, every item that existed before the walk exactly once.
    assert!(
        received.windows(2).all(|w| w[0] < w[1]),
        "the walk went back or repeated an item"
    );
    let mut counts: BTreeMap<&(String, i64), usize> = BTreeMap::new();
    for item in &received {
        *counts.entry(item).or_default() += 1;
    }
    for item in &seeded {
        assert_eq!(counts.get(item), Some(&1), "{item:?} was not received once");
    }
    assert!(received.len() >= seeded.len());

    // Each page cost the ERP one search for one page and one item more, no offset (the
    // fixture refuses one), whatever the page's depth.
    let searches = erp.searches();
    assert_eq!(searches.len(), pages);
    assert!(
        searches
            .iter()
            .all(|s| s.limit == Some(PAGE + 1) && s.answered <= PAGE + 1),
        "{searches:?}"
    );
}
on_both_backends!(every_item_once_while_items_are_created);

async fn the_cursor_is_sealed_like_any_page_tools(t: &TestDb) {
    let (_turn, _erp) = start_erp().await;
    let rt = runtime(t);
    let who = person("7");
    let args = json!({"name_from": "item-100", "page_size": 5, "cursor": null});
    let first = call(&rt, &who, args.clone()).await;
    assert_eq!(first.outcome, Outcome::Ok, "{}", first.text);
    let names: Vec<&str> = first.structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["item-100", "item-100", "item-101", "item-101", "item-102"]
    );
    let cursor = first.structured["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();

    let mut next = args.clone();
    next["cursor"] = json!(cursor);
    let second = call(&rt, &who, next.clone()).await;
    assert_eq!(second.outcome, Outcome::Ok, "{}", second.text);
    assert_eq!(second.structured["items"][0]["name"], "item-102");
    assert!(
        second
            .text
            .starts_with("catalog_list_items: items 6 to 10; more remain.")
    );

    let mut tampered = next.clone();
    let mut bytes = cursor.clone().into_bytes();
    let last = bytes.len() - 1;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    tampered["cursor"] = json!(String::from_utf8(bytes).unwrap());
    let mut other_filters = next.clone();
    other_filters["name_from"] = json!("item-000");
    for (who, args) in [
        (who.clone(), tampered),
        (person("8"), next.clone()),
        (who.clone(), other_filters),
    ] {
        let refused = call(&rt, &who, args).await;
        assert_eq!(refused.outcome, Outcome::ToolError);
        assert!(
            refused.text.contains("call again with cursor null")
                || refused.text.contains("with cursor null"),
            "{}",
            refused.text
        );
    }
}
on_both_backends!(the_cursor_is_sealed_like_any_page_tools);
