//! One policy, two layers: the rules the policy checks in code are the rules it writes
//! into the system prompt, so changing a limit in code changes the prompt.

use erp_tools_core::agent::{DEFAULT_SYSTEM_PROMPT, Message, ModelAction, Policy, ScriptedModel};
use erp_tools_tests::agent::{Deployment, run_as};
use erp_tools_tests::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_STOCK};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::principals::{BUYER, MANAGER, WAREHOUSE};

fn policy(limit: &str, threshold: &str) -> Policy {
    Policy::new()
        .limit(CREATE_PO_DRAFT, "lines[].qty", limit)
        .require_approval_above(CREATE_PAYMENT_REQUEST_DRAFT, "amount", threshold)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_changed_in_code_changes_the_prompt_text() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let registry = d.app.runtime.registry().clone();
    let manager = MANAGER.principal();
    let before = policy("500", "50000").prompt(&registry, &manager);
    let after = policy("800", "75000").prompt(&registry, &manager);
    assert!(
        before.contains(&format!(
            "{CREATE_PO_DRAFT}: the sum of lines[].qty over all items is at most 500."
        )),
        "{before}"
    );
    assert!(after.contains("at most 800."), "{after}");
    assert!(!after.contains("at most 500."), "{after}");
    assert!(
        before.contains(&format!(
            "{CREATE_PAYMENT_REQUEST_DRAFT}, when amount is above 50000"
        )),
        "{before}"
    );
    assert!(after.contains("when amount is above 75000"), "{after}");
    // The same limit is what the code enforces: an order over it is denied.
    let decision = policy("500", "50000").evaluate(
        &manager,
        &registry,
        CREATE_PO_DRAFT,
        &erp_tools_tests::app::arguments::order("V-00001", "600", "r-1"),
        &[],
    );
    assert!(
        matches!(decision, erp_tools_core::agent::Decision::Deny(_)),
        "{decision:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_names_what_the_caller_lacks_and_only_the_rules_of_its_tools() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let registry = d.app.runtime.registry().clone();
    let warehouse = policy("500", "50000").prompt(&registry, &WAREHOUSE.principal());
    assert!(
        warehouse.contains(&format!(
            "Not available to this user: {CREATE_PO_DRAFT} (needs the permission purchasing:draft)"
        )),
        "{warehouse}"
    );
    assert!(
        !warehouse.contains(&format!("Not available to this user: {GET_STOCK}")),
        "{warehouse}"
    );
    // Rules of tools the caller cannot use are not repeated as limits or approvals.
    assert!(!warehouse.contains("lines[].qty"), "{warehouse}");
    assert!(
        !warehouse.contains("Needs a person's approval"),
        "{warehouse}"
    );
    // The tools' own limits (declared with `limit = ..`) are there too.
    let buyer = Policy::new().prompt(&registry, &BUYER.principal());
    let manager = Policy::new().prompt(&registry, &MANAGER.principal());
    assert!(
        manager.contains(&format!(
            "Limit: {CREATE_PAYMENT_REQUEST_DRAFT}: amount is at most 10000000"
        )),
        "{manager}"
    );
    assert!(!buyer.contains("amount is at most"), "{buyer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_run_starts_with_the_prompt_and_the_policy_text() {
    let t = TestDb::sqlite().await;
    let d = Deployment::new(&t.db).await;
    let agent = d.agent_with(policy("500", "50000"));
    let mut model = ScriptedModel::new([ModelAction::answer("ok")]);
    let out = run_as(&agent, BUYER, &mut model, "Hello").await;
    let Message::System { content } = &out.history[0] else {
        panic!("a system message first");
    };
    assert!(content.starts_with(DEFAULT_SYSTEM_PROMPT));
    assert!(
        content.ends_with(
            &policy("500", "50000").prompt(d.app.runtime.registry(), &BUYER.principal())
        )
    );
    assert_eq!(content, &agent.system_message_for(&BUYER.principal()));
}
