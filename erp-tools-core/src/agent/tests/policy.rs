//! Denials, approvals bound to signatures, hard limits over approvals, policy order.

use super::*;

#[tokio::test]
async fn missing_scope_and_unknown_tool_are_told_to_the_model() {
    let (exec, policy) = setup(|_| ok(""));
    let agent = test_agent(&exec, policy);
    let mut model = ScriptedModel::new([
        pay("100", "r1"),
        ModelAction::tool_call("finance_post_payment", json!({})),
        ModelAction::answer("I could not do it."),
    ]);
    let out = run_reader(&agent, &mut model, "pay").await;
    assert_eq!(out.answer(), Some("I could not do it."));
    assert!(exec.calls.lock().unwrap().is_empty());
    let results: Vec<_> = out
        .history
        .iter()
        .filter_map(Message::as_tool_result)
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results
            .iter()
            .all(|r| r.status == ResultStatus::Denied && r.source == ResultSource::Policy)
    );
    assert!(
        results[0].data().contains("finance:draft"),
        "{}",
        results[0].data()
    );
    assert!(
        results[1]
            .data()
            .contains("Allowed values: purchasing_get_vendor_summary"),
        "{}",
        results[1].data()
    );
    assert_eq!(
        out.audit_summary()
            .iter()
            .filter(|s| s.starts_with("denied:"))
            .count(),
        2
    );
}

#[tokio::test]
async fn approval_binds_to_the_signature_and_survives_json() {
    let (exec, policy) = setup(|_| ok("PR-0001 created"));
    let sink = MemoryAuditSink::new();
    let agent = Agent::with_executor(exec.clone(), policy)
        .unwrap()
        .clock(ManualClock::new())
        .audit_sink(sink.clone());
    let p = principal(&["finance:draft"]);
    let mut model = ScriptedModel::new([pay("85000", "r1")]);
    let out = agent.run(&p, &mut model, "pay").await;
    let RunStatus::AwaitingApproval { action, signature } = &out.status else {
        panic!("{:?}", out.status)
    };
    assert_eq!(&action.signature, signature);
    assert!(exec.calls.lock().unwrap().is_empty());

    let text = serde_json::to_string(&out.paused().unwrap()).unwrap();
    let paused: PausedRun = serde_json::from_str(&text).unwrap();

    // An approval of another amount does not resume this run.
    let wrong = Approval::new(
        &out.run_id,
        action_signature(
            "finance_create_payment_request_draft",
            &json!({"vendor_code": "V-001", "amount": "8500", "client_ref": "r1"}),
        ),
        "siti",
    );
    let mut model = ScriptedModel::new([ModelAction::answer("done")]);
    let err = agent
        .resume(&p, &mut model, paused.clone(), wrong)
        .await
        .unwrap_err();
    assert!(matches!(err, ResumeError::ApprovalMismatch { .. }));

    // Another user cannot resume it.
    let other = principal(&["finance:draft"]);
    let other = Arc::new(Principal::builder("eko", other.branch_id(), "SBY-01").build());
    let err = agent
        .resume(&other, &mut model, paused.clone(), action.approve("siti"))
        .await
        .unwrap_err();
    assert!(matches!(err, ResumeError::WrongPrincipal { .. }));

    // Nor can a token bound to another run.
    let bound = Arc::new(
        Principal::builder("budi", 1, "SBY-01")
            .scopes(["finance:draft"])
            .agent_run_id("run-other")
            .build(),
    );
    let err = agent
        .resume(&bound, &mut model, paused.clone(), action.approve("siti"))
        .await
        .unwrap_err();
    assert!(matches!(err, ResumeError::WrongRun { .. }), "{err}");

    // The right approval runs exactly that action, then a changed amount needs a new one.
    let mut model = ScriptedModel::new([pay("500000", "r2")]);
    let out2 = agent
        .resume(&p, &mut model, paused, action.approve("siti"))
        .await
        .unwrap();
    let calls = exec.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments["amount"], "85000");
    assert_eq!(calls[0].tool_call_id, action.call_id);
    let RunStatus::AwaitingApproval {
        signature: sig2, ..
    } = &out2.status
    else {
        panic!("{:?}", out2.status)
    };
    assert_ne!(sig2, signature);
    assert_eq!(out2.run_id, out.run_id);
    let kinds: Vec<_> = sink.events().iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "awaiting_approval",
            "approved",
            "started",
            "awaiting_approval"
        ]
    );
}

#[tokio::test]
async fn hard_limit_beats_an_approval() {
    let (exec, policy) = setup(|_| ok(""));
    let agent = test_agent(&exec, policy);
    let args = json!({"vendor_code": "V-001", "amount": "5000000", "client_ref": "r1"});
    let approval = Approval::new(
        "run-x",
        action_signature("finance_create_payment_request_draft", &args),
        "siti",
    );
    let mut model = ScriptedModel::new([
        ModelAction::tool_call("finance_create_payment_request_draft", args),
        ModelAction::answer("over the limit"),
    ]);
    let out = agent
        .run_with(
            &principal(&["finance:draft"]),
            &mut model,
            RunRequest::new("pay").run_id("run-x").approval(approval),
        )
        .await;
    assert_eq!(out.answer(), Some("over the limit"));
    assert!(exec.calls.lock().unwrap().is_empty());
    let denied = out
        .audit
        .iter()
        .find(|e| e.kind == AgentEventKind::Denied)
        .unwrap();
    assert!(
        denied.detail.as_deref().unwrap().starts_with("over_limit"),
        "{denied:?}"
    );
}

#[test]
fn policy_order_and_paths() {
    let (exec, policy) = setup(|_| ok(""));
    let reg = &exec.registry;
    let p = principal(&["finance:draft"]);
    let args = |a: &str| json!({"vendor_code": "V", "amount": a, "client_ref": "r"});
    assert_eq!(
        policy.evaluate(
            &p,
            reg,
            "finance_create_payment_request_draft",
            &args("100"),
            &[]
        ),
        Decision::Allow { approved_by: None }
    );
    assert!(matches!(
        policy.evaluate(
            &p,
            reg,
            "finance_create_payment_request_draft",
            &args("60000"),
            &[]
        ),
        Decision::RequireApproval { .. }
    ));
    let sig = action_signature("finance_create_payment_request_draft", &args("60000"));
    let approved = [Approval::new("r", sig, "siti")];
    assert_eq!(
        policy.evaluate(
            &p,
            reg,
            "finance_create_payment_request_draft",
            &args("60000"),
            &approved
        ),
        Decision::Allow {
            approved_by: Some("siti".into())
        }
    );
    // Unreadable values fail closed: admission validates before any limit is read.
    let d = policy.evaluate(
        &p,
        reg,
        "finance_create_payment_request_draft",
        &json!({"amount": "1e9"}),
        &[],
    );
    assert!(
        matches!(
            d,
            Decision::Deny(Denial {
                reason: DenialReason::InvalidArguments,
                ..
            })
        ),
        "{d:?}"
    );
    // Policy limits add to the tool's own.
    let strict = policy.clone().limit("finance_*", "amount", "10000");
    let d = strict.evaluate(
        &p,
        reg,
        "finance_create_payment_request_draft",
        &args("20000"),
        &[],
    );
    assert!(
        matches!(
            d,
            Decision::Deny(Denial {
                reason: DenialReason::OverLimit,
                ..
            })
        ),
        "{d:?}"
    );
    // Scope is checked before limits.
    let d = policy.evaluate(
        &principal(&[]),
        reg,
        "finance_create_payment_request_draft",
        &args("9999999"),
        &[],
    );
    assert!(
        matches!(
            d,
            Decision::Deny(Denial {
                reason: DenialReason::MissingScope,
                ..
            })
        ),
        "{d:?}"
    );
    assert_eq!(
        value_at(&json!({"lines": [{"qty": "1"}, {"qty": 2}]}), "lines[].qty").unwrap(),
        Some(3.into())
    );
    assert!(value_at(&json!({"lines": {"qty": "1"}}), "lines[].qty").is_err());
}

#[test]
fn a_policy_naming_an_unknown_tool_fails_when_the_agent_is_built() {
    let (exec, _) = setup(|_| ok(""));
    let policy = Policy::new()
        .limit("finance_create_paymnet_request_draft", "amount", "1000000")
        .require_approval_always("sales_*");
    let err = Agent::with_executor(exec.clone(), policy).unwrap_err();
    assert_eq!(
        err.problems(),
        [
            "the policy's approval rule for `sales_*` matches no registered tool; check the \
             spelling against the registry's tool names",
            "the policy's limit rule names `finance_create_paymnet_request_draft`, which is not \
             a registered tool; did you mean `finance_create_payment_request_draft`?",
        ]
    );
    let fine = Policy::new()
        .limit("finance_*", "amount", "1000000")
        .require_approval_always("purchasing_get_vendor_summary");
    assert!(Agent::with_executor(exec, fine).is_ok());
}
