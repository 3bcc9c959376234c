//! What a reviewer approves is what gets created (SPEC V3): the pending action's preview
//! is computed by its own draft handler in a transaction that is rolled back (nothing
//! stays: no document, no idempotency key), shown on the card and stored with the
//! approval; the approved call creates that same document; a call whose document differs
//! from the approved preview creates nothing and pauses again. Also the console's edges:
//! a foreign `Origin` or `Sec-Fetch-Site` is refused even with a valid CSRF token,
//! unknown paths get a 404 page with the navigation, signing in returns to the page asked
//! for, and drafted documents have their own page. On SQLite and PostgreSQL.

use erp_tools_core::PreviewKind;
use erp_tools_core::agent::{ApprovalStatus, ModelAction, RunStatus, ScriptedModel};
use erp_tools_core::review::DocumentView;
use erp_tools_tests::agent::pay;
use erp_tools_tests::app::arguments::po_draft;
use erp_tools_tests::app::handler_calls_for;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::tools::CREATE_PO_DRAFT;
use erp_tools_tests::db::TestDb;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, MANAGER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};

async fn count(t: &TestDb, sql: &'static str, run: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(run.to_string())
        .fetch_one(t.db.pool())
        .await
        .unwrap()
}

async fn created(t: &TestDb, run: &str) -> (i64, i64) {
    (
        count(
            t,
            "SELECT COUNT(*) FROM payment_requests WHERE drafted_by_agent_run = $1",
            run,
        )
        .await,
        count(
            t,
            "SELECT COUNT(*) FROM erp_idempotency_keys WHERE agent_run_id = $1",
            run,
        )
        .await,
    )
}

/// The preview runs the handler once and leaves nothing; the card shows it; the approved
/// call creates the same document, once.
async fn the_preview_is_what_approving_creates(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let manager = MANAGER.shared();
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "pay-1")]);
    let out = s.agent.run(&manager, &mut model, "Pay V-00001").await;
    assert_eq!(out.status.as_str(), "awaiting_approval");
    let run = out.run_id.clone();
    assert_eq!(handler_calls_for(&run), 1, "the preview ran the handler");
    assert_eq!(created(t, &run).await, (0, 0), "and left nothing behind");

    let stored = s.queue.pending(MANAGER.branch.id).await.unwrap().remove(0);
    let preview = stored
        .preview
        .clone()
        .expect("a draft's approval has a preview");
    assert_eq!(preview.kind, PreviewKind::RolledBack);
    assert_eq!(preview.document_type.as_deref(), Some("payment_request"));
    assert_eq!(preview.value["status"], "draft");
    assert_eq!(
        out.pending().unwrap().preview.as_ref(),
        Some(&preview),
        "the paused run carries the same preview"
    );

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let page = b.get("/approvals").await;
    assert!(
        page.html
            .contains("Preview computed by the tool in a transaction that was rolled back"),
        "{}",
        page.html
    );
    assert!(
        page.html.contains("&quot;status&quot;: &quot;draft&quot;")
            || page.html.contains("\"status\": \"draft\"")
    );
    let csrf = page.csrf().unwrap();
    let done = b
        .post(
            &format!("/approvals/{}/approve", stored.id),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(done.status, 303, "{}", done.html);

    let mut after = ScriptedModel::new([ModelAction::answer("paid")]);
    let resumed = s
        .queue
        .resume(&s.agent, &manager, &mut after, stored.id)
        .await
        .unwrap();
    assert_eq!(resumed.status.as_str(), "done", "{:?}", resumed.status);
    assert_eq!(created(t, &run).await, (1, 1), "created once");
    assert_eq!(handler_calls_for(&run), 2, "preview and execution");
    let response: String =
        sqlx::query_scalar("SELECT response FROM erp_idempotency_keys WHERE agent_run_id = $1")
            .bind(run.clone())
            .fetch_one(t.db.pool())
            .await
            .unwrap();
    let response: serde_json::Value = serde_json::from_str(&response).unwrap();
    let mut seen = preview.value.clone();
    let mut made = response.clone();
    seen.as_object_mut().unwrap().remove("number");
    made.as_object_mut().unwrap().remove("number");
    assert_eq!(seen, made, "what was created is what was previewed");
}
on_both_backends!(the_preview_is_what_approving_creates);

/// An approval of a preview other than the document the handler produces now: the draft
/// is rolled back (nothing created) and the run pauses again, with the preview of what it
/// would create now, for a new decision.
async fn a_different_document_creates_nothing_and_pauses_again(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let manager = MANAGER.shared();
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "pay-2")]);
    let out = s.agent.run(&manager, &mut model, "Pay V-00001").await;
    let run = out.run_id.clone();
    let paused = out.paused().unwrap();
    let approval = paused
        .pending
        .approve(REVIEWER.user_id)
        .bound_to("the digest of a preview with another amount");
    let mut after = ScriptedModel::new([ModelAction::answer("paid")]);
    let again = s
        .agent
        .resume(&manager, &mut after, paused, approval)
        .await
        .unwrap();
    let RunStatus::AwaitingApproval { action, .. } = &again.status else {
        panic!("paused again: {:?}", again.status);
    };
    assert!(
        action.reason.contains("differs from the preview"),
        "{}",
        action.reason
    );
    let now = action.preview.as_ref().expect("with the new preview");
    assert_eq!(now.kind, PreviewKind::RolledBack);
    assert_eq!(created(t, &run).await, (0, 0), "nothing was created");

    let log = t.db.audit_log(Some(&run)).await.unwrap();
    assert!(
        log.iter().any(|r| r.source == "runtime"
            && r.outcome == "tool_error"
            && r.message
                .as_deref()
                .is_some_and(|m| m.contains("Nothing was created"))),
        "the refused execution is audited"
    );
    // The same document again: approving the new preview creates it.
    let paused = again.paused().unwrap();
    let approval = paused.pending.approve(REVIEWER.user_id);
    let mut after = ScriptedModel::new([ModelAction::answer("paid")]);
    let done = s
        .agent
        .resume(&manager, &mut after, paused, approval)
        .await
        .unwrap();
    assert_eq!(done.status.as_str(), "done", "{:?}", done.status);
    assert_eq!(created(t, &run).await, (1, 1));
}
on_both_backends!(a_different_document_creates_nothing_and_pauses_again);

/// A decision POST from another origin is refused before its CSRF token is read.
async fn posts_from_another_origin_are_refused(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "pay-3")]);
    s.agent
        .run(&MANAGER.shared(), &mut model, "Pay V-00001")
        .await;
    let id = s.queue.pending(MANAGER.branch.id).await.unwrap()[0].id;
    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let csrf = b.get("/approvals").await.csrf().unwrap();
    let approve = format!("/approvals/{id}/approve");
    let fields = [("csrf", csrf.as_str())];
    let foreign = b
        .post_with(&approve, &fields, &[("origin", "https://evil.example")])
        .await;
    assert_eq!(foreign.status, 403);
    let text = foreign.html.replace("&#x2f;", "/");
    assert!(text.contains("Origin: https://evil.example"), "{text}");
    assert!(foreign.html.contains("Sign out"), "the navigation stays");
    let cross = b
        .post_with(&approve, &fields, &[("sec-fetch-site", "cross-site")])
        .await;
    assert_eq!(cross.status, 403);
    assert_eq!(
        s.queue.get(id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );
    let own_origin = s.base.trim_end_matches("/review").to_string();
    let ok = b
        .post_with(
            &approve,
            &fields,
            &[("origin", &own_origin), ("sec-fetch-site", "same-origin")],
        )
        .await;
    assert_eq!(ok.status, 303, "{}", ok.html);
    assert_eq!(
        s.queue.get(id).await.unwrap().unwrap().status,
        ApprovalStatus::Approved
    );
}
on_both_backends!(posts_from_another_origin_are_refused);

/// Unknown paths answer a 404 page that keeps the navigation; signing in from a deep
/// link lands on it, never on another site.
async fn unknown_pages_and_deep_links(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let mut b = Browser::new(&s);
    let asked = b.get("/approvals?x=1").await;
    assert_eq!(asked.status, 303);
    let to = asked.location.unwrap();
    assert!(
        to.ends_with("/review/sign-in?next=%2Freview%2Fapprovals%3Fx%3D1"),
        "{to}"
    );
    let form = b.get("/sign-in?next=%2Freview%2Fapprovals%3Fx%3D1").await;
    assert!(form.html.contains("name=\"next\""), "{}", form.html);
    let csrf = form.csrf().unwrap();
    let token = s.token(&REVIEWER.principal());
    let signed = b
        .post(
            "/sign-in",
            &[
                ("token", &token),
                ("csrf", &csrf),
                ("next", "/review/approvals?x=1"),
            ],
        )
        .await;
    assert_eq!(signed.location.as_deref(), Some("/review/approvals?x=1"));

    let mut other = Browser::new(&s);
    let form = other.get("/sign-in").await;
    let csrf = form.csrf().unwrap();
    let away = other
        .post(
            "/sign-in",
            &[
                ("token", &token),
                ("csrf", &csrf),
                ("next", "//evil.example/review/x"),
            ],
        )
        .await;
    assert_eq!(
        away.location.as_deref(),
        Some("/review/runs"),
        "never another site"
    );

    for path in ["/nowhere", "/approvals/2", "/runs/a/b"] {
        let page = b.get(path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(page.html.contains("Page not found"), "{path}");
        assert!(page.html.contains("Sign out") && !page.html.contains(">Sign in<"));
    }
    let anonymous = Browser::new(&s).get("/nowhere").await;
    assert_eq!(anonymous.status, 404);
    assert!(anonymous.html.contains("Sign in"));
}
on_both_backends!(unknown_pages_and_deep_links);

/// A drafted document has its page (header, status, the run that drafted it, the ERP's
/// own page), and Drafts lists it with its status, linked to that page.
async fn documents_have_their_page(t: &TestDb) {
    let view = DocumentView::new("purchase_order", "Purchase order")
        .field("Lines", "/line_count")
        .field("Quantity", "/total_qty")
        .status("/status")
        .erp_url("https://erp.example.com/po/{number}");
    let s = ReviewServer::configured(t, 25, |c| {
        c.document_view(view)
            .people(|id| (id == "u-buyer").then(|| "Sari Buyer".into()))
    })
    .await;
    let made = s
        .app
        .call(
            &BUYER.shared(),
            "run-doc-1",
            CREATE_PO_DRAFT,
            po_draft("po-9"),
        )
        .await;
    let number = made.document.expect("a draft").number;
    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let drafts = b.get("/drafts").await;
    let drafts_html = drafts.html.replace("&#x2f;", "/");
    let href = format!("/review/documents/purchase_order/{number}");
    assert!(
        drafts_html.contains(&format!("href=\"{href}\"")),
        "{drafts_html}"
    );
    assert!(
        drafts.html.contains("<td data-label=\"Status\">draft</td>"),
        "{}",
        drafts.html
    );
    assert!(
        drafts
            .html
            .contains("title=\"user id u-buyer\">Sari Buyer<"),
        "people by name"
    );
    let page = b.get(&format!("/documents/purchase_order/{number}")).await;
    assert_eq!(page.status, 200, "{}", page.html);
    let html = page.html.replace("&#x2f;", "/");
    assert!(html.contains(&format!("<h1>Purchase order {number}</h1>")));
    assert!(html.contains("<dt>Quantity</dt><dd>34.5</dd>"), "{html}");
    assert!(html.contains("href=\"/review/runs/run-doc-1\""), "{html}");
    assert!(html.contains(&format!("href=\"https://erp.example.com/po/{number}\"")));
    let missing = b.get("/documents/purchase_order/PO-1999-0001").await;
    assert_eq!(missing.status, 404);
    let run = b.get("/runs/run-doc-1").await;
    assert!(
        run.html.contains("Tool output (data, not instructions)"),
        "{}",
        run.html
    );
}
on_both_backends!(documents_have_their_page);

/// A draft outside the framework's transaction (a remote ERP) previews through its hook;
/// the hook is asked again just before the approved call, and an answer that changed
/// pauses the run again instead of running the call.
struct CountingHook(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl erp_tools_core::PreviewHook for CountingHook {
    fn preview<'a>(
        &'a self,
        _ctx: &'a erp_tools_core::ToolContext,
        args: &'a serde_json::Value,
    ) -> futures::future::BoxFuture<'a, Result<erp_tools_core::Preview, erp_tools_core::ToolError>>
    {
        let seen = self.0.load(std::sync::atomic::Ordering::SeqCst);
        let value = serde_json::json!({"amount": args["amount"], "fee": seen.to_string()});
        Box::pin(async move { Ok(erp_tools_core::Preview::from_hook("payment_request", value)) })
    }
}

async fn a_remote_drafts_hook_previews_and_binds(t: &TestDb) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let s = ReviewServer::on(t, 25).await;
    let fee = Arc::new(AtomicUsize::new(0));
    let queue = s.queue.clone().preview_hook(
        "finance_create_payment_request_draft",
        CountingHook(fee.clone()),
    );
    let agent =
        erp_tools_core::agent::Agent::new(s.app.runtime.clone(), erp_tools_tests::agent::policy())
            .unwrap()
            .approval_queue(queue.clone());
    let manager = MANAGER.shared();
    let mut model = ScriptedModel::new([pay(VENDOR, "85000", "pay-h")]);
    let out = agent.run(&manager, &mut model, "Pay V-00001").await;
    let run = out.run_id.clone();
    assert_eq!(
        handler_calls_for(&run),
        0,
        "the hook previews; the handler did not run"
    );
    let first = queue.pending(MANAGER.branch.id).await.unwrap().remove(0);
    let preview = first.preview.clone().unwrap();
    assert_eq!(preview.kind, PreviewKind::Hook);
    assert_eq!(preview.value["fee"], "0");
    queue
        .approve(first.id, &REVIEWER.principal(), None)
        .await
        .unwrap();

    fee.store(7, Ordering::SeqCst); // the remote system's answer changed
    let mut after = ScriptedModel::new([ModelAction::answer("paid")]);
    let again = queue
        .resume(&agent, &manager, &mut after, first.id)
        .await
        .unwrap();
    assert_eq!(
        again.status.as_str(),
        "awaiting_approval",
        "{:?}",
        again.status
    );
    assert_eq!(handler_calls_for(&run), 0, "the call did not run");
    let second = queue.pending(MANAGER.branch.id).await.unwrap().remove(0);
    assert_ne!(second.id, first.id, "a new approval, of the new preview");
    assert_eq!(second.preview.as_ref().unwrap().value["fee"], "7");

    queue
        .approve(second.id, &REVIEWER.principal(), None)
        .await
        .unwrap();
    let mut after = ScriptedModel::new([ModelAction::answer("paid")]);
    let done = queue
        .resume(&agent, &manager, &mut after, second.id)
        .await
        .unwrap();
    assert_eq!(done.status.as_str(), "done", "{:?}", done.status);
    assert_eq!(
        handler_calls_for(&run),
        1,
        "run once, after the unchanged hook answer"
    );
    assert_eq!(created(t, &run).await, (1, 1));
}
on_both_backends!(a_remote_drafts_hook_previews_and_binds);
