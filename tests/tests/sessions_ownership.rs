//! Issue 15, point 3: an MCP session belongs to the principal (user and branch) that
//! opened it. Anyone else's GET, POST or DELETE on it is answered exactly as for an
//! unknown session (`404 Not Found: Session not found`) and cannot end it; the owner
//! keeps using it, also with a refreshed token.

mod runs_support;

use runs_support::*;
use serde_json::json;

/// Status and body of a response, to compare answers exactly.
async fn answer(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

fn list() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

async fn list_in(url: &str, token: &str, session: &str) -> (u16, String) {
    answer(
        in_session(post(url, token, &list()), session)
            .send()
            .await
            .unwrap(),
    )
    .await
}

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

async fn delete_in(url: &str, token: &str, session: &str) -> (u16, String) {
    let request = reqwest::Client::new().delete(url).bearer_auth(token);
    answer(in_session(request, session).send().await.unwrap()).await
}

async fn other_principals_get_404_and_cannot_end_a_session(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let url = server.url.as_str();
    let anis = token(&ani());
    let session = open_session(url, &anis).await;
    let unknown = "00000000-0000-0000-0000-000000000000";
    let not_found = (404, "Not Found: Session not found".to_string());

    // What rmcp says about a session that does not exist.
    assert_eq!(list_in(url, &anis, unknown).await, not_found);
    assert_eq!(get_in(url, &anis, unknown).await, not_found);
    assert_eq!(delete_in(url, &anis, unknown).await, not_found);

    // Someone else, with a valid token: the same answer to every method, the session
    // stays open.
    for other in [budi(), ani_in_jakarta()] {
        let theirs = token(&other);
        assert_eq!(list_in(url, &theirs, &session).await, not_found);
        assert_eq!(get_in(url, &theirs, &session).await, not_found);
        assert_eq!(delete_in(url, &theirs, &session).await, not_found);
        let draft = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                           "params": {"name": DRAFT, "arguments": draft_args("po-s", "1")}});
        let response = in_session(post(url, &theirs, &draft), &session)
            .send()
            .await
            .unwrap();
        assert_eq!(answer(response).await, not_found);
    }
    assert_eq!(purchase_order_count(server.db()).await, 0);
    assert!(runtime_rows(server.db()).await.is_empty(), "nothing ran");

    // The owner, with the token it opened the session with and with a refreshed one.
    let refreshed = token_with(&ani(), |c| c.iat -= 60);
    for tok in [&anis, &refreshed] {
        let (status, body) = list_in(url, tok, &session).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(DRAFT), "{body}");
    }
    assert_eq!(get_in(url, &anis, &session).await.0, 200);

    // Only the owner ends it; afterwards it is unknown to everyone.
    assert_eq!(delete_in(url, &refreshed, &session).await.0, 202);
    assert_eq!(list_in(url, &anis, &session).await, not_found);
    assert_eq!(delete_in(url, &anis, &session).await, not_found);
    server.stop().await;
}
on_both_backends!(other_principals_get_404_and_cannot_end_a_session);

/// A real client keeps its session while another principal's requests on it fail, and a
/// session id from one server process is unknown on another (404, as rmcp answers).
async fn a_session_is_unknown_to_a_second_process(t: TestDb) {
    let one = Server::start(t.runtime().await).await;
    let two = Server::start(t.runtime().await).await;
    let anis = token(&ani());
    let session = open_session(&one.url, &anis).await;
    assert_eq!(
        list_in(&two.url, &anis, &session).await,
        (404, "Not Found: Session not found".to_string())
    );
    assert_eq!(list_in(&one.url, &anis, &session).await.0, 200);
    one.stop().await;
    two.stop().await;
}
on_both_backends!(a_session_is_unknown_to_a_second_process);
