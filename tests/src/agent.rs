//! The agent loop over the fixture application: the deployment's policy, an agent with a
//! manual clock, and the actions a scripted model proposes.

use erp_tools_core::Database;
use erp_tools_core::agent::{
    Agent, AgentEventKind, ManualClock, Message, Model, ModelAction, Policy, RunOutcome,
    RunRequest, ToolResultMessage,
};
use serde_json::json;

use crate::app::App;
use crate::app::arguments::{self, payment_request};
use crate::app::tools::{CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_VENDOR_SUMMARY};
use crate::principals::Role;

/// The deployment's policy: payment requests above 50 000 wait for a person.
pub fn policy() -> Policy {
    Policy::new().require_approval_above(CREATE_PAYMENT_REQUEST_DRAFT, "amount", "50000")
}

/// An agent over `app`'s runtime with `policy`, timed by `clock`.
pub fn agent(app: &App, policy: Policy, clock: &ManualClock) -> Agent {
    Agent::new(app.runtime.clone(), policy)
        .expect("the test policy names registered tools")
        .clock(clock.clone())
}

/// The fixture application on one database, with agents over it timed by one manual
/// clock: the setup of every agent scenario.
pub struct Deployment {
    /// The application the agents call.
    pub app: App,
    /// The clock every agent of the deployment is timed by.
    pub clock: ManualClock,
}

impl Deployment {
    /// The application on `db` (see [`App::new`]) and a new clock.
    pub async fn new(db: &Database) -> Deployment {
        Deployment {
            app: App::new(db).await,
            clock: ManualClock::new(),
        }
    }

    /// An agent with the deployment's [`policy`].
    pub fn agent(&self) -> Agent {
        self.agent_with(policy())
    }

    /// An agent with `policy`.
    pub fn agent_with(&self, policy: Policy) -> Agent {
        agent(&self.app, policy, &self.clock)
    }
}

/// `agent` run for `role` on `task`, the model's turns taken by `model`.
pub async fn run_as(agent: &Agent, role: Role, model: &mut dyn Model, task: &str) -> RunOutcome {
    agent.run(&role.shared(), model, task).await
}

/// [`run_as`] with a request of its own (a run id, an approval, ...).
pub async fn run_request(
    agent: &Agent,
    role: Role,
    model: &mut dyn Model,
    request: RunRequest,
) -> RunOutcome {
    agent.run_with(&role.shared(), model, request).await
}

/// How many of `out`'s loop events are of `kind`.
pub fn events_of(out: &RunOutcome, kind: AgentEventKind) -> usize {
    out.audit.iter().filter(|e| e.kind == kind).count()
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
    ModelAction::tool_call(CREATE_PO_DRAFT, arguments::order(vendor, qty, client_ref))
}

/// The tool results in a history.
pub fn results(history: &[Message]) -> Vec<&ToolResultMessage> {
    history.iter().filter_map(Message::as_tool_result).collect()
}
