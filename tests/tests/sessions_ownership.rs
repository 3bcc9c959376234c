//! Issue 15, point 3: an MCP session belongs to the principal (user and branch) that
//! opened it. Anyone else's GET, POST or DELETE on it is answered exactly as for an
//! unknown session (`404 Not Found: Session not found`) and cannot end it; the owner
//! keeps using it, also with a refreshed token.

use erp_tools_tests::app::arguments::order;
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::tools::CREATE_PO_DRAFT;
use erp_tools_tests::app::{Table, count, runtime_rows};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, in_session, open_session, post};
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, BUYER_IN_JAKARTA, SECOND_BUYER};
use serde_json::json;

/// What rmcp answers for a session that does not exist.
fn not_found() -> (u16, String) {
    (404, "Not Found: Session not found".to_string())
}

/// Status and body of a response, to compare answers exactly.
async fn answer(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// `tools/list` in `session` with `token`.
async fn list_in(url: &str, token: &str, session: &str) -> (u16, String) {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let request = post(url, &list).bearer_auth(token);
    answer(in_session(request, session).send().await.unwrap()).await
}

/// The SSE stream of `session` with `token`.
async fn get_in(url: &str, token: &str, session: &str) -> (u16, String) {
    let request = reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .header("accept", "text/event-stream");
    let response = in_session(request, session).send().await.unwrap();
    if response.status() == 200 {
        // An open SSE stream: the request was accepted; do not wait for it to end.
        return (200, String::new());
    }
    answer(response).await
}

/// Ends `session` with `token`.
async fn delete_in(url: &str, token: &str, session: &str) -> (u16, String) {
    let request = reqwest::Client::new().delete(url).bearer_auth(token);
    answer(in_session(request, session).send().await.unwrap()).await
}

async fn other_principals_get_404_and_cannot_end_a_session(t: &TestDb) {
    let server = HttpServer::process_on(t).await;
    let url = server.url.as_str();
    let owners = server.token(&BUYER.principal());
    let session = open_session(url, &owners).await;
    let unknown = "00000000-0000-0000-0000-000000000000";

    // What rmcp says about a session that does not exist, and what it says to someone
    // else with a valid token on one that does: the same answer to every method, and the
    // session stays open.
    let theirs = [SECOND_BUYER, BUYER_IN_JAKARTA].map(|role| server.token(&role.principal()));
    let asked = [(&owners, unknown)]
        .into_iter()
        .chain(theirs.iter().map(|token| (token, session.as_str())));
    for (token, session) in asked {
        assert_eq!(list_in(url, token, session).await, not_found());
        assert_eq!(get_in(url, token, session).await, not_found());
        assert_eq!(delete_in(url, token, session).await, not_found());
    }
    for token in &theirs {
        let draft = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": CREATE_PO_DRAFT,
                                      "arguments": order(VENDOR, "1", "po-s")}});
        let request = post(url, &draft).bearer_auth(token);
        let response = in_session(request, &session).send().await.unwrap();
        assert_eq!(answer(response).await, not_found());
    }
    assert_eq!(count(server.db(), Table::PurchaseOrders).await, 0);
    assert!(
        runtime_rows(server.db(), None).await.is_empty(),
        "nothing ran"
    );

    // The owner, with the token it opened the session with and with a refreshed one.
    let refreshed = server.token_with(&BUYER.principal(), |c| c.iat -= 60);
    for token in [&owners, &refreshed] {
        let (status, body) = list_in(url, token, &session).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(CREATE_PO_DRAFT), "{body}");
    }
    assert_eq!(get_in(url, &owners, &session).await.0, 200);

    // Only the owner ends it; afterwards it is unknown to everyone.
    assert_eq!(delete_in(url, &refreshed, &session).await.0, 204);
    assert_eq!(list_in(url, &owners, &session).await, not_found());
    assert_eq!(delete_in(url, &owners, &session).await, not_found());
    server.stop().await;
}
on_both_backends!(other_principals_get_404_and_cannot_end_a_session);

/// A real client keeps its session while another principal's requests on it fail, and a
/// session id from one server process is unknown on another (404, as rmcp answers).
async fn a_session_is_unknown_to_a_second_process(t: &TestDb) {
    let one = HttpServer::process_on(t).await;
    let two = HttpServer::process_on(t).await;
    let token = one.token(&BUYER.principal());
    let session = open_session(&one.url, &token).await;
    assert_eq!(list_in(&two.url, &token, &session).await, not_found());
    assert_eq!(list_in(&one.url, &token, &session).await.0, 200);
    one.stop().await;
    two.stop().await;
}
on_both_backends!(a_session_is_unknown_to_a_second_process);
