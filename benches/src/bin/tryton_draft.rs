//! Benchmark 7: a draft through erp-tools into a real Tryton against the same REST
//! requests sent by hand to the same Tryton, interleaved in one run.
//!
//! - `erp-tools`: `purchasing_draft_purchase` of examples/tryton through the pipeline
//!   (admission, attempt row, pending claim, the supplier-price read, the create, settle,
//!   outcome and ERP outcome on the audit row), erp-tools' store on SQLite;
//! - `by hand`: the same two REST requests (the supplier-price read and the create with
//!   the same body) through the same client, nothing else;
//! - `create only`: the create alone.
//!
//! Each round runs the three in a rotating order; the ratios are ratios of medians over
//! the same rounds. Tryton is started by scripts/tryton/start.sh.

#[path = "../../../tests/tests/tryton_example/mod.rs"]
mod tryton_example;

use tryton_example::{purchasing, tryton};

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use erp_tools_core::{Principal, ToolCall, ToolRuntime};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::tryton::TrytonRun;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(about = "A draft into Tryton through erp-tools against the same REST requests by hand")]
struct Args {
    /// Measured rounds (each: one call of every variant).
    #[arg(long, default_value_t = 60)]
    rounds: usize,
    /// Unmeasured rounds first.
    #[arg(long, default_value_t = 5)]
    warmup: usize,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let tr = TrytonRun::start_now();
    let timeout = Duration::from_secs(10);
    let client = tryton::Tryton::new(&tr.url, tr.keys.clone(), timeout).unwrap();
    purchasing::install(client.clone());
    let registry = tryton_example::registry(erp_tools_core::tools![purchasing::draft_purchase]);
    let t = TestDb::sqlite().await;
    let rt = ToolRuntime::new(registry, t.db.clone());
    let sby = tr.fact("companies", "SBY-01");
    let (supplier, product) = (
        tr.fact("suppliers", "PT Sumber Beras"),
        tr.fact("products", "RICE-25"),
    );
    let who = Arc::new(
        Principal::builder("buyer-sby", sby, "SBY-01")
            .scopes(["purchasing:read", "purchasing:draft"])
            .build(),
    );
    let caller = tryton::Caller {
        user: "buyer-sby",
        company: sby,
    };
    let run = format!("bench-{}", std::process::id());
    let fields = [
        "party.rec_name",
        "product",
        "unit",
        "currency",
        "prices.quantity",
        "prices.unit_price",
    ];
    let domain = json!([
        ["company", "=", sby],
        ["template.products", "=", product],
        ["party", "=", supplier]
    ]);
    let body = |reference: String, ps: &serde_json::Value| {
        json!({"company": sby, "party": supplier, "currency": ps["currency"], "reference": reference,
               "description": "bench", "lines": [["create", [{"product": product, "product_supplier": ps["id"],
               "quantity": 24.0, "unit": ps["unit"], "unit_price": tryton::to_decimal("342500.00".parse().unwrap())}]]]})
    };
    // The supplier-price rows of the product (as the example reads them before a create).
    let prices = || {
        client.search(
            &caller,
            "purchase.product_supplier",
            &domain,
            &fields,
            Some(50),
        )
    };
    // The create: a purchase of the product at that price, numbered by Tryton.
    let create = |reference: String, ps: &serde_json::Value| {
        let (purchase, client, caller) = (body(reference, ps), &client, &caller);
        async move {
            client
                .create(
                    caller,
                    "purchase.purchase",
                    &purchase,
                    &["number", "state", "company", "party"],
                )
                .await
                .unwrap()
        }
    };
    // The supplier-price row the create-only variant sends with (read once).
    let row = prices().await.unwrap()[0].clone();
    let (mut erp, mut hand, mut create_only) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..args.warmup + args.rounds {
        for k in 0..3 {
            let variant = (round + k) % 3;
            let started = Instant::now();
            match variant {
                0 => {
                    let out = rt
                        .call(&who, ToolCall {
                            agent_run_id: run.clone(),
                            tool_call_id: format!("c{round}"),
                            name: "purchasing_draft_purchase".into(),
                            arguments: json!({"supplier_id": supplier, "client_ref": format!("b{round}"), "note": "bench",
                                              "lines": [{"product_id": product, "quantity": "24"}]}),
                        })
                        .await
                        .unwrap();
                    assert!(!out.is_error(), "{}", out.text);
                }
                1 => {
                    let rows = prices().await.unwrap();
                    create(format!("hand-{run}-{round}"), &rows[0]).await;
                }
                _ => {
                    let started_create = Instant::now();
                    create(format!("create-{run}-{round}"), &row).await;
                    if round >= args.warmup {
                        create_only.push(started_create.elapsed().as_secs_f64() * 1000.0);
                    }
                    continue;
                }
            }
            if round >= args.warmup {
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                if variant == 0 {
                    erp.push(ms)
                } else {
                    hand.push(ms)
                }
            }
        }
    }
    let (e, h, c) = (
        median(&mut erp),
        median(&mut hand),
        median(&mut create_only),
    );
    println!(
        "tryton draft ({} rounds): erp-tools {e:.2} ms, by hand (read + create) {h:.2} ms, create only {c:.2} ms; \
         ratio erp-tools / by hand {:.3}, erp-tools / create only {:.3}",
        args.rounds,
        e / h,
        e / c
    );
    println!(
        "{}",
        json!({"benchmark": "tryton_draft", "rounds": args.rounds, "erp_tools_ms": e, "by_hand_ms": h,
                          "create_only_ms": c, "ratio_by_hand": e / h, "ratio_create_only": e / c})
    );
}
