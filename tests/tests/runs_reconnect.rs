//! Issue 15, point 1: the idempotency scope of a client that names no run survives
//! reconnects, server restarts and several server processes. A plain MCP client (no `run`
//! claim, no `X-Agent-Run-Id`) resending a draft gets the replay, never a second document.
//!
//! Before this change the MCP session (or a digest of the token) was the run, so the same
//! token and `client_ref` gave PO-2026-0043 in one session and PO-2026-0044 in the next.

mod runs_support;

use erp_tools_core::mcp::ErpMcpServer;
use erp_tools_core::{Database, principal_run_id};
use rmcp::ServiceExt;
use runs_support::*;
use serde_json::Value;

/// Two sessions, a stateless request and a refreshed token, one after the other on one
/// server: one document.
async fn resent_after_a_reconnect_replays(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let arguments = draft_args("po-1", "24");

    let first = server.client(&token(&ani()), &SESSIONS, None).await;
    let (number, replayed) = draft_on(&first, &arguments).await;
    assert!(!replayed);
    first.cancel().await.unwrap();

    // A new session (a dropped connection, a client restart), a stateless request, and a
    // new token for the same person (a refresh): all the same scope.
    for (tok, revision) in [
        (token(&ani()), SESSIONS),
        (token(&ani()), STATELESS),
        (token_with(&ani(), |c| c.iat -= 30), SESSIONS),
    ] {
        let client = server.client(&tok, &revision, None).await;
        assert_eq!(draft_on(&client, &arguments).await, (number.clone(), true));
        client.cancel().await.unwrap();
    }
    assert_eq!(purchase_order_count(server.db()).await, 1);
    let rows = runtime_rows(server.db()).await;
    let runs: Vec<&str> = rows.iter().map(|r| r.agent_run_id.as_str()).collect();
    assert_eq!(runs, vec![principal_run_id(&ani()); 4]);
    server.stop().await;
}
on_both_backends!(resent_after_a_reconnect_replays);

/// The server is stopped (sessions gone, pools closed) and started again on the same
/// database and address; the client opens a new session and resends.
async fn resent_after_a_server_restart_replays(t: TestDb) {
    let arguments = draft_args("po-restart", "12");
    let server = Server::start(t.runtime().await).await;
    let client = server.client(&token(&ani()), &SESSIONS, None).await;
    let (number, replayed) = draft_on(&client, &arguments).await;
    assert!(!replayed);
    let old_session_url = server.url.clone();
    drop(client);
    let addr = server.stop().await;

    let server = Server::start_at(t.runtime().await, addr).await;
    assert_eq!(server.url, old_session_url);
    let client = server.client(&token(&ani()), &SESSIONS, None).await;
    assert_eq!(draft_on(&client, &arguments).await, (number, true));
    client.cancel().await.unwrap();
    assert_eq!(purchase_order_count(server.db()).await, 1);
    server.stop().await;
}
on_both_backends!(resent_after_a_server_restart_replays);

/// Two server processes on one database (each with its own pools, sessions and run
/// cache), as behind a load balancer: drafted on the first, resent to the second.
async fn resent_to_a_second_server_process_replays(t: TestDb) {
    let one = Server::start(t.runtime().await).await;
    let two = Server::start(t.runtime().await).await;
    let arguments = draft_args("po-lb", "5");

    let on_one = one.client(&token(&ani()), &SESSIONS, None).await;
    let (number, replayed) = draft_on(&on_one, &arguments).await;
    assert!(!replayed);
    for revision in [SESSIONS, STATELESS] {
        let on_two = two.client(&token(&ani()), &revision, None).await;
        assert_eq!(draft_on(&on_two, &arguments).await, (number.clone(), true));
        on_two.cancel().await.unwrap();
    }
    // And back: the first process replays what it drafted itself.
    assert_eq!(draft_on(&on_one, &arguments).await, (number, true));
    on_one.cancel().await.unwrap();
    assert_eq!(purchase_order_count(one.db()).await, 1);
    assert_eq!(purchase_order_count(two.db()).await, 1);
    one.stop().await;
    two.stop().await;
}
on_both_backends!(resent_to_a_second_server_process_replays);

/// The documented trade-off: a model that reuses a `client_ref` in a new conversation
/// gets the earlier draft back (same arguments, the text names it) or a mismatch that
/// tells it to pick a new `client_ref` (different arguments). Never a duplicate, and
/// another person using the same `client_ref` gets a draft of their own.
async fn a_new_conversation_reusing_a_client_ref(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let yesterday = server.client(&token(&ani()), &SESSIONS, None).await;
    let (number, _) = draft_on(&yesterday, &draft_args("po-1", "24")).await;
    yesterday.cancel().await.unwrap();

    let today = server.client(&token(&ani()), &SESSIONS, None).await;
    let same = today
        .call_tool(call(DRAFT, draft_args("po-1", "24")))
        .await
        .unwrap();
    assert_eq!(drafted(&same), (number.clone(), true));
    let text = text_of(&same);
    assert!(
        text.contains(&format!(
            "Returned the existing draft purchase order {number}"
        )),
        "{text}"
    );

    let other = today
        .call_tool(call(DRAFT, draft_args("po-1", "99")))
        .await
        .unwrap();
    assert_eq!(other.is_error, Some(true));
    let text = text_of(&other);
    assert!(
        text.contains("client_ref po-1 was already used")
            && text.contains("Use a new client_ref for a new draft")
            && text.contains("No draft was created."),
        "{text}"
    );
    today.cancel().await.unwrap();

    // Budi's po-1 is his own.
    let budi_client = server.client(&token(&budi()), &SESSIONS, None).await;
    let (budis, replayed) = draft_on(&budi_client, &draft_args("po-1", "24")).await;
    assert!(!replayed);
    assert_ne!(budis, number);
    budi_client.cancel().await.unwrap();
    assert_eq!(purchase_order_count(server.db()).await, 2);
    server.stop().await;
}
on_both_backends!(a_new_conversation_reusing_a_client_ref);

/// stdio and in-process connections (one fixed caller each) use the same scope: a stdio
/// server restarted by its client replays too.
async fn in_process_connections_share_the_principal_scope(t: TestDb) {
    let runtime = t.runtime().await;
    let arguments = draft_args("po-stdio", "3");
    let mut seen: Vec<(String, bool)> = Vec::new();
    for _ in 0..2 {
        // A new server handle each time, as a new stdio process would be.
        let server = ErpMcpServer::with_principal(runtime.clone(), ani());
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        let client = ().serve(client_end).await.expect("in-process client");
        seen.push(draft_on(&client, &arguments).await);
        client.cancel().await.unwrap();
    }
    assert!(
        !seen[0].1 && seen[1] == (seen[0].0.clone(), true),
        "{seen:?}"
    );
    assert_eq!(purchase_order_count(runtime.database()).await, 1);
}
on_both_backends!(in_process_connections_share_the_principal_scope);

/// The drafted document carries the scope as its run: the provenance survives too.
async fn documents_name_the_principal_scope(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let client = server.client(&token(&ani()), &STATELESS, None).await;
    let (number, _) = draft_on(&client, &draft_args("po-prov", "1")).await;
    let view = client
        .call_tool(call(GET_PO, serde_json::json!({ "number": number })))
        .await
        .unwrap();
    let s: &Value = view.structured_content.as_ref().unwrap();
    assert_eq!(s["drafted_by_agent_run"], principal_run_id(&ani()));
    client.cancel().await.unwrap();
    let db: &Database = server.db();
    let owner = db
        .agent_run_owner(&principal_run_id(&ani()))
        .await
        .unwrap()
        .expect("the scope is bound");
    assert!(owner.is(&ani()));
    server.stop().await;
}
on_both_backends!(documents_name_the_principal_scope);
