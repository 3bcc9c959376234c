//! The agent loop over the fixture application: the deployment's policy, an agent with a
//! manual clock, and the actions a scripted model proposes.

use erp_tools_core::agent::{Agent, ManualClock, Message, ModelAction, Policy, ToolResultMessage};
use serde_json::json;

use crate::app::App;
use crate::app::arguments::payment_request;
use crate::app::seed::ITEM;
use crate::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_VENDOR_SUMMARY};

/// The deployment's policy: payment requests above 50 000 wait for a person.
pub fn policy() -> Policy {
    Policy::new().require_approval_above(CREATE_PAYMENT_REQUEST_DRAFT, "amount", "50000")
}

/// An agent over `app`'s runtime with `policy`, timed by `clock`.
pub fn agent(app: &App, policy: Policy, clock: &ManualClock) -> Agent {
    Agent::new(app.runtime.clone(), policy).clock(clock.clone())
}

/// The model looks up `vendor`.
pub fn lookup(vendor: &str) -> ModelAction {
    ModelAction::tool_call(GET_VENDOR_SUMMARY, json!({ "vendor_code": vendor }))
}

/// The model asks to pay `vendor` `amount`.
pub fn pay(vendor: &str, amount: &str, client_ref: &str) -> ModelAction {
    ModelAction::tool_call(
        CREATE_PAYMENT_REQUEST_DRAFT,
        payment_request(vendor, amount, client_ref),
    )
}

/// The model orders `qty` BOX of the seeded item from `vendor`.
pub fn order(vendor: &str, qty: &str, client_ref: &str) -> ModelAction {
    ModelAction::tool_call(
        CREATE_PO_DRAFT,
        json!({ "vendor_code": vendor, "needed_by": "2026-12-01", "client_ref": client_ref,
                "lines": [{ "item_code": ITEM, "qty": qty, "uom": "BOX" }] }),
    )
}

/// The tool results in a history.
pub fn results(history: &[Message]) -> Vec<&ToolResultMessage> {
    history.iter().filter_map(Message::as_tool_result).collect()
}
