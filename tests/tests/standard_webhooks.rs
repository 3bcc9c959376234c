//! Approvers' webhooks as Standard Webhooks: deliveries from the outbox verified by the
//! official verifier (PyPI `standardwebhooks`, in `scripts/webhooks/receiver.py`, a
//! receiver as a team writes one), a tampered body and a replay refused, a repeat kept
//! once, and a key rotation that both the old and the new key verify.
//!
//! Runs when Python has `standardwebhooks` (`.ci/run` installs it and sets
//! `ERP_TOOLS_STANDARD_WEBHOOKS=1`, so there it must run); otherwise prints that it was
//! skipped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use erp_tools_core::agent::{
    ApprovalQueue, Delivery, ManualClock, Notification, Outbox, ScriptedModel, WebhookSender,
};
use erp_tools_tests::agent::{Deployment, pay, run_as};
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::principals::MANAGER;
use serde_json::Value;

/// The key in use, and the one it replaces during a rotation.
const NEW: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD: &str = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OQ==";

/// `scripts/webhooks/receiver.py`, started as a team would run it; killed when dropped.
struct PyReceiver {
    child: Child,
    url: String,
}

impl PyReceiver {
    /// A receiver verifying with `secrets`, or `None` (printed) when Python lacks the
    /// library and CI did not ask for this test.
    fn start(test: &str, secrets: &[&str]) -> Option<PyReceiver> {
        let has_library = Command::new("python3")
            .args(["-c", "import standardwebhooks"])
            .status()
            .is_ok_and(|s| s.success());
        if !has_library {
            assert_ne!(
                std::env::var("ERP_TOOLS_STANDARD_WEBHOOKS").as_deref(),
                Ok("1"),
                "PyPI standardwebhooks is not installed: python3 -m pip install -r \
                 scripts/webhooks/requirements.txt"
            );
            eprintln!(
                "{test}: skipped: python3 -m pip install -r scripts/webhooks/requirements.txt \
                 to verify deliveries with the official Standard Webhooks library"
            );
            return None;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/webhooks/receiver.py");
        let mut child = Command::new("python3")
            .arg(script)
            .args(secrets)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts the receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("the receiver says where it listens");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from the receiver: {line:?}"))
            .to_string();
        Some(PyReceiver { child, url })
    }

    /// Every request it got, as it recorded them.
    async fn received(&self) -> Vec<Value> {
        reqwest::get(&self.url).await.unwrap().json().await.unwrap()
    }

    /// Posts `body` with `headers` (the `webhook-*` ones of a delivery) and the status.
    async fn post(&self, headers: &Value, body: &str) -> u16 {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .body(body.to_string());
        for (name, value) in headers.as_object().unwrap() {
            request = request.header(name.as_str(), value.as_str().unwrap());
        }
        request.send().await.unwrap().status().as_u16()
    }
}

impl Drop for PyReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A manager's run pays above the threshold and pauses: its outbox holds one
/// notification.
async fn announced(t: &TestDb) -> (Outbox, Notification) {
    let d = Deployment::new(&t.db).await;
    let outbox = Outbox::new(t.db.clone()).console_url("https://erp.example/review");
    let queue = ApprovalQueue::new(t.db.clone()).notify(outbox.clone());
    let agent = d.agent().approval_queue(queue.clone());
    let mut model = ScriptedModel::new([pay(VENDOR, "85000.00", "pay-sw-1")]);
    let out = run_as(&agent, MANAGER, &mut model, "Pay 85 000").await;
    assert_eq!(out.status.as_str(), "awaiting_approval");
    let id = queue.for_run(MANAGER.branch.id, &out.run_id).await.unwrap()[0].id;
    let entry = outbox.get(&format!("approval-{id}-waiting")).await.unwrap();
    (outbox, entry.expect("recorded").notification)
}

/// The outbox's delivery verifies with the library; its `text` line for a chat relay is
/// in the verified body; the same body altered is refused ("No matching signature
/// found"); the same request again verifies but is kept once; a delivery signed ten
/// minutes ago (what a replay of a captured request carries) is refused as too old.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_verify_with_the_official_library_and_tampered_or_replayed_ones_do_not() {
    let test = "deliveries_verify_with_the_official_library";
    let Some(receiver) = PyReceiver::start(test, &[NEW]) else {
        return;
    };
    let t = TestDb::sqlite().await;
    let (outbox, notification) = announced(&t).await;
    let hook = WebhookSender::new(&receiver.url, NEW).unwrap();
    assert_eq!(outbox.deliver_due(&hook).await.unwrap().delivered, 1);

    let got = receiver.received().await;
    assert_eq!(got.len(), 1, "{got:?}");
    let first = &got[0];
    println!("headers: {}", first["headers"]);
    assert_eq!(
        (first["status"].as_u64(), &first["id"]),
        (Some(204), &Value::from(notification.id.clone()))
    );
    assert_eq!(first["verified_by"], serde_json::json!([0]), "{first}");
    let signature = first["headers"]["webhook-signature"].as_str().unwrap();
    assert!(
        signature.starts_with("v1,") && !signature.contains(' '),
        "{signature}"
    );
    let body = first["body"].as_str().unwrap();
    let sent: Notification = serde_json::from_str(body).unwrap();
    assert_eq!(sent, notification);
    assert!(
        sent.text
            .starts_with(&format!("Approval {} waits: ", sent.approval.id)),
        "{}",
        sent.text
    );

    let tampered = body.replace("u-manager", "u-clerk");
    assert_ne!(tampered, body);
    assert_eq!(receiver.post(&first["headers"], &tampered).await, 401);
    assert_eq!(
        receiver.post(&first["headers"], body).await,
        200,
        "a repeat, kept once"
    );

    let ten_minutes_ago = ManualClock::starting_at(chrono::Utc::now() - Duration::from_secs(600));
    let captured = WebhookSender::new(&receiver.url, NEW)
        .unwrap()
        .clock(Arc::new(ten_minutes_ago));
    let refused = captured.deliver(&notification, body).await.unwrap_err();
    assert!(refused.contains("401"), "{refused}");

    let got = receiver.received().await;
    let verdicts: Vec<(u64, &Value)> = got
        .iter()
        .map(|r| (r["status"].as_u64().unwrap(), &r["errors"]))
        .collect();
    assert_eq!(
        verdicts,
        [
            (204, &serde_json::json!([])),
            (401, &serde_json::json!(["No matching signature found"])),
            (200, &serde_json::json!([])),
            (401, &serde_json::json!(["Message timestamp too old"])),
        ]
    );
}

/// During a key rotation the sender signs with the new and the old key: a receiver still
/// on the old key and one already on the new key both verify the same delivery, which
/// carries two `v1,` signatures; once the sender drops the old key, the old receiver
/// refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotation_is_verified_by_receivers_on_either_key() {
    let test = "a_key_rotation_is_verified_by_receivers_on_either_key";
    let Some(on_old) = PyReceiver::start(test, &[OLD]) else {
        return;
    };
    let on_new = PyReceiver::start(test, &[NEW]).expect("the library is there");
    let t = TestDb::sqlite().await;
    let (_outbox, notification) = announced(&t).await;
    let body = serde_json::to_string(&notification).unwrap();

    for receiver in [&on_old, &on_new] {
        let rotating = WebhookSender::new(&receiver.url, NEW)
            .unwrap()
            .also_sign_with(OLD)
            .unwrap();
        rotating.deliver(&notification, &body).await.unwrap();
        let got = receiver.received().await;
        assert_eq!(got[0]["verified_by"], serde_json::json!([0]), "{got:?}");
        let signature = got[0]["headers"]["webhook-signature"].as_str().unwrap();
        assert_eq!(
            signature
                .split(' ')
                .filter(|s| s.starts_with("v1,"))
                .count(),
            2,
            "{signature}"
        );
    }
    println!("rotating: {}", on_new.received().await[0]["headers"]);

    let new_only = WebhookSender::new(&on_old.url, NEW).unwrap();
    let refused = new_only.deliver(&notification, &body).await.unwrap_err();
    assert!(refused.contains("401"), "{refused}");
    assert_eq!(
        on_old.received().await[1]["errors"],
        serde_json::json!(["No matching signature found"])
    );
}
