//! The diagnostic tools the conformance suite names, each an ordinary `#[erp_tool]`.
//!
//! Only tools whose shape `#[erp_tool]` allows are here: a read tool with a strict
//! argument schema, answering with structured content and a sentence, or with a tool
//! error, or with a question for a person (`ToolError::needs_input`), reporting its
//! progress on the way (`ToolContext::progress`), with arguments mirrored into headers
//! (`#[erp(header = "..")]`), with documents attached (`ToolContext::attach`: a picture,
//! embedded resources). A tool is named `{module}_{fn}`, so the suite's `test_*` names come
//! from the modules `test`, `test_input_required` (`test_input_required_result_*`) and
//! `test_missing` (`test_missing_capability`); the tasks scenarios' tools are in
//! `tasks.rs`. The suite's other tools (audio, log notifications, sampling, roots,
//! free-form JSON Schema) have no `#[erp_tool]` form by design; the check script lists
//! them with the reason.

use erp_tools_core::prelude::*;

/// The module's description, as the registry shows it.
pub(crate) const DESCRIPTION: &str = "Diagnostic tools of the MCP conformance suite. Cannot \
     read or change ERP data.";

/// The scope every diagnostic tool needs.
pub(crate) const SCOPE: &str = "diagnostics:read";

/// What a diagnostic tool answers.
#[tool_output]
pub(crate) struct Said {
    /// The sentence the suite expects.
    text: String,
}

impl Said {
    /// The sentence `text`.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Said { text: text.into() }
    }
}

impl ModelText for Said {
    fn model_text(&self) -> String {
        self.text.clone()
    }
}

fn said(text: impl Into<String>) -> Result<Said, ToolError> {
    Ok(Said { text: text.into() })
}

/// The answer to question `key` said as `answered` says it once given; until then the
/// `question`, with two `choices`.
pub(crate) fn asked(
    ctx: &ToolContext,
    (key, question): (&str, String),
    choices: [&str; 2],
    answered: impl FnOnce(&str) -> String,
) -> Result<Said, ToolError> {
    match ctx.input(key) {
        Some(answer) => said(answered(answer)),
        None => Err(ToolError::needs_input(key, question, choices)),
    }
}

/// "Please confirm", answered with one of `choices`: the answer once given, the question
/// until then.
fn confirmed(ctx: &ToolContext, choices: [&str; 2]) -> Result<Said, ToolError> {
    let question = ("confirm", "Please confirm".to_string());
    asked(ctx, question, choices, |ok| format!("Confirmed: {ok}"))
}

/// "What is your name?" (Alice or Bob), then a greeting.
pub(crate) fn greeted(ctx: &ToolContext) -> Result<Said, ToolError> {
    let question = ("user_name", "What is your name?".to_string());
    asked(ctx, question, ["Alice", "Bob"], |name| {
        format!("Hello, {name}!")
    })
}

/// Returns the suite's simple text response.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn simple_text(_ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    said("This is a simple text response for testing.")
}

/// Always fails with a tool error (`isError: true`), as the suite expects.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn error_handling(_ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    Err(ToolError::rejected(
        "This tool intentionally returns an error for testing",
    ))
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct ElicitationArgs {
    /// The message to show the person, e.g. "Please provide your information"
    message: String,
}

/// Asks the person a question (elicitation) and reports the answer.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn elicitation(
    ctx: &ToolContext,
    _db: &ReadDb,
    args: ElicitationArgs,
) -> Result<Said, ToolError> {
    let question = ("answer", args.message);
    asked(ctx, question, ["yes", "no"], |a| {
        format!("User response: {a}")
    })
}

/// One question (`input_required`), then the answer.
#[erp_tool(
    module = "test_input_required",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn result_elicitation(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    greeted(ctx)
}

/// One question whose `requestState` must come back unchanged.
#[erp_tool(
    module = "test_input_required",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn result_request_state(
    ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    confirmed(ctx, ["true", "false"])
}

/// Two questions in two rounds, the second asked once the first is answered (each form's
/// field named after its key, `name` then `color`, as the suite answers them).
#[erp_tool(
    module = "test_input_required",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn result_multi_round(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    let Some(name) = ctx.input("name") else {
        return Err(ToolError::needs_input(
            "name",
            "Step 1: What is your name?",
            ["Alice", "Bob"],
        ));
    };
    let Some(color) = ctx.input("color") else {
        return Err(ToolError::needs_input(
            "color",
            "Step 2: What is your favorite color?",
            ["blue", "green"],
        ));
    };
    said(format!("{name} likes {color}."))
}

/// One question whose sealed `requestState` must be refused once altered.
#[erp_tool(
    module = "test_input_required",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn result_tampered_state(
    ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    confirmed(ctx, ["true", "false"])
}

/// Reports its progress three times (0, 50 and 100 of 100), 50 ms apart, then answers.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn tool_with_progress(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    for done in [0.0, 50.0, 100.0] {
        ctx.progress(done, Some(100.0), &format!("{done} of 100"));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    said("Progress reported three times.")
}

/// Arguments of `test_custom_headers`: two of them are mirrored into headers.
#[derive(Debug, Deserialize, ToolArgs)]
pub(crate) struct CustomHeadersArgs {
    /// The region, also sent as the header `Mcp-Param-Region`.
    #[erp(header = "Region")]
    region: String,
    /// A priority, also sent as the header `Mcp-Param-Priority`.
    #[erp(header = "Priority")]
    priority: i64,
    /// A query, sent in the body only.
    query: String,
}

/// Echoes its arguments; two are mirrored into `Mcp-Param-*` headers (SEP-2243), which
/// the server checks against the body before the tool runs.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn custom_headers(
    _ctx: &ToolContext,
    _db: &ReadDb,
    args: CustomHeadersArgs,
) -> Result<Said, ToolError> {
    said(format!(
        "region {}, priority {}, query {}",
        args.region, args.priority, args.query
    ))
}

/// Asks a person (an `input_required` result over a stream), and never sends a request of
/// its own on the call's response stream.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn streaming_elicitation(
    ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    if ctx.input("confirm").is_none() {
        ctx.progress(0.0, Some(1.0), "asking");
    }
    confirmed(ctx, ["yes", "no"])
}

/// Answers without a log notification: a handler's logs go to `tracing` and the audit,
/// never to the client.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn logging_tool(_ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    said("Logged to the server's own log only.")
}

/// Needs a person's answer, so a request that does not declare the client's `elicitation`
/// capability is refused with `-32021` naming it, before anything is asked.
#[erp_tool(
    module = "test_missing",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn capability(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    confirmed(ctx, ["yes", "no"])
}

/// Needs a person's answer: asked with an elicitation request only when the request
/// declares the client's `elicitation` capability, refused with `-32021` otherwise (a
/// tool never asks the client's model, so a sampling-only client cannot be asked).
#[erp_tool(
    module = "test_input_required",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn result_capabilities(
    ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    confirmed(ctx, ["yes", "no"])
}

/// A 1x1 transparent PNG.
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// Answers with a text document attached (an embedded resource).
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn embedded_resource(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    ctx.attach(Attachment::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))?;
    said("One document attached.")
}

/// Answers with a picture and a JSON document attached.
#[erp_tool(
    module = "test",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn multiple_content_types(
    ctx: &ToolContext,
    _db: &ReadDb,
) -> Result<Said, ToolError> {
    ctx.attach(Attachment::bytes(
        "test://mixed-content-image",
        "image/png",
        PIXEL_PNG.to_vec(),
    ))?;
    ctx.attach(Attachment::text(
        "test://mixed-content-resource",
        "application/json",
        r#"{"test":"data","value":123}"#,
    ))?;
    said("Multiple content types test:")
}

/// Answers with a picture attached (image content).
#[erp_tool(
    module = "test_image",
    name = "test_image_content",
    tier = "read",
    scopes = ["diagnostics:read"]
)]
pub(crate) async fn image_content(ctx: &ToolContext, _db: &ReadDb) -> Result<Said, ToolError> {
    ctx.attach(Attachment::bytes(
        "test://image-content",
        "image/png",
        PIXEL_PNG.to_vec(),
    ))?;
    said("One picture attached.")
}
