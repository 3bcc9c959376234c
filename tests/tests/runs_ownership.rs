//! Issue 15, point 2: runs belong to people. A run id from any source (token claim,
//! `X-Agent-Run-Id`, `ToolCall::agent_run_id`, the agent loop's request, the principal
//! scope) is bound to the principal (user and branch) that used it first; anyone else
//! presenting it is refused with a clear message and a `denied` audit row, and nothing
//! runs. Run ids from every source are 1 to 128 visible ASCII characters.

use std::sync::Arc;

use erp_tools_core::agent::{
    Agent, ModelAction, Policy, RunOutcome, RunRequest, RunStatus, ScriptedModel,
};
use erp_tools_core::{Outcome, Principal, principal_run_id};
use erp_tools_tests::app::arguments::order;
use erp_tools_tests::app::seed::{VENDOR, VENDOR_JAKARTA};
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Session, Table, count, runtime_rows};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, SESSIONS, STATELESS, challenge, stateless_call};
use erp_tools_tests::ids::new_run;
use erp_tools_tests::mcp::{assert_error_text, call_tool, draft_po, text_of};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, BUYER_IN_JAKARTA, JKT, SECOND_BUYER};
use serde_json::{Value, json};

const FOREIGN: &str = "belongs to another person";

/// An order of `qty` from a vendor of `who`'s own branch.
fn order_in_own_branch(who: &Principal, qty: &str, client_ref: &str) -> Value {
    let vendor = if who.branch_id() == JKT.id {
        VENDOR_JAKARTA
    } else {
        VENDOR
    };
    order(vendor, qty, client_ref)
}

/// A new run in which the buyer drafted first (`po-1`): the run is theirs.
async fn buyers_run(t: &TestDb) -> Session {
    let buyer = Session::new(&t.db, BUYER).await;
    buyer.create_po(order(VENDOR, "1", "po-1")).await;
    buyer
}

/// An agent run of `who` in `run` whose model proposes `actions`.
async fn agent_run_in(
    agent: &Agent,
    who: &Principal,
    run: &str,
    actions: Vec<ModelAction>,
) -> RunOutcome {
    let mut model = ScriptedModel::new(actions);
    let request = RunRequest::new("order").run_id(run);
    agent
        .run_with(&Arc::new(who.clone()), &mut model, request)
        .await
}

/// The second buyer names the buyer's run in `X-Agent-Run-Id`, then with a token bound to
/// it: refused and audited both times, nothing drafted, the buyer's `client_ref` untouched.
async fn another_user_cannot_use_a_run(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let run = new_run();
    let owner = server
        .client(&server.token(&BUYER.principal()), &SESSIONS, Some(&run))
        .await;
    let (number, _) = draft_po(&owner, &order(VENDOR, "24", "po-1")).await;

    // The header, and a token whose `run` claim names the run.
    for (token, header) in [
        (server.token(&SECOND_BUYER.principal()), Some(run.as_str())),
        (server.token(&SECOND_BUYER.in_run(&run)), None),
    ] {
        let other = server.client(&token, &STATELESS, header).await;
        for (name, args) in [
            (CREATE_PO_DRAFT, order(VENDOR, "24", "po-1")),
            (CREATE_PO_DRAFT, order(VENDOR, "1", "po-squat")),
            (GET_PO, json!({ "number": number })),
        ] {
            let result = call_tool(&other, name, args).await;
            assert_error_text(&result, &format!("Agent run {run} {FOREIGN}"));
            assert_error_text(&result, "Nothing ran");
            let text = text_of(&result);
            assert!(!text.contains(BUYER.user_id), "names the owner: {text}");
        }
        other.cancel().await.unwrap();
    }
    let rows = runtime_rows(server.db(), None).await;
    let refused: Vec<_> = rows
        .iter()
        .filter(|r| r.user_id == SECOND_BUYER.user_id)
        .collect();
    assert_eq!(refused.len(), 6, "one audit row per refused call");
    for r in &refused {
        assert_eq!(r.outcome, Outcome::Denied.as_str());
        assert_eq!(r.agent_run_id, run);
        assert!(
            r.message.as_deref().unwrap_or("").contains(FOREIGN),
            "{r:?}"
        );
        assert!(r.finished_at.is_some());
    }
    // The buyer's run and client_refs are still theirs: the retry replays, po-squat is
    // free.
    assert_eq!(
        draft_po(&owner, &order(VENDOR, "24", "po-1")).await,
        (number, true)
    );
    assert!(!draft_po(&owner, &order(VENDOR, "1", "po-squat")).await.1);
    owner.cancel().await.unwrap();
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 2);
    server.stop().await;
}
on_both_backends!(another_user_cannot_use_a_run);

/// The same user id in another branch is another principal.
async fn the_same_user_in_another_branch_is_another_principal(t: &TestDb) {
    let buyer = buyers_run(t).await;
    let in_jakarta = BUYER_IN_JAKARTA.shared();
    let arguments = order(VENDOR_JAKARTA, "1", "po-1");
    let out = buyer
        .app
        .call(&in_jakarta, &buyer.run, CREATE_PO_DRAFT, arguments)
        .await;
    assert_eq!(out.outcome, Outcome::Denied);
    assert!(out.text.contains(FOREIGN), "{}", out.text);
    assert_eq!(buyer.app.count(Table::PurchaseOrders).await, 1);
}
on_both_backends!(the_same_user_in_another_branch_is_another_principal);

/// Nobody can name someone else's principal scope (`user-...`), not even before its
/// owner first uses it: the owner's scope can never be squatted.
async fn a_principal_scope_cannot_be_named_by_someone_else(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let buyers_scope = principal_run_id(&BUYER.principal());
    let other = SECOND_BUYER.principal();
    // The second buyer first, by header and by token claim, and with a made-up `user-` id.
    for (token, header) in [
        (server.token(&other), Some(buyers_scope.as_str())),
        (server.token(&SECOND_BUYER.in_run(&buyers_scope)), None),
        (server.token(&other), Some("user-000000000000000000000000")),
    ] {
        let client = server.client(&token, &STATELESS, header).await;
        let result = call_tool(&client, CREATE_PO_DRAFT, order(VENDOR, "1", "po-1")).await;
        assert_error_text(&result, FOREIGN);
        client.cancel().await.unwrap();
    }
    assert_eq!(
        server.db().agent_run_owner(&buyers_scope).await.unwrap(),
        None
    );
    // The buyer's own scope still works, named or not.
    let token = server.token(&BUYER.principal());
    for (header, replayed) in [(None, false), (Some(buyers_scope.as_str()), true)] {
        let client = server.client(&token, &SESSIONS, header).await;
        let (_, was_replayed) = draft_po(&client, &order(VENDOR, "1", "po-1")).await;
        assert_eq!(was_replayed, replayed);
        client.cancel().await.unwrap();
    }
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 1);
    let denied = runtime_rows(server.db(), None)
        .await
        .into_iter()
        .filter(|r| r.outcome == "denied" && r.user_id == SECOND_BUYER.user_id)
        .count();
    assert_eq!(denied, 3);
    server.stop().await;
}
on_both_backends!(a_principal_scope_cannot_be_named_by_someone_else);

/// A 300 KB or non-ASCII run id is refused from every source, and never stored.
async fn bad_run_ids_are_refused_from_every_source(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let huge = "r".repeat(300 * 1024);
    let bad: [&str; 3] = [&huge, "run-é", "run with spaces"];
    let token = server.token(&BUYER.principal());

    for id in bad {
        // The agent host's header: 400 before anything runs.
        let arguments = order(VENDOR, "1", "po-h");
        let response = stateless_call(&server.url, &token, CREATE_PO_DRAFT, &arguments)
            .header("x-agent-run-id", id.as_bytes())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "header {:.20}", id);
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error_description"]
                .as_str()
                .unwrap()
                .contains("1 to 128 visible ASCII")
        );

        // The token's `run` claim: the token is refused.
        let claimed = server.token_with(&BUYER.principal(), |c| {
            c.agent_run_id = Some(id.to_string())
        });
        let arguments = order(VENDOR, "1", "po-t");
        let response = stateless_call(&server.url, &claimed, CREATE_PO_DRAFT, &arguments)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "claim {:.20}", id);
        let header = challenge(&response);
        assert!(header.contains("invalid_token"), "{header}");

        // A stateless request's `Mcp-Session-Id` is not a run source any more: the call
        // runs in the caller's scope and the id is stored nowhere.
        let response = stateless_call(&server.url, &token, GET_PO, &json!({"number": "PO-1"}))
            .header("mcp-session-id", id.as_bytes())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "session {:.20}", id);
    }

    // Direct calls: `ToolCall::agent_run_id` and a principal bound to a bad run.
    let app = App {
        runtime: server.runtime.clone(),
    };
    for id in bad {
        for (who, run) in [(BUYER.principal(), id), (BUYER.in_run(id), "")] {
            let arguments = order(VENDOR, "1", "po-d");
            let out = app
                .call(&Arc::new(who), run, CREATE_PO_DRAFT, arguments)
                .await;
            assert_eq!(out.outcome, Outcome::Denied);
            for expected in [
                "a run id must be 1 to 128 visible ASCII characters".to_string(),
                format!("this one has {} bytes", id.len()),
            ] {
                assert!(out.text.contains(&expected), "{}", out.text);
            }
        }
    }

    // The agent loop's request.
    let agent = Agent::new(server.runtime.clone(), Policy::new()).unwrap();
    for id in bad {
        let draft = ModelAction::tool_call(CREATE_PO_DRAFT, order(VENDOR, "1", "po-a"));
        let outcome = agent_run_in(&agent, &BUYER.principal(), id, vec![draft]).await;
        let RunStatus::Aborted { reason } = &outcome.status else {
            panic!("expected aborted, got {:?}", outcome.status);
        };
        assert!(reason.contains("visible ASCII"), "{reason}");
        assert_eq!(outcome.steps, 0, "the model was never asked");
        assert!(outcome.run_id.starts_with("invalid-run-"));
    }

    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 0);
    let log = server.db().audit_log(None).await.unwrap();
    // 3 session-header reads + 6 direct refusals + 3 agent `denied` events.
    assert_eq!(log.len(), 12, "{log:#?}");
    for row in &log {
        assert!(row.agent_run_id.len() <= 40, "{:.60}", row.agent_run_id);
        assert!(row.message.as_deref().unwrap_or("").len() < 1000);
    }
    let scope = principal_run_id(&BUYER.principal());
    assert_eq!(log.iter().filter(|r| r.agent_run_id == scope).count(), 3);
    let denied = log.iter().filter(|r| r.outcome == "denied").count();
    assert_eq!(denied, 9);
    server.stop().await;
}
on_both_backends!(bad_run_ids_are_refused_from_every_source);

/// The agent loop refuses to start in someone else's run: aborted before the model is
/// asked, one `denied` event, nothing executed.
async fn the_agent_loop_refuses_another_persons_run(t: &TestDb) {
    let Session { app, run, .. } = buyers_run(t).await;
    let agent = Agent::new(app.runtime.clone(), Policy::new()).unwrap();
    let draft_and_finish = || {
        vec![
            ModelAction::tool_call(CREATE_PO_DRAFT, order(VENDOR, "1", "po-1")),
            ModelAction::answer("done"),
        ]
    };
    let other = SECOND_BUYER.principal();
    let outcome = agent_run_in(&agent, &other, &run, draft_and_finish()).await;
    let RunStatus::Aborted { reason } = &outcome.status else {
        panic!("expected aborted, got {:?}", outcome.status);
    };
    assert!(reason.contains(FOREIGN), "{reason}");
    assert_eq!(outcome.steps, 0);
    let events = app.audit(&run).await;
    let theirs: Vec<_> = events
        .iter()
        .filter(|r| r.user_id == SECOND_BUYER.user_id)
        .collect();
    assert_eq!(theirs.len(), 1);
    assert_eq!(
        (theirs[0].source.as_str(), theirs[0].outcome.as_str()),
        ("agent", "denied")
    );

    // The buyer's own agent run in it works, and a fresh run is bound to whoever starts it.
    let outcome = agent_run_in(&agent, &BUYER.principal(), &run, draft_and_finish()).await;
    assert_eq!(outcome.answer(), Some("done"));
    let mut model = ScriptedModel::new([ModelAction::answer("nothing to do")]);
    let fresh = agent.run(&SECOND_BUYER.shared(), &mut model, "check").await;
    let owner = app
        .db()
        .agent_run_owner(&fresh.run_id)
        .await
        .unwrap()
        .unwrap();
    assert!(owner.is(&other));
    assert_eq!(app.count(Table::PurchaseOrders).await, 1);
}
on_both_backends!(the_agent_loop_refuses_another_persons_run);

/// First use wins, also when several principals race for a new run, and the binding is
/// seen by a second process (its own pools, an empty cache).
async fn concurrent_first_use_has_one_owner(t: &TestDb) {
    let one = App::open(t.url()).await;
    let two = App::open(t.url()).await;
    let run = new_run();
    let everyone = [BUYER, SECOND_BUYER, BUYER_IN_JAKARTA].map(|role| role.principal());
    let mut tasks = Vec::new();
    for (i, who) in everyone.iter().chain(&everyone).cloned().enumerate() {
        let app = if i % 2 == 0 { one.clone() } else { two.clone() };
        let run = run.clone();
        tasks.push(tokio::spawn(async move {
            let arguments = order_in_own_branch(&who, "1", "po-1");
            let out = app
                .call(&Arc::new(who.clone()), &run, CREATE_PO_DRAFT, arguments)
                .await;
            (who, out)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (who, out) = task.await.unwrap();
        match out.outcome {
            Outcome::Ok | Outcome::Replayed => winners.push(who),
            Outcome::Denied => assert!(out.text.contains(FOREIGN), "{}", out.text),
            other => panic!("unexpected {other:?}: {}", out.text),
        }
    }
    let owner = two.db().agent_run_owner(&run).await.unwrap().unwrap();
    assert!(!winners.is_empty());
    assert!(
        winners.iter().all(|w| owner.is(w)),
        "{owner:?} vs {winners:?}"
    );
    assert_eq!(one.count(Table::PurchaseOrders).await, 1);
    // A third process sees the same owner.
    let three = App::open(t.url()).await;
    let loser = everyone.into_iter().find(|p| !owner.is(p)).unwrap();
    let out = three
        .call(
            &Arc::new(loser),
            &run,
            GET_PO,
            json!({"number": "PO-2026-0001"}),
        )
        .await;
    assert_eq!(out.outcome, Outcome::Denied);
}
on_both_backends!(concurrent_first_use_has_one_owner);
