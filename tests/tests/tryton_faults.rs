//! Exactly-once drafts into a real Tryton when answers go missing: a fault-injecting proxy
//! between erp-tools and Tryton forwards the create and then drops the answer, holds it
//! past erp-tools' timeout, or answers 502 (and, as a control, drops the request before
//! Tryton sees it). Each time the model is told nothing is confirmed, and the resend with
//! the same `client_ref` leaves exactly one purchase. Two concurrent resends of one
//! pending key never both create.
//!
//! Runs with `ERP_TOOLS_TRYTON=1` (`.ci/run` sets it); skipped otherwise.

mod tryton_example;

use tryton_example::{purchasing, tryton};

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::remote;
use erp_tools_core::sqlx;
use erp_tools_core::{CallOutcome, Principal, ToolRegistry, ToolRuntime};
use erp_tools_tests::app::call_as;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::fault_proxy::{Fault, FaultProxy};
use erp_tools_tests::ids::unique_suffix;
use erp_tools_tests::tryton::TrytonRun;
use serde_json::{Value, json};

const DRAFT: &str = "purchasing_draft_purchase";
const TIMEOUT: Duration = Duration::from_millis(1500);

fn registry() -> Arc<ToolRegistry> {
    tryton_example::registry(erp_tools_core::tools![purchasing::draft_purchase])
}

async fn draft(rt: &ToolRuntime, who: &Arc<Principal>, run: &str, args: &Value) -> CallOutcome {
    call_as(rt, who, run, "c", DRAFT, args.clone()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_never_duplicate_a_purchase() {
    let Some(tr) = TrytonRun::start("lost_answers_never_duplicate_a_purchase") else {
        return;
    };
    let proxy = FaultProxy::start(tr.port()).await;
    remote::set_request_timeout(TIMEOUT);
    let url = tr.url.replace(
        &format!(":{}/", tr.port()),
        &format!(":{}/", proxy.addr.port()),
    );
    purchasing::install(tryton::Tryton::new(&url, tr.keys.clone(), TIMEOUT).unwrap());
    let t = TestDb::sqlite().await;
    let rt = ToolRuntime::new(registry(), t.db.clone());
    let sby = tr.fact("companies", "SBY-01");
    let buyer = Arc::new(
        Principal::builder("buyer-sby", sby, "SBY-01")
            .scopes(["purchasing:read", "purchasing:draft"])
            .build(),
    );
    let run = format!("faults-{}", unique_suffix());
    let args = |client_ref: &str| {
        json!({
            "supplier_id": tr.fact("suppliers", "PT Sumber Beras"),
            "client_ref": client_ref,
            "note": null,
            "lines": [{"product_id": tr.fact("products", "RICE-25"), "quantity": "24"}],
        })
    };

    let faults = [
        ("drop the answer", Fault::DropAnswer, true),
        (
            "hold the answer past the timeout",
            Fault::Hold(TIMEOUT * 2),
            true,
        ),
        ("answer 502", Fault::BadGateway, true),
        ("drop the request", Fault::DropRequest, false),
    ];
    let mut figures = Vec::new();
    for (name, fault, reaches_tryton) in faults {
        let client_ref = format!("po-{}", name.replace(' ', "-"));
        let marker = remote::marker(&run, &client_ref);
        let creates_before = proxy.creates();
        proxy.arm(fault).await;
        let lost = draft(&rt, &buyer, &run, &args(&client_ref)).await;
        assert!(lost.is_error(), "{name}: {}", lost.text);
        assert!(
            lost.text.contains("Nothing is confirmed"),
            "{name}: {}",
            lost.text
        );
        assert!(
            lost.text.contains("same client_ref"),
            "{name}: {}",
            lost.text
        );
        assert!(
            !lost.text.contains("No draft was created"),
            "{name}: {}",
            lost.text
        );
        let in_tryton = tr.with_marker("buyer-sby", sby, &marker).await.len();
        assert_eq!(
            in_tryton,
            usize::from(reaches_tryton),
            "{name}: Tryton has {in_tryton}"
        );
        assert_eq!(
            remote::pending_keys(&t.db).await.unwrap(),
            1,
            "{name}: the key stays pending"
        );

        let resent = draft(&rt, &buyer, &run, &args(&client_ref)).await;
        assert!(!resent.is_error(), "{name}: {}", resent.text);
        let purchases = tr.with_marker("buyer-sby", sby, &marker).await;
        assert_eq!(
            purchases.len(),
            1,
            "{name}: exactly one purchase after the resend"
        );
        assert_eq!(
            resent.structured["purchase_id"], purchases[0]["id"],
            "{name}"
        );
        assert_eq!(
            resent.structured["replayed"],
            json!(reaches_tryton),
            "{name}: found by its marker when Tryton had it, created otherwise"
        );
        // A third send is a plain replay.
        let third = draft(&rt, &buyer, &run, &args(&client_ref)).await;
        assert_eq!(
            third.structured["purchase_id"], purchases[0]["id"],
            "{name}"
        );
        assert_eq!(
            tr.with_marker("buyer-sby", sby, &marker).await.len(),
            1,
            "{name}"
        );
        assert_eq!(remote::pending_keys(&t.db).await.unwrap(), 0, "{name}");
        let creates = proxy.creates() - creates_before;
        figures.push(format!(
            "{name}: creates forwarded {creates}, purchases 1, duplicates 0"
        ));
        assert_eq!(creates, 1, "{name}: one create reached Tryton");
    }

    // The audit rows: the lost call is an unknown outcome with the proxy's answer as data;
    // the resend found the document by its marker.
    t.db.flush_audit().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let rows: Vec<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT outcome, erp_outcome, erp_error FROM erp_audit_log WHERE agent_run_id = $1 \
         AND source = 'runtime' ORDER BY id",
    )
    .bind(&run)
    .fetch_all(t.db.audit_pool())
    .await
    .unwrap();
    assert_eq!(
        rows[6].1.as_deref(),
        Some("unknown outcome: answered 502 without a result"),
        "{rows:?}"
    );
    assert_eq!(rows[6].2.as_deref(), Some("Bad Gateway"), "{rows:?}");
    assert!(
        rows[1]
            .1
            .as_deref()
            .unwrap_or_default()
            .starts_with("found by marker"),
        "{rows:?}"
    );

    // Two concurrent resends of one pending key: one lookup, never two creates.
    let client_ref = "po-concurrent";
    let marker = remote::marker(&run, client_ref);
    proxy.arm(Fault::DropAnswer).await;
    let lost = draft(&rt, &buyer, &run, &args(client_ref)).await;
    assert!(lost.is_error());
    let same = args(client_ref);
    let (a, b) = tokio::join!(
        draft(&rt, &buyer, &run, &same),
        draft(&rt, &buyer, &run, &same)
    );
    let ok = [&a, &b].iter().filter(|o| !o.is_error()).count();
    assert!(ok >= 1, "{} / {}", a.text, b.text);
    for o in [&a, &b] {
        if o.is_error() {
            assert!(o.text.contains("still writing this draft"), "{}", o.text);
        }
    }
    assert_eq!(tr.with_marker("buyer-sby", sby, &marker).await.len(), 1);
    let settled = draft(&rt, &buyer, &run, &args(client_ref)).await;
    assert!(!settled.is_error(), "{}", settled.text);
    figures.push(format!(
        "concurrent resends: {ok} of 2 answered at once, purchases 1, duplicates 0"
    ));

    let all = tr.purchases("buyer-sby", sby, json!([])).await.len();
    println!(
        "fault proxy: {}; purchases in Tryton {all} for 5 client_refs",
        figures.join("; ")
    );
    assert_eq!(all, 5);
}
