//! Approvers told through the outbox (`erp_outbox`): a notification recorded in the
//! approval's own transaction, posted to a webhook with an HMAC signature, retried with
//! backoff, a dead letter after the last attempt (listed, resendable), delivered once per
//! delivery id when the receiver recovers, expiries announced; two workers never send one
//! notification twice. On SQLite and (with `ERP_TOOLS_PG_URL`) PostgreSQL.

use std::time::Duration;

use erp_tools_core::agent::{
    APPROVAL_EXPIRED, APPROVAL_WAITING, ApprovalQueue, Notification, Outbox, RetryPolicy,
    ScriptedModel, WebhookSender,
};
use erp_tools_tests::agent::{Deployment, pay, run_as};
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::MANAGER;
use erp_tools_tests::webhook::{Receiver, SECRET};

/// Retries after 10 ms, 20 ms, ... at most `attempts` attempts.
fn quick(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts: attempts,
        first_retry: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
    }
}

/// The manager's run pays `amount` (above the threshold) and pauses; the approval's id.
async fn paused(d: &Deployment, queue: &ApprovalQueue, client_ref: &str) -> i64 {
    let agent = d.agent().approval_queue(queue.clone());
    let mut model = ScriptedModel::new([pay(VENDOR, "85000.00", client_ref)]);
    let out = run_as(&agent, MANAGER, &mut model, "Pay 85 000").await;
    assert_eq!(out.status.as_str(), "awaiting_approval");
    let stored = queue.for_run(MANAGER.branch.id, &out.run_id).await.unwrap();
    stored[0].id
}

/// Runs delivery passes until `done` or 5 s.
async fn deliver_until(outbox: &Outbox, hook: &WebhookSender, done: impl Fn(u32, u32) -> bool) {
    let (mut delivered, mut dead) = (0, 0);
    for _ in 0..500 {
        let pass = outbox.deliver_due(hook).await.unwrap();
        delivered += pass.delivered;
        dead += pass.dead;
        if done(delivered, dead) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not done in 5 s: {delivered} delivered, {dead} dead");
}

/// The approval's notification is recorded with it; its body links to the console and
/// carries no argument value; the receiver, failing twice, gets it on the third attempt
/// with the same delivery id and a valid signature each time, and accepts it once.
async fn a_waiting_approval_is_announced_and_delivered_once_after_failures(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let outbox = Outbox::new(t.db.clone())
        .retry(quick(5))
        .console_url("https://erp.example/review");
    let queue = ApprovalQueue::new(t.db.clone()).notify(outbox.clone());
    let id = paused(&d, &queue, "pay-secret-ref").await;

    let delivery_id = format!("approval-{id}-waiting");
    let recorded = outbox.get(&delivery_id).await.unwrap().expect("recorded");
    assert_eq!(recorded.status, "pending");
    let n: &Notification = &recorded.notification;
    assert_eq!(n.event, APPROVAL_WAITING);
    assert_eq!(n.approval.id, id);
    assert_eq!(n.approval.requested_for, MANAGER.user_id);
    assert_eq!(
        n.url.as_deref(),
        Some(format!("https://erp.example/review/approvals#approval-{id}").as_str())
    );
    let body = serde_json::to_string(n).unwrap();
    println!("notification payload: {body}");
    assert!(
        !body.contains("85000") && !body.contains("pay-secret-ref"),
        "{body}"
    );

    let receiver = Receiver::start(2).await;
    let hook = WebhookSender::new(&receiver.url, SECRET).unwrap();
    deliver_until(&outbox, &hook, |delivered, _| delivered == 1).await;
    let got = receiver.received();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|r| r.delivery == delivery_id && r.signed));
    assert_eq!(got.iter().filter(|r| r.accepted).count(), 1);
    let sent: Notification = serde_json::from_str(&got[2].body).unwrap();
    assert_eq!(&sent, n);
    let done = outbox.get(&delivery_id).await.unwrap().unwrap();
    assert_eq!((done.status.as_str(), done.attempts), ("delivered", 3));
    // Nothing more is sent.
    assert_eq!(outbox.deliver_due(&hook).await.unwrap().delivered, 0);
    assert_eq!(receiver.received().len(), 3);
}
on_both_backends!(a_waiting_approval_is_announced_and_delivered_once_after_failures);

/// A receiver down for longer than the retries: after the last attempt the notification
/// is a dead letter with its last error, listed for the branch; resent once the receiver
/// is back, it is delivered once, with the same delivery id.
async fn a_receiver_down_too_long_leaves_a_dead_letter_that_can_be_resent(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let outbox = Outbox::new(t.db.clone()).retry(quick(3));
    let queue = ApprovalQueue::new(t.db.clone()).notify(outbox.clone());
    let id = paused(&d, &queue, "pay-1").await;
    let receiver = Receiver::start(0).await;
    receiver.set_down(true);
    let hook = WebhookSender::new(&receiver.url, SECRET).unwrap();
    deliver_until(&outbox, &hook, |_, dead| dead == 1).await;
    assert_eq!(receiver.received().len(), 3, "three attempts");

    let dead = outbox.dead_letters(MANAGER.branch.id, 10).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].attempts, 3);
    assert!(
        dead[0].last_error.as_deref().unwrap().contains("503"),
        "{dead:?}"
    );
    assert!(
        outbox.dead_letters(99, 10).await.unwrap().is_empty(),
        "another branch"
    );
    assert_eq!(
        outbox.deliver_due(&hook).await.unwrap().delivered,
        0,
        "dead stays dead"
    );

    receiver.set_down(false);
    assert!(outbox.resend(dead[0].id, MANAGER.branch.id).await.unwrap());
    assert!(
        !outbox.resend(dead[0].id, MANAGER.branch.id).await.unwrap(),
        "not dead now"
    );
    deliver_until(&outbox, &hook, |delivered, _| delivered == 1).await;
    let got = receiver.received();
    let accepted: Vec<_> = got.iter().filter(|r| r.accepted).collect();
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0].delivery, format!("approval-{id}-waiting"));
    assert!(
        outbox
            .dead_letters(MANAGER.branch.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
}
on_both_backends!(a_receiver_down_too_long_leaves_a_dead_letter_that_can_be_resent);

/// An approval that expires undecided is announced once; two workers delivering at the
/// same time send each notification once.
async fn expiries_are_announced_and_two_workers_send_each_once(t: &TestDb) {
    let d = Deployment::new(&t.db).await;
    let outbox = Outbox::new(t.db.clone()).retry(quick(3));
    let queue = ApprovalQueue::new(t.db.clone())
        .expire_after(Duration::from_millis(1))
        .notify(outbox.clone());
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(paused(&d, &queue, &format!("pay-{i}")).await);
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let receiver = Receiver::start(0).await;
    let hook = WebhookSender::new(&receiver.url, SECRET).unwrap();
    let other = Outbox::new(t.open_again().await).retry(quick(3));
    let (a, b) = tokio::join!(outbox.deliver_due(&hook), other.deliver_due(&hook));
    let (a, b) = (a.unwrap(), b.unwrap());
    deliver_until(&outbox, &hook, |_, _| receiver.received().len() >= 8).await;
    assert_eq!(a.expiries + b.expiries, 4, "{a:?} {b:?}");
    let got = receiver.received();
    let mut ids_sent: Vec<_> = got.iter().map(|r| r.delivery.clone()).collect();
    ids_sent.sort();
    let mut expected: Vec<_> = ids
        .iter()
        .flat_map(|id| {
            [
                format!("approval-{id}-expired"),
                format!("approval-{id}-waiting"),
            ]
        })
        .collect();
    expected.sort();
    assert_eq!(ids_sent, expected, "each notification sent once");
    let expired: Notification = serde_json::from_str(
        &got.iter()
            .find(|r| r.delivery.ends_with("-expired"))
            .unwrap()
            .body,
    )
    .unwrap();
    assert_eq!(expired.event, APPROVAL_EXPIRED);
    assert!(
        expired.text.contains("expired undecided"),
        "{}",
        expired.text
    );
}
on_both_backends!(expiries_are_announced_and_two_workers_send_each_once);
