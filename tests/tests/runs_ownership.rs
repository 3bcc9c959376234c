//! Issue 15, point 2: runs belong to people. A run id from any source (token claim,
//! `X-Agent-Run-Id`, `ToolCall::agent_run_id`, the agent loop's request, the principal
//! scope) is bound to the principal (user and branch) that used it first; anyone else
//! presenting it is refused with a clear message and a `denied` audit row, and nothing
//! runs. Run ids from every source are 1 to 128 visible ASCII characters.

mod runs_support;

use std::sync::Arc;

use erp_tools_core::agent::{Agent, ModelAction, Policy, RunRequest, RunStatus, ScriptedModel};
use erp_tools_core::{Outcome, Principal, ToolCall, ToolRuntime, principal_run_id};
use runs_support::*;
use serde_json::{Value, json};

const FOREIGN: &str = "belongs to another person";

async fn call_as(
    runtime: &ToolRuntime,
    who: &Principal,
    run: &str,
    name: &str,
    args: Value,
) -> erp_tools_core::CallOutcome {
    runtime
        .call(
            &Arc::new(who.clone()),
            ToolCall {
                agent_run_id: run.to_string(),
                tool_call_id: "call-1".into(),
                name: name.into(),
                arguments: args,
            },
        )
        .await
        .expect("not a protocol error")
}

/// Budi names Ani's run in `X-Agent-Run-Id`, then with a token bound to it: refused and
/// audited both times, nothing drafted, Ani's `client_ref` untouched.
async fn another_user_cannot_use_a_run(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let run = new_run("ani");
    let ani_client = server.client(&token(&ani()), &SESSIONS, Some(&run)).await;
    let (number, _) = draft_on(&ani_client, &draft_args("po-1", "24")).await;

    // The header, and a token whose `run` claim names the run.
    for (tok, header) in [
        (token(&budi()), Some(run.as_str())),
        (token(&bound(&budi(), &run)), None),
    ] {
        let budi_client = server.client(&tok, &STATELESS, header).await;
        for (name, args) in [
            (DRAFT, draft_args("po-1", "24")),
            (DRAFT, draft_args("po-squat", "1")),
            (GET_PO, json!({ "number": number })),
        ] {
            let result = budi_client.call_tool(call(name, args)).await.unwrap();
            assert_eq!(result.is_error, Some(true));
            let text = text_of(&result);
            assert!(
                text.contains(&format!("Agent run {run} {FOREIGN}"))
                    && text.contains("Nothing ran")
                    && !text.contains("u-ani"),
                "{text}"
            );
        }
        budi_client.cancel().await.unwrap();
    }
    let rows = runtime_rows(server.db()).await;
    let budis: Vec<_> = rows.iter().filter(|r| r.user_id == "u-budi").collect();
    assert_eq!(budis.len(), 6, "one audit row per refused call");
    for r in &budis {
        assert_eq!(r.outcome, Outcome::Denied.as_str());
        assert_eq!(r.agent_run_id, run);
        assert!(
            r.message.as_deref().unwrap_or("").contains(FOREIGN),
            "{r:?}"
        );
        assert!(r.finished_at.is_some());
    }
    // Ani's run and client_refs are still hers: her retry replays, po-squat is free.
    assert_eq!(
        draft_on(&ani_client, &draft_args("po-1", "24")).await,
        (number, true)
    );
    assert!(!draft_on(&ani_client, &draft_args("po-squat", "1")).await.1);
    ani_client.cancel().await.unwrap();
    assert_eq!(purchase_order_count(server.db()).await, 2);
    server.stop().await;
}
on_both_backends!(another_user_cannot_use_a_run);

/// The same user id in another branch is another principal.
async fn the_same_user_in_another_branch_is_another_principal(t: TestDb) {
    let runtime = t.runtime().await;
    let run = new_run("branch");
    assert!(
        !call_as(&runtime, &ani(), &run, DRAFT, draft_args("po-1", "1"))
            .await
            .is_error()
    );
    let out = call_as(
        &runtime,
        &ani_in_jakarta(),
        &run,
        DRAFT,
        draft_args("po-1", "1"),
    )
    .await;
    assert_eq!(out.outcome, Outcome::Denied);
    assert!(out.text.contains(FOREIGN), "{}", out.text);
    assert_eq!(purchase_order_count(runtime.database()).await, 1);
}
on_both_backends!(the_same_user_in_another_branch_is_another_principal);

/// Nobody can name someone else's principal scope (`user-...`), not even before its
/// owner first uses it: the owner's scope can never be squatted.
async fn a_principal_scope_cannot_be_named_by_someone_else(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let anis_scope = principal_run_id(&ani());
    // Budi first, by header and by token claim, and with a made-up `user-` id.
    for (tok, header) in [
        (token(&budi()), Some(anis_scope.as_str())),
        (token(&bound(&budi(), &anis_scope)), None),
        (token(&budi()), Some("user-000000000000000000000000")),
    ] {
        let client = server.client(&tok, &STATELESS, header).await;
        let result = client
            .call_tool(call(DRAFT, draft_args("po-1", "1")))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains(FOREIGN), "{}", text_of(&result));
        client.cancel().await.unwrap();
    }
    assert_eq!(
        server.db().agent_run_owner(&anis_scope).await.unwrap(),
        None
    );
    // Ani's own scope still works, named or not.
    let client = server.client(&token(&ani()), &SESSIONS, None).await;
    assert!(!draft_on(&client, &draft_args("po-1", "1")).await.1);
    client.cancel().await.unwrap();
    let client = server
        .client(&token(&ani()), &SESSIONS, Some(&anis_scope))
        .await;
    assert!(draft_on(&client, &draft_args("po-1", "1")).await.1);
    client.cancel().await.unwrap();
    assert_eq!(purchase_order_count(server.db()).await, 1);
    let denied = runtime_rows(server.db())
        .await
        .into_iter()
        .filter(|r| r.outcome == "denied" && r.user_id == "u-budi")
        .count();
    assert_eq!(denied, 3);
    server.stop().await;
}
on_both_backends!(a_principal_scope_cannot_be_named_by_someone_else);

/// A 300 KB or non-ASCII run id is refused from every source, and never stored.
async fn bad_run_ids_are_refused_from_every_source(t: TestDb) {
    let server = Server::start(t.runtime().await).await;
    let huge = "r".repeat(300 * 1024);
    let bad: [&str; 3] = [&huge, "run-é", "run with spaces"];

    for id in bad {
        // The agent host's header: 400 before anything runs.
        let response = stateless_call(&server.url, &token(&ani()), DRAFT, &draft_args("po-h", "1"))
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
        let tok = token_with(&ani(), |c| c.agent_run_id = Some(id.to_string()));
        let response = stateless_call(&server.url, &tok, DRAFT, &draft_args("po-t", "1"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "claim {:.20}", id);
        let challenge = response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(challenge.contains("invalid_token"), "{challenge}");

        // A stateless request's `Mcp-Session-Id` is not a run source any more: the call
        // runs in the caller's scope and the id is stored nowhere.
        let response = stateless_call(
            &server.url,
            &token(&ani()),
            GET_PO,
            &json!({"number": "PO-1"}),
        )
        .header("mcp-session-id", id.as_bytes())
        .send()
        .await
        .unwrap();
        assert_eq!(response.status(), 200, "session {:.20}", id);
    }

    // Direct calls: `ToolCall::agent_run_id` and a principal bound to a bad run.
    let runtime = &server.runtime;
    for id in bad {
        for (who, run) in [(ani(), id), (bound(&ani(), id), "")] {
            let out = call_as(runtime, &who, run, DRAFT, draft_args("po-d", "1")).await;
            assert_eq!(out.outcome, Outcome::Denied);
            assert!(
                out.text
                    .contains("a run id must be 1 to 128 visible ASCII characters")
                    && out
                        .text
                        .contains(&format!("this one has {} bytes", id.len())),
                "{}",
                out.text
            );
        }
    }

    // The agent loop's request.
    let agent = Agent::new(runtime.clone(), Policy::new());
    for id in bad {
        let mut model =
            ScriptedModel::new([ModelAction::tool_call(DRAFT, draft_args("po-a", "1"))]);
        let outcome = agent
            .run_with(
                &Arc::new(ani()),
                &mut model,
                RunRequest::new("order").run_id(id),
            )
            .await;
        let RunStatus::Aborted { reason } = &outcome.status else {
            panic!("expected aborted, got {:?}", outcome.status);
        };
        assert!(reason.contains("visible ASCII"), "{reason}");
        assert_eq!(outcome.steps, 0, "the model was never asked");
        assert!(outcome.run_id.starts_with("invalid-run-"));
    }

    assert_eq!(purchase_order_count(runtime.database()).await, 0);
    let log = runtime.database().audit_log(None).await.unwrap();
    // 3 session-header reads + 6 direct refusals + 3 agent `denied` events.
    assert_eq!(log.len(), 12, "{log:#?}");
    for row in &log {
        assert!(row.agent_run_id.len() <= 40, "{:.60}", row.agent_run_id);
        assert!(row.message.as_deref().unwrap_or("").len() < 1000);
    }
    let scope = principal_run_id(&ani());
    assert_eq!(log.iter().filter(|r| r.agent_run_id == scope).count(), 3);
    let denied = log.iter().filter(|r| r.outcome == "denied").count();
    assert_eq!(denied, 9);
    server.stop().await;
}
on_both_backends!(bad_run_ids_are_refused_from_every_source);

/// The agent loop refuses to start in someone else's run: aborted before the model is
/// asked, one `denied` event, nothing executed.
async fn the_agent_loop_refuses_another_persons_run(t: TestDb) {
    let runtime = t.runtime().await;
    let run = new_run("agent");
    assert!(
        !call_as(&runtime, &ani(), &run, DRAFT, draft_args("po-1", "1"))
            .await
            .is_error()
    );
    let agent = Agent::new(runtime.clone(), Policy::new());
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(DRAFT, draft_args("po-1", "1")),
        ModelAction::answer("done"),
    ]);
    let outcome = agent
        .run_with(
            &Arc::new(budi()),
            &mut model,
            RunRequest::new("order").run_id(&run),
        )
        .await;
    let RunStatus::Aborted { reason } = &outcome.status else {
        panic!("expected aborted, got {:?}", outcome.status);
    };
    assert!(reason.contains(FOREIGN), "{reason}");
    assert_eq!(outcome.steps, 0);
    let events = runtime.database().audit_log(Some(&run)).await.unwrap();
    let budis: Vec<_> = events.iter().filter(|r| r.user_id == "u-budi").collect();
    assert_eq!(budis.len(), 1);
    assert_eq!(
        (budis[0].source.as_str(), budis[0].outcome.as_str()),
        ("agent", "denied")
    );

    // Ani's own agent run in it works, and a fresh run is bound to whoever starts it.
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(DRAFT, draft_args("po-1", "1")),
        ModelAction::answer("done"),
    ]);
    let outcome = agent
        .run_with(
            &Arc::new(ani()),
            &mut model,
            RunRequest::new("order").run_id(&run),
        )
        .await;
    assert_eq!(outcome.answer(), Some("done"));
    let mut model = ScriptedModel::new([ModelAction::answer("nothing to do")]);
    let fresh = agent.run(&Arc::new(budi()), &mut model, "check").await;
    let owner = runtime
        .database()
        .agent_run_owner(&fresh.run_id)
        .await
        .unwrap()
        .unwrap();
    assert!(owner.is(&budi()));
    assert_eq!(purchase_order_count(runtime.database()).await, 1);
}
on_both_backends!(the_agent_loop_refuses_another_persons_run);

/// First use wins, also when several principals race for a new run, and the binding is
/// seen by a second process (its own pools, an empty cache).
async fn concurrent_first_use_has_one_owner(t: TestDb) {
    let one = t.runtime().await;
    let two = t.runtime().await;
    let run = new_run("race");
    let people = [
        ani(),
        budi(),
        ani_in_jakarta(),
        ani(),
        budi(),
        ani_in_jakarta(),
    ];
    let mut tasks = Vec::new();
    for (i, who) in people.iter().cloned().enumerate() {
        let runtime = if i % 2 == 0 { one.clone() } else { two.clone() };
        let run = run.clone();
        tasks.push(tokio::spawn(async move {
            let out = call_as(&runtime, &who, &run, DRAFT, draft_args("po-1", "1")).await;
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
    let owner = two.database().agent_run_owner(&run).await.unwrap().unwrap();
    assert!(!winners.is_empty());
    assert!(
        winners.iter().all(|w| owner.is(w)),
        "{owner:?} vs {winners:?}"
    );
    assert_eq!(purchase_order_count(one.database()).await, 1);
    // A third process sees the same owner.
    let three = t.runtime().await;
    let loser = [ani(), budi(), ani_in_jakarta()]
        .into_iter()
        .find(|p| !owner.is(p))
        .unwrap();
    let out = call_as(
        &three,
        &loser,
        &run,
        GET_PO,
        json!({"number": "PO-2026-0001"}),
    )
    .await;
    assert_eq!(out.outcome, Outcome::Denied);
}
on_both_backends!(concurrent_first_use_has_one_owner);
