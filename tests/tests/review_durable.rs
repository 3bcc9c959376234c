//! The review console shows what happens apart from the loop: a run cut off by a dead
//! process (waiting to be taken over), then taken over (by whom, when); and the
//! notifications to approvers that failed every attempt, sent again from the console.
//! On SQLite and PostgreSQL.

use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::agent::{
    Agent, AgentEventKind, ApprovalQueue, ModelAction, Outbox, RetryPolicy, RunLog, RunRequest,
    ScriptedModel, WebhookSender,
};
use erp_tools_core::{Database, ToolRuntime};
use erp_tools_tests::agent::{order, pay, policy};
use erp_tools_tests::app;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::durable::{HangingModel, HangingSink};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{MANAGER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};
use erp_tools_tests::webhook::{Receiver, SECRET};

fn durable_agent(db: &Database) -> Agent {
    Agent::new(ToolRuntime::new(app::registry(), db.clone()), policy())
        .unwrap()
        .run_log(RunLog::new(db.clone()))
}

/// A run cut off before its second call shows as cut off; taken over by another
/// process, it shows who took it over and when.
async fn a_cut_off_run_and_its_take_over_are_shown(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let run_id = "run-console-durable";
    let db_a = t.open_again().await;
    let sink = HangingSink::new(&db_a, AgentEventKind::Started, 2);
    let reached = sink.reached();
    let agent_a = durable_agent(&db_a).audit_sink(sink);
    let mut model = HangingModel::new(
        ScriptedModel::new([order(VENDOR, "5", "po-1"), pay(VENDOR, "1200", "pay-1")]),
        0,
    );
    let request = RunRequest::new("Order and pay").run_id(run_id);
    let task = tokio::spawn(async move {
        agent_a
            .run_with(&Arc::new(MANAGER.principal()), &mut model, request)
            .await
            .status
    });
    tokio::time::timeout(Duration::from_secs(20), reached.notified())
        .await
        .unwrap();
    task.abort();
    let _ = task.await;
    db_a.close().await;

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let page = b.get(&format!("/runs/{run_id}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    assert!(
        page.html
            .contains("its process stopped after step 2; it waits to be taken over"),
        "{}",
        page.html
    );

    let agent_b = durable_agent(&t.db);
    let mut model_b = ScriptedModel::new([ModelAction::answer("Done.")]);
    let out = agent_b
        .take_over(&Arc::new(MANAGER.principal()), &mut model_b, run_id)
        .await
        .unwrap();
    assert_eq!(out.answer(), Some("Done."));
    let page = b.get(&format!("/runs/{run_id}")).await;
    let by = format!(
        "last by replica {} as {}",
        t.db.replica_id(),
        MANAGER.user_id
    );
    assert!(page.html.contains("taken over 1 time(s)"), "{}", page.html);
    assert!(page.html.contains(&by), "{}", page.html);
    assert!(
        page.html.contains("run taken over"),
        "the audit row is in the story"
    );
}
on_both_backends!(a_cut_off_run_and_its_take_over_are_shown);

/// A notification that failed every attempt is listed on the Approvals page; "send
/// again" (with the form's CSRF token) makes it pending, and it is then delivered.
async fn dead_letters_are_listed_and_sent_again(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let retry = RetryPolicy {
        max_attempts: 1,
        first_retry: Duration::from_millis(10),
        max_backoff: Duration::from_millis(10),
    };
    let outbox = Outbox::new(t.db.clone()).retry(retry);
    let queue = ApprovalQueue::new(t.db.clone()).notify(outbox.clone());
    let agent = Agent::new(s.app.runtime.clone(), policy())
        .unwrap()
        .approval_queue(queue.clone());
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "pay-1")]);
    agent.run(&MANAGER.shared(), &mut model, "Pay").await;
    let id = queue.pending(MANAGER.branch.id).await.unwrap()[0].id;
    let receiver = Receiver::start(0).await;
    receiver.set_down(true);
    let hook = WebhookSender::new(&receiver.url, SECRET).unwrap();
    assert_eq!(outbox.deliver_due(&hook).await.unwrap().dead, 1);

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let page = b.get("/approvals").await;
    let delivery = format!("approval-{id}-waiting");
    assert!(
        page.html.contains("Notifications not delivered"),
        "{}",
        page.html
    );
    assert!(page.html.contains(&delivery));
    assert!(
        page.html.contains("the webhook answered 503"),
        "{}",
        page.html
    );
    let dead = outbox.dead_letters(MANAGER.branch.id, 10).await.unwrap();
    let resend = format!("/notifications/{}/resend", dead[0].id);
    let refused = b.post(&resend, &[("csrf", "wrong")]).await;
    assert_eq!(refused.status, 403);
    let csrf = page.csrf().unwrap();
    let sent = b.post(&resend, &[("csrf", &csrf)]).await;
    assert_eq!(sent.status, 303);
    assert!(
        outbox
            .dead_letters(MANAGER.branch.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    receiver.set_down(false);
    assert_eq!(outbox.deliver_due(&hook).await.unwrap().delivered, 1);
    let page = b.get("/approvals").await;
    assert!(!page.html.contains("Notifications not delivered"));
}
on_both_backends!(dead_letters_are_listed_and_sent_again);
