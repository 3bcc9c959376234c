//! The brakes: step budget, repeated actions, timeouts.

use super::*;

#[test]
fn runs_are_send() {
    fn send<T: Send>(_: T) {}
    let (exec, policy) = setup(|_| ok(""));
    let agent = Agent::with_executor(exec, policy).unwrap();
    let p = principal(&[]);
    let mut model = ScriptedModel::new([]);
    send(agent.run(&p, &mut model, "task"));
    fn shared<T: Send + Sync>(_: &T) {}
    shared(&agent);
}

#[tokio::test]
async fn step_budget_with_distinct_actions() {
    let (exec, policy) = setup(|_| ok("vendor"));
    let agent = Agent::with_executor(exec.clone(), policy)
        .unwrap()
        .max_steps(4)
        .clock(ManualClock::new());
    let mut model = distinct_lookups();
    let out = run_reader(&agent, &mut model, "loop").await;
    assert_eq!(out.status, RunStatus::StepLimit);
    assert_eq!(out.steps, 4);
    assert_eq!(exec.calls.lock().unwrap().len(), 4);
    assert_eq!(model.calls(), 4);
}

#[tokio::test]
async fn repeated_action_with_reordered_keys_is_no_progress() {
    let (exec, policy) = setup(|_| ok("vendor"));
    let agent = test_agent(&exec, policy);
    let mut model = ScriptedModel::new([lookup("V-001"), lookup("V-001"), lookup("V-001")]);
    let out = run_reader(&agent, &mut model, "stuck").await;
    assert!(
        matches!(out.status, RunStatus::NoProgress { .. }),
        "{:?}",
        out.status
    );
    assert_eq!(exec.calls.lock().unwrap().len(), 2);

    // Decimal spelling and key order do not make a new action.
    let (exec, policy) = setup(|_| ok("created"));
    let agent = test_agent(&exec, policy);
    let mut model = ScriptedModel::new([
        ModelAction::tool_call(
            "finance_create_payment_request_draft",
            json!({"amount": "100", "client_ref": "a", "vendor_code": "V"}),
        ),
        ModelAction::tool_call(
            "finance_create_payment_request_draft",
            json!({"vendor_code": "V", "client_ref": "a", "amount": "100.00"}),
        ),
        ModelAction::tool_call(
            "finance_create_payment_request_draft",
            json!({"client_ref": "a", "vendor_code": "V", "amount": "100.0"}),
        ),
    ]);
    let out = agent
        .run(&principal(&["finance:draft"]), &mut model, "stuck")
        .await;
    let RunStatus::NoProgress { signature } = &out.status else {
        panic!("{:?}", out.status)
    };
    assert_eq!(
        signature,
        r#"finance_create_payment_request_draft{"amount":"100","client_ref":"a","vendor_code":"V"}"#
    );
    assert_eq!(exec.calls.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn timeout_counts_model_and_tool_time() {
    let clock = ManualClock::new();
    let tool_clock = clock.clone();
    let (exec, policy) = setup(move |_| {
        tool_clock.advance(Duration::from_secs(50));
        ok("slow vendor")
    });
    let agent = Agent::with_executor(exec.clone(), policy)
        .unwrap()
        .timeout(Duration::from_secs(120))
        .clock(clock);
    let mut model = distinct_lookups();
    let out = run_reader(&agent, &mut model, "slow").await;
    assert_eq!(out.status, RunStatus::Timeout);
    assert_eq!(exec.calls.lock().unwrap().len(), 3);
    assert_eq!(out.elapsed, Duration::from_secs(150));
}

#[tokio::test(flavor = "current_thread")]
async fn a_hanging_model_is_bounded_by_the_clock() {
    struct Hangs;
    impl Model for Hangs {
        fn next<'a>(
            &'a mut self,
            _: &'a [Message],
            _: &'a [ToolSpec],
        ) -> BoxFuture<'a, Result<ModelAction, ModelError>> {
            Box::pin(futures::future::pending())
        }
    }
    let clock = ManualClock::new();
    let (exec, policy) = setup(|_| ok(""));
    let agent = Agent::with_executor(exec, policy)
        .unwrap()
        .timeout(Duration::from_secs(30))
        .clock(clock.clone());
    let p = principal(&[]);
    let mut model = Hangs;
    let run = agent.run(&p, &mut model, "hang");
    let advance = async {
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(31));
    };
    let (out, ()) = tokio::join!(run, advance);
    assert_eq!(out.status, RunStatus::Timeout);
    assert_eq!(
        out.audit.last().map(|e| e.kind),
        Some(AgentEventKind::Stopped)
    );
}
