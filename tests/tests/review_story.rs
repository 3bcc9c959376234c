//! The Run page tells what happened, call by call: every call gets its own card (its own
//! arguments, outcome and output), keyed by the framework's call key, even when calls
//! from different MCP sessions, replicas or a restarted server all carry JSON-RPC id 1;
//! the agent loop's events, the runtime's row and a person's decision about one call
//! share a card; the run's task, what read calls answered and the final answer are on
//! the page; every search kind of the Runs page finds what it should. On SQLite and
//! PostgreSQL.

use std::collections::HashSet;

use erp_tools_core::agent::{ModelAction, ScriptedModel};
use erp_tools_core::{AuditRecord, Principal, ToolCall, ToolRuntime};
use erp_tools_tests::agent::pay;
use erp_tools_tests::app::arguments::{payment_request, po_draft};
use erp_tools_tests::app::registry;
use erp_tools_tests::app::seed::{VENDOR, VENDOR_OTHER};
use erp_tools_tests::app::tools::{
    CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_VENDOR_SUMMARY,
};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, MANAGER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};
use serde_json::{Value, json};

/// One call as an MCP session numbers it: JSON-RPC id `id`, in run `run`.
async fn call(
    runtime: &ToolRuntime,
    who: &std::sync::Arc<Principal>,
    run: &str,
    id: &str,
    tool: &str,
    arguments: Value,
) -> erp_tools_core::CallOutcome {
    runtime
        .call(
            who,
            ToolCall {
                agent_run_id: run.to_string(),
                tool_call_id: id.to_string(),
                name: tool.to_string(),
                arguments,
            },
        )
        .await
        .expect("no protocol error")
}

fn names(user: &str) -> Option<String> {
    match user {
        "u-buyer" => Some("Dewi Lestari".into()),
        "u-reviewer" => Some("Rina Hartono".into()),
        _ => None,
    }
}

/// The cards of a Run page: each `<li class="step…">` to its `</li>` at the story's
/// level.
fn cards(html: &str) -> Vec<String> {
    let story = &html[html.find("<ol class=\"story\">").expect("a story")..];
    let story = &story[..story.find("</ol>\n").unwrap_or(story.len())];
    story
        .split("<li class=\"step")
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// Two MCP sessions of one person in one run (both number their first call 1), then the
/// same run through another replica and after a restart (ids 1 again): four calls, four
/// keys, four cards, each with its own arguments and outcome.
async fn calls_numbered_alike_in_other_sessions_get_a_card_each(t: &TestDb) {
    let s = ReviewServer::configured(t, 25, |c| c.people(names).tool_titles(&registry())).await;
    let buyer = BUYER.shared();
    let run = "run-two-sessions";
    // Session A reads the vendor; session B drafts an order.
    let read = call(
        s.runtime(),
        &buyer,
        run,
        "1",
        GET_VENDOR_SUMMARY,
        json!({"vendor_code": VENDOR}),
    )
    .await;
    assert!(!read.is_error(), "{}", read.text);
    let draft = call(
        s.runtime(),
        &buyer,
        run,
        "1",
        CREATE_PO_DRAFT,
        po_draft("two-sessions"),
    )
    .await;
    let number = draft.document.clone().expect("a draft").number;
    // Another replica on the same database: a call the buyer may not make (denied).
    let replica = ToolRuntime::new(s.runtime().registry().clone(), t.open_again().await);
    let denied = call(
        &replica,
        &buyer,
        run,
        "1",
        CREATE_PAYMENT_REQUEST_DRAFT,
        payment_request(VENDOR, "1000", "two-sessions-pay"),
    )
    .await;
    assert_eq!(denied.outcome.as_str(), "denied", "{}", denied.text);
    // A restarted server (a new process opens the database again).
    let restarted = ToolRuntime::new(s.runtime().registry().clone(), t.open_again().await);
    call(
        &restarted,
        &buyer,
        run,
        "1",
        GET_VENDOR_SUMMARY,
        json!({"vendor_code": VENDOR_OTHER}),
    )
    .await;

    let rows: Vec<AuditRecord> =
        t.db.audit_log(Some(run))
            .await
            .unwrap()
            .into_iter()
            .filter(|r| r.source == "runtime")
            .collect();
    assert_eq!(rows.len(), 4, "{rows:#?}");
    assert!(rows.iter().all(|r| r.tool_call_id.as_deref() == Some("1")));
    let keys: HashSet<&str> = rows.iter().filter_map(|r| r.call_key.as_deref()).collect();
    assert_eq!(keys.len(), 4, "every call has its own key: {rows:#?}");
    let vendor = rows[0].result_text.as_deref().unwrap_or_default();
    assert!(
        vendor.contains("PT Sinar Jaya Abadi"),
        "the read's result is kept: {vendor}"
    );
    assert_eq!(rows[2].result_text, None, "a denial has no result");

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let page = b.get(&format!("/runs/{run}")).await;
    assert_eq!(page.status, 200);
    let cards = cards(&page.html);
    assert_eq!(
        cards.len(),
        4,
        "one card per call, not per JSON-RPC id:\n{}",
        page.html
    );
    for card in &cards {
        assert_eq!(
            card.matches("<summary>Arguments</summary>").count(),
            1,
            "{card}"
        );
        assert_eq!(
            card.matches("runtime · ").count(),
            1,
            "one outcome per card: {card}"
        );
    }
    assert!(
        cards[0].contains("What the tool answered") && cards[0].contains("PT Sinar Jaya Abadi")
    );
    assert!(cards[1].contains(&number) && cards[1].contains("Create purchase order draft"));
    assert!(!cards[0].contains(&number) && !cards[2].contains(&number));
    assert!(
        cards[2].contains("step-denied")
            && cards[2].contains("finance_create_payment_request_draft")
    );
    assert!(
        cards[2].contains("two-sessions-pay"),
        "the denied call's own arguments"
    );
    assert!(
        page.html.contains("each call has its own card"),
        "{}",
        page.html
    );
}
on_both_backends!(calls_numbered_alike_in_other_sessions_get_a_card_each);

/// A loop run that pauses for approval and resumes in another agent: the task, the
/// decision named by the reviewer's name, the call's events in one card, the answer.
async fn the_loop_run_shows_its_task_decision_and_answer(t: &TestDb) {
    let s = ReviewServer::configured(t, 25, |c| c.people(names)).await;
    let manager = MANAGER.shared();
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "story-pay")]);
    let task = "Pay V-00001 for invoice INV-7781 <b>today</b>";
    let out = s.agent.run(&manager, &mut model, task).await;
    assert_eq!(out.status.as_str(), "awaiting_approval");
    let run = out.run_id.clone();
    let id = s.queue.pending(MANAGER.branch.id).await.unwrap()[0].id;
    s.queue
        .approve(id, &REVIEWER.principal(), None)
        .await
        .unwrap();
    let mut after =
        ScriptedModel::new([ModelAction::answer("Paid: the request waits in finance.")]);
    let done = s
        .queue
        .resume(&s.agent, &manager, &mut after, id)
        .await
        .unwrap();
    assert_eq!(done.status.as_str(), "done", "{:?}", done.status);

    let rows = t.db.audit_log(Some(&run)).await.unwrap();
    let about_call: Vec<&AuditRecord> = rows.iter().filter(|r| r.tool_call_id.is_some()).collect();
    let keys: HashSet<&str> = about_call
        .iter()
        .filter_map(|r| r.call_key.as_deref())
        .collect();
    assert_eq!(
        keys.len(),
        1,
        "one call, one key on all its rows: {rows:#?}"
    );
    assert_eq!(
        about_call.len(),
        rows.len() - 1,
        "only the answer is outside the call"
    );
    let outcomes: Vec<&str> = about_call.iter().map(|r| r.outcome.as_str()).collect();
    for expected in ["awaiting_approval", "approval_granted", "started", "ok"] {
        assert!(outcomes.contains(&expected), "{outcomes:?}");
    }

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let page = b.get(&format!("/runs/{run}")).await;
    assert!(
        page.html
            .contains("Pay V-00001 for invoice INV-7781 &lt;b&gt;today&lt;&#x2f;b&gt;"),
        "{}",
        page.html
    );
    assert!(page.html.contains("Paid: the request waits in finance."));
    assert!(page.html.contains("How the run ended"));
    assert!(
        page.html.contains("approved by Rina Hartono"),
        "{}",
        page.html
    );
    assert!(!page.html.contains("approved by u-reviewer"));
    assert_eq!(
        cards(&page.html).len(),
        2,
        "the call and the answer:\n{}",
        page.html
    );
}
on_both_backends!(the_loop_run_shows_its_task_decision_and_answer);

/// The run ids listed on a Runs page.
fn listed(html: &str) -> Vec<String> {
    html.split("<span class=\"run\">")
        .skip(1)
        .filter_map(|s| s.split('<').next())
        .map(str::to_string)
        .collect()
}

/// Every kind of search the box offers: tool name (whole or part, with its `_`), tool
/// title, document number, person id and name, run id, date; `%` and `_` match only
/// themselves.
async fn every_search_kind_finds_its_runs(t: &TestDb) {
    let s = ReviewServer::configured(t, 25, |c| c.people(names).tool_titles(&registry())).await;
    let buyer = BUYER.shared();
    let read = s
        .app
        .call(
            &buyer,
            "run-search-read",
            GET_VENDOR_SUMMARY,
            json!({"vendor_code": VENDOR}),
        )
        .await;
    assert!(!read.is_error());
    let draft = s
        .app
        .call(
            &buyer,
            "run-search-draft",
            CREATE_PO_DRAFT,
            po_draft("search-1"),
        )
        .await;
    let number = draft.document.expect("a draft").number;
    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let today = chrono::Utc::now().date_naive().to_string();
    let both = ["run-search-draft", "run-search-read"];
    let cases: [(&str, &[&str]); 10] = [
        (GET_VENDOR_SUMMARY, &["run-search-read"]),
        ("vendor_summary", &["run-search-read"]),
        ("PURCHASING_CREATE", &["run-search-draft"]),
        ("Create purchase order", &["run-search-draft"]),
        (&number, &["run-search-draft"]),
        ("u-buyer", &both),
        ("dewi", &both),
        ("run-search-read", &["run-search-read"]),
        (&today, &both),
        ("%", &[]),
    ];
    for (q, expected) in cases {
        let page = b
            .get(&format!(
                "/runs?q={}",
                q.replace(' ', "+").replace('%', "%25")
            ))
            .await;
        assert_eq!(page.status, 200);
        let mut found = listed(&page.html);
        found.sort();
        assert_eq!(found, expected.to_vec(), "search {q:?}");
    }
    let none = b
        .get("/runs?q=purchasing%5Fget%5Fvendor%5Fsummary%5Fx")
        .await;
    assert!(listed(&none.html).is_empty());
}
on_both_backends!(every_search_kind_finds_its_runs);
