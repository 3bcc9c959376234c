//! Issue 15, point 1: the idempotency scope of a client that names no run survives
//! reconnects, server restarts and several server processes. A plain MCP client (no `run`
//! claim, no `X-Agent-Run-Id`) resending a draft gets the replay, never a second document.
//!
//! Before this change the MCP session (or a digest of the token) was the run, so the same
//! token and `client_ref` gave PO-2026-0043 in one session and PO-2026-0044 in the next.

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::principal_run_id;
use erp_tools_tests::app::arguments::order;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::tools::{CREATE_PO_DRAFT, GET_PO};
use erp_tools_tests::app::{App, Table, count, runtime_rows};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, SESSIONS, STATELESS};
use erp_tools_tests::mcp::{
    assert_error_text, call_ok, call_tool, connect_in_process, draft_po, drafted, text_of,
};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, SECOND_BUYER};
use serde_json::json;

/// Two sessions, a stateless request and a refreshed token, one after the other on one
/// server: one document.
async fn resent_after_a_reconnect_replays(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let arguments = order(VENDOR, "24", "po-1");

    let first = server
        .client(&server.token(&BUYER.principal()), &SESSIONS, None)
        .await;
    let (number, replayed) = draft_po(&first, &arguments).await;
    assert!(!replayed);
    first.cancel().await.unwrap();

    // A new session (a dropped connection, a client restart), a stateless request, and a
    // new token for the same person (a refresh): all the same scope.
    for (token, revision) in [
        (server.token(&BUYER.principal()), SESSIONS),
        (server.token(&BUYER.principal()), STATELESS),
        (
            server.token_with(&BUYER.principal(), |c| c.iat -= 30),
            SESSIONS,
        ),
    ] {
        let client = server.client(&token, &revision, None).await;
        assert_eq!(draft_po(&client, &arguments).await, (number.clone(), true));
        client.cancel().await.unwrap();
    }
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 1);
    let rows = runtime_rows(server.db(), None).await;
    let runs: Vec<&str> = rows.iter().map(|r| r.agent_run_id.as_str()).collect();
    assert_eq!(runs, vec![principal_run_id(&BUYER.principal()); 4]);
    server.stop().await;
}
on_both_backends!(resent_after_a_reconnect_replays);

/// The server is stopped (sessions gone, pools closed) and started again on the same
/// database and address; the client opens a new session and resends.
async fn resent_after_a_server_restart_replays(t: &TestDb) {
    let arguments = order(VENDOR, "12", "po-restart");
    let server = HttpServer::process_on(t).await;
    let token = server.token(&BUYER.principal());
    let client = server.client(&token, &SESSIONS, None).await;
    let (number, replayed) = draft_po(&client, &arguments).await;
    assert!(!replayed);
    let old_session_url = server.url.clone();
    drop(client);
    let addr = server.stop().await;

    let server = HttpServer::restart_on(t, addr).await;
    assert_eq!(server.url, old_session_url);
    let client = server.client(&token, &SESSIONS, None).await;
    assert_eq!(draft_po(&client, &arguments).await, (number, true));
    client.cancel().await.unwrap();
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 1);
    server.stop().await;
}
on_both_backends!(resent_after_a_server_restart_replays);

/// Two server processes on one database (each with its own pools, sessions and run
/// cache), as behind a load balancer: drafted on the first, resent to the second.
async fn resent_to_a_second_server_process_replays(t: &TestDb) {
    let one = HttpServer::process_on(t).await;
    let two = HttpServer::process_on(t).await;
    let arguments = order(VENDOR, "5", "po-lb");
    let token = one.token(&BUYER.principal());

    let on_one = one.client(&token, &SESSIONS, None).await;
    let (number, replayed) = draft_po(&on_one, &arguments).await;
    assert!(!replayed);
    for revision in [SESSIONS, STATELESS] {
        let on_two = two.client(&token, &revision, None).await;
        assert_eq!(draft_po(&on_two, &arguments).await, (number.clone(), true));
        on_two.cancel().await.unwrap();
    }
    // And back: the first process replays what it drafted itself.
    assert_eq!(draft_po(&on_one, &arguments).await, (number, true));
    on_one.cancel().await.unwrap();
    assert_eq!(count(one.db(), Table::PurchaseOrders).await, 1);
    assert_eq!(count(two.db(), Table::PurchaseOrders).await, 1);
    one.stop().await;
    two.stop().await;
}
on_both_backends!(resent_to_a_second_server_process_replays);

/// The documented trade-off: a model that reuses a `client_ref` in a new conversation
/// gets the earlier draft back (same arguments, the text names it) or a mismatch that
/// tells it to pick a new `client_ref` (different arguments). Never a duplicate, and
/// another person using the same `client_ref` gets a draft of their own.
async fn a_new_conversation_reusing_a_client_ref(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let token = server.token(&BUYER.principal());
    let yesterday = server.client(&token, &SESSIONS, None).await;
    let (number, _) = draft_po(&yesterday, &order(VENDOR, "24", "po-1")).await;
    yesterday.cancel().await.unwrap();

    let today = server.client(&token, &SESSIONS, None).await;
    let same = call_tool(&today, CREATE_PO_DRAFT, order(VENDOR, "24", "po-1")).await;
    assert_eq!(drafted(&same), (number.clone(), true));
    let text = text_of(&same);
    assert!(
        text.contains(&format!(
            "Returned the existing draft purchase order {number}"
        )),
        "{text}"
    );

    let other = call_tool(&today, CREATE_PO_DRAFT, order(VENDOR, "99", "po-1")).await;
    for expected in [
        "client_ref po-1 was already used",
        "Use a new client_ref for a new draft",
        "No draft was created.",
    ] {
        assert_error_text(&other, expected);
    }
    today.cancel().await.unwrap();

    // The second buyer's po-1 is their own.
    let theirs = server
        .client(&server.token(&SECOND_BUYER.principal()), &SESSIONS, None)
        .await;
    let (their_number, replayed) = draft_po(&theirs, &order(VENDOR, "24", "po-1")).await;
    assert!(!replayed);
    assert_ne!(their_number, number);
    theirs.cancel().await.unwrap();
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 2);
    server.stop().await;
}
on_both_backends!(a_new_conversation_reusing_a_client_ref);

/// stdio and in-process connections (one fixed caller each) use the same scope: a stdio
/// server restarted by its client replays too.
async fn in_process_connections_share_the_principal_scope(t: &TestDb) {
    let runtime = App::new(&t.db).await.runtime;
    let arguments = order(VENDOR, "3", "po-stdio");
    let mut seen: Vec<(String, bool)> = Vec::new();
    for _ in 0..2 {
        // A new server handle each time, as a new stdio process would be.
        let server = ErpMcpServer::with_principal(runtime.clone(), BUYER.principal());
        let client = connect_in_process(server).await;
        seen.push(draft_po(&client, &arguments).await);
        client.cancel().await.unwrap();
    }
    assert!(
        !seen[0].1 && seen[1] == (seen[0].0.clone(), true),
        "{seen:?}"
    );
    assert_eq!(count(runtime.database(), Table::PurchaseOrders).await, 1);
}
on_both_backends!(in_process_connections_share_the_principal_scope);

/// The drafted document carries the scope as its run: the provenance survives too.
async fn documents_name_the_principal_scope(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let scope = principal_run_id(&BUYER.principal());
    let client = server
        .client(&server.token(&BUYER.principal()), &STATELESS, None)
        .await;
    let (number, _) = draft_po(&client, &order(VENDOR, "1", "po-prov")).await;
    let view = call_ok(&client, GET_PO, json!({ "number": number })).await;
    assert_eq!(view["drafted_by_agent_run"], scope);
    client.cancel().await.unwrap();
    let owner = server
        .db()
        .agent_run_owner(&scope)
        .await
        .unwrap()
        .expect("the scope is bound");
    assert!(owner.is(&BUYER.principal()));
    server.stop().await;
}
on_both_backends!(documents_name_the_principal_scope);
