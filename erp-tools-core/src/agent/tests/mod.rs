//! Unit tests of the loop against a stand-in executor (the integration tests in the
//! `erp-tools-tests` crate run the same scenarios through the real tool runtime).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::executor::Executor;
use super::*;
use crate::audit::Outcome;
use crate::registry::ToolRegistry;
use crate::runtime::admit::Admitted;
use crate::runtime::prepare::Prepared;
use crate::runtime::run_id::BadRunId;
use crate::runtime::{CallError, CallOutcome, Preview, ToolCall};
use crate::schema::{Property, Schema, SchemaKind};
use crate::tool::context::{Principal, ToolContext};
use crate::tool::error::ToolError;
use crate::tool::handler::{Handler, HandlerFuture};
use crate::tool::handles::{DraftTx, ReadDb};
use crate::tool::input::InputAnswers;
use crate::tool::{Limit, ToolDef, ToolDefParts};

fn read_stub<'a>(_: &'a ToolContext, _: &'a ReadDb, _: Value) -> HandlerFuture<'a> {
    Box::pin(async { Ok(Value::Null.into()) })
}
fn draft_stub<'a>(_: &'a ToolContext, _: &'a mut DraftTx, _: Value) -> HandlerFuture<'a> {
    Box::pin(async { Ok(Value::Null.into()) })
}
fn prop(name: &'static str, kind: SchemaKind) -> Property {
    Property::new(name, Schema::new(kind))
}
fn payment_schema() -> Schema {
    Schema::object(vec![
        prop("vendor_code", SchemaKind::String(None)),
        prop("amount", SchemaKind::Decimal),
        prop("client_ref", SchemaKind::String(None)),
    ])
}
fn vendor_schema() -> Schema {
    Schema::object(vec![prop("vendor_code", SchemaKind::String(None))])
}
fn no_output() -> Value {
    json!({"type": "object"})
}

static PAYMENT: ToolDef = crate::__private_0_1_0::tool_def(ToolDefParts {
    name: "finance_create_payment_request_draft",
    fn_name: "create_payment_request_draft",
    module: "finance",
    scopes: &["finance:draft"],
    title: "Create payment request draft",
    description: "Create a DRAFT payment request.",
    example: None,
    destructive: false,
    limits: &[Limit {
        path: "amount",
        max: "1000000",
    }],
    args_type: "PaymentArgs",
    input_schema: payment_schema,
    output_schema: no_output,
    handler: Handler::Draft(draft_stub),
    page: None,
    task: crate::TaskSupport::Forbidden,
    rerun: true,
});

static VENDOR: ToolDef = crate::__private_0_1_0::tool_def(ToolDefParts {
    name: "purchasing_get_vendor_summary",
    fn_name: "get_vendor_summary",
    module: "purchasing",
    scopes: &["purchasing:read"],
    title: "Vendor summary",
    description: "Look up a vendor.",
    example: None,
    destructive: false,
    limits: &[],
    args_type: "VendorArgs",
    input_schema: vendor_schema,
    output_schema: no_output,
    handler: Handler::Read(read_stub),
    page: None,
    task: crate::TaskSupport::Forbidden,
    rerun: true,
});

type Responder = Box<dyn Fn(&ToolCall) -> Result<CallOutcome, CallError> + Send + Sync>;

struct FakeExec {
    registry: ToolRegistry,
    calls: Mutex<Vec<ToolCall>>,
    respond: Responder,
}

impl Executor for FakeExec {
    fn registry(&self) -> &ToolRegistry {
        &self.registry
    }
    fn check_run<'a>(
        &'a self,
        _: &'a Principal,
        chosen: Result<String, BadRunId>,
    ) -> BoxFuture<'a, Result<Option<ToolError>, CallError>> {
        // Every valid run is the caller's here; the real check is the runtime's.
        Box::pin(async move { Ok(chosen.err().map(|bad| bad.refusal())) })
    }
    fn check_run_starting<'a>(
        &'a self,
        _: &'a Principal,
        _: &'a str,
        _: &'a crate::Database,
        _: &'a crate::store::run_log::NewRun<'a>,
    ) -> BoxFuture<'a, Result<(Option<ToolError>, bool), CallError>> {
        // The run log's row is left to the loop.
        Box::pin(async { Ok((None, false)) })
    }
    fn finish<'a>(
        &'a self,
        _: &'a Arc<Principal>,
        prepared: Prepared<'a>,
        _: InputAnswers,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CallOutcome, CallError>> {
        let call = prepared.call.clone();
        let out = match prepared.admission {
            Ok(_) => (self.respond)(&call),
            Err(refused) => Ok(CallOutcome {
                outcome: refused.outcome(),
                structured: refused.error.to_json(),
                text: refused.error.to_string(),
                document: None,
                error: Some(refused.error),
            }),
        };
        self.calls.lock().unwrap().push(call);
        Box::pin(async move { out })
    }
    fn preview<'a>(
        &'a self,
        _: &'a Arc<Principal>,
        _: &'a str,
        _: &'a str,
        _: &'a Admitted<'a>,
    ) -> BoxFuture<'a, Option<Result<Preview, sqlx::Error>>> {
        // The stand-in's tools write nothing: there is nothing to preview.
        Box::pin(async { None })
    }
}

fn ok(text: &str) -> Result<CallOutcome, CallError> {
    Ok(CallOutcome {
        outcome: Outcome::Ok,
        structured: json!({}),
        text: text.into(),
        document: None,
        error: None,
    })
}

fn setup(
    respond: impl Fn(&ToolCall) -> Result<CallOutcome, CallError> + Send + Sync + 'static,
) -> (Arc<FakeExec>, Policy) {
    let registry = ToolRegistry::builder()
        .module("finance", "Payment request drafts. Cannot pay or post.")
        .module("purchasing", "Vendors. Cannot send orders.")
        .tools([&PAYMENT, &VENDOR])
        .build()
        .unwrap();
    let exec = Arc::new(FakeExec {
        registry,
        calls: Mutex::new(Vec::new()),
        respond: Box::new(respond),
    });
    let policy = Policy::new().require_approval_above(
        "finance_create_payment_request_draft",
        "amount",
        "50000",
    );
    (exec, policy)
}

fn principal(scopes: &[&str]) -> Arc<Principal> {
    Arc::new(
        Principal::builder("budi", 1, "SBY-01")
            .scopes(scopes.iter().copied())
            .build(),
    )
}

fn pay(amount: &str, client_ref: &str) -> ModelAction {
    ModelAction::tool_call(
        "finance_create_payment_request_draft",
        json!({"vendor_code": "V-001", "amount": amount, "client_ref": client_ref}),
    )
}

mod brakes;
mod failures;
mod policy;

/// The model proposes looking up `vendor_code`.
fn lookup(vendor_code: impl Into<String>) -> ModelAction {
    ModelAction::tool_call(
        "purchasing_get_vendor_summary",
        json!({"vendor_code": vendor_code.into()}),
    )
}

/// Runs `task` for a user who may read purchasing data.
async fn run_reader(agent: &Agent, model: &mut ScriptedModel, task: &str) -> RunOutcome {
    agent
        .run(&principal(&["purchasing:read"]), model, task)
        .await
}

/// An agent over `exec` with `policy` and a manual clock.
fn test_agent(exec: &Arc<FakeExec>, policy: Policy) -> Agent {
    Agent::with_executor(exec.clone(), policy)
        .unwrap()
        .clock(ManualClock::new())
}

/// A model that looks up a new vendor at every step (never repeating itself).
fn distinct_lookups() -> ScriptedModel {
    let mut n = 0;
    ScriptedModel::from_fn(move |_, _| {
        n += 1;
        lookup(format!("V-{n:03}"))
    })
}
