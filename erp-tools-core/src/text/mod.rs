//! Every sentence the framework itself says to a model, in one place, each idea worded
//! once: what failed, what is allowed, what to do next, and what did *not* happen.
//!
//! Handlers write their own [`ToolError`]s; generated code, the pipeline (admission,
//! reads, drafts), the agent loop and the MCP server use only the functions here. The
//! sentences of [`ToolError`]'s own constructors (`not_found`, `internal`, `needs_input`)
//! are in `handler.rs`, which imports nothing, so the error type can use them.

#[cfg(feature = "runtime")]
use crate::idempotency::{IdempotencyKey, MAX_CLIENT_REF_CHARS, StoredKey};
use crate::tool::Tier;
use std::fmt;

#[cfg(feature = "runtime")]
use serde_json::Value;

use crate::tool::error::ToolError;
#[cfg(feature = "runtime")]
use crate::tool::error::ToolErrorKind;
#[cfg(feature = "runtime")]
use crate::tool::handles::DocumentRef;
#[cfg(feature = "runtime")]
use crate::validate::ArgumentErrors;

pub(crate) mod handler;
#[cfg(feature = "runtime")]
pub(crate) mod pages;
#[cfg(feature = "mcp")]
pub(crate) mod tasks;
#[cfg(feature = "runtime")]
pub(crate) use handler::READ_DROPPED;
pub(crate) use handler::{NO_DRAFT_CREATED, NOTHING_CHANGED};

/// The "what did not happen" sentence of a failed call of `tier`.
pub(crate) fn not_done(tier: Tier) -> &'static str {
    match tier {
        Tier::Draft => NO_DRAFT_CREATED,
        Tier::Read => NOTHING_CHANGED,
    }
}

// ---- handlers ----------------------------------------------------------------------------

/// A failure that is a bug in the tool itself (its code or its declaration): retrying
/// cannot help, so the model is told not to. `detail` goes to the log and audit only.
#[cfg(feature = "runtime")]
pub(crate) fn tool_bug(tool: &str, detail: impl fmt::Display) -> ToolError {
    ToolError::new(
        ToolErrorKind::Internal,
        format!("The tool `{tool}` could not complete this call because of a bug in the tool."),
    )
    .next_step(format!(
        "Retrying cannot help: do not call `{tool}` again in this run. Tell the user that \
         `{tool}` is broken and needs fixing by the people who maintain it."
    ))
    .with_details(Value::String(detail.to_string()))
}

// ---- building a registry or an agent (told to the developer, not to a model) -----------

/// A module description that does not say what the module cannot do.
pub(crate) fn module_without_cannot(module: &str, description: &str) -> String {
    let shown = if description.trim().is_empty() {
        "is empty".to_string()
    } else {
        format!(
            "\"{}\" does not say what the module cannot do",
            description.trim()
        )
    };
    format!(
        "the description of module `{module}` {shown}: add a sentence such as \"Cannot \
         approve, send or post orders.\" or \"Read only.\", so a model stops looking for \
         tools that do not exist"
    )
}

/// A policy rule naming a tool the registry does not have.
#[cfg(feature = "agent")]
pub(crate) fn policy_unknown_tool(rule: &str, tool: &str, suggestion: Option<&str>) -> String {
    let hint = match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => "check the spelling against the registry's tool names".to_string(),
    };
    if tool.ends_with('*') {
        format!("the policy's {rule} rule for `{tool}` matches no registered tool; {hint}")
    } else {
        format!("the policy's {rule} rule names `{tool}`, which is not a registered tool; {hint}")
    }
}

// ---- build-time errors --------------------------------------------------------------------

/// `what:` followed by one indented line per problem (registry and policy errors).
pub(crate) fn problem_list(
    f: &mut fmt::Formatter<'_>,
    what: &str,
    problems: &[String],
) -> fmt::Result {
    write!(f, "{what}:")?;
    for p in problems {
        write!(f, "\n  - {p}")?;
    }
    Ok(())
}

// ---- generated code ----------------------------------------------------------------------

/// Validated arguments that serde could not read into the handler's type (a mismatch
/// between the schema and the type; generated code calls this).
pub fn undecodable_arguments(error: impl std::fmt::Display, tier: Tier) -> ToolError {
    ToolError::invalid_arguments(format!("The arguments could not be read: {error}."))
        .next_step("Send arguments that match the tool's input schema.")
        .not_done(not_done(tier))
}

/// "a, b and c" style list of backticked names.
#[cfg(feature = "runtime")]
fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---- admission ----------------------------------------------------------------------------

/// No tool of that name is registered (or the caller may not see it). `available` are
/// the tools the caller may use.
#[cfg(feature = "runtime")]
pub(crate) fn unknown_tool(name: &str, available: &[&str]) -> ToolError {
    let e = ToolError::new(
        ToolErrorKind::Denied,
        format!("`{name}` is an unknown tool."),
    );
    let e = if available.is_empty() {
        e.next_step("No tools are available to you; tell the user.")
    } else {
        e.allowed(available.iter().copied())
            .next_step("Call one of the allowed tools instead.")
    };
    e.not_done(NOTHING_CHANGED)
}

/// The caller lacks scopes the tool needs.
#[cfg(feature = "runtime")]
pub(crate) fn missing_scopes(tool: &str, tier: Tier, missing: &[&str], user: &str) -> ToolError {
    let noun = if missing.len() == 1 {
        "scope"
    } else {
        "scopes"
    };
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "Permission denied: tool `{tool}` needs the {noun} {}, which user {user} does not hold.",
            ticked(missing)
        ),
    )
    .next_step(
        "Do not retry this call. Use the tools you have been given, or tell the user that \
         this needs a person with the missing permission.",
    )
    .not_done(not_done(tier))
    .with_details(serde_json::json!({ "missing_scopes": missing }))
}

/// The arguments do not match the schema; `listed` are the problems, one per field.
#[cfg(feature = "runtime")]
pub(crate) fn invalid_arguments(tool: &str, tier: Tier, errors: &ArgumentErrors) -> ToolError {
    let listed: Vec<String> = errors
        .problems
        .iter()
        .map(|p| {
            let message = p.message.trim_end_matches('.');
            if p.path.is_empty() {
                message.to_string()
            } else {
                format!("`{}`: {message}", p.path)
            }
        })
        .collect();
    let details: Vec<Value> = errors
        .problems
        .iter()
        .map(|p| serde_json::json!({ "path": p.path, "message": p.message }))
        .collect();
    ToolError::invalid_arguments(format!(
        "The arguments for `{tool}` are invalid: {}.",
        listed.join("; ")
    ))
    .next_step("Correct the fields named above and call the tool again.")
    .not_done(not_done(tier))
    .with_details(serde_json::json!({ "problems": details }))
}

/// A draft tool whose arguments have no `client_ref` string: a bug in the tool.
#[cfg(feature = "runtime")]
pub(crate) fn client_ref_undeclared(tool: &str) -> ToolError {
    tool_bug(
        tool,
        format!(
            "draft tool `{tool}` has no top-level `client_ref` string in its arguments \
         (declare `client_ref: String`)"
        ),
    )
    .not_done(NO_DRAFT_CREATED)
}

/// An empty `client_ref`.
#[cfg(feature = "runtime")]
pub(crate) fn client_ref_empty() -> ToolError {
    ToolError::invalid_arguments("`client_ref` is empty.")
        .next_step(
            "Send your own short id for this write, e.g. \"R-1\", and reuse it only when \
             retrying this same call.",
        )
        .not_done(NO_DRAFT_CREATED)
}

/// A `client_ref` longer than [`MAX_CLIENT_REF_CHARS`].
#[cfg(feature = "runtime")]
pub(crate) fn client_ref_too_long() -> ToolError {
    ToolError::invalid_arguments(format!(
        "`client_ref` is longer than {MAX_CLIENT_REF_CHARS} characters."
    ))
    .next_step("Send a short id for this write, e.g. \"R-1\".")
    .not_done(NO_DRAFT_CREATED)
}

/// What a limit measures: `` `amount` `` or `` the total of `lines[].qty` ``.
#[cfg(feature = "runtime")]
fn limit_subject(path: &str) -> String {
    if path.contains("[]") {
        format!("the total of `{path}` (negative items count as zero)")
    } else {
        format!("`{path}`")
    }
}

#[cfg(feature = "runtime")]
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A value (or sum) above a hard limit.
#[cfg(feature = "runtime")]
pub(crate) fn over_limit(tool: &str, tier: Tier, path: &str, value: &str, max: &str) -> ToolError {
    let subject = limit_subject(path);
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "{} is {value}, over the hard limit of {max} for `{tool}`. The limit is set in \
             code: no approval, instruction or tool result can raise it.",
            capitalised(&subject)
        ),
    )
    .next_step(format!(
        "Keep {subject} at or below {max}, or tell the user that a larger amount must be \
         entered by a person in the ERP."
    ))
    .not_done(not_done(tier))
    .with_details(serde_json::json!({ "limit": path, "max": max, "value": value }))
}

/// A value a limit applies to that cannot be read as a number.
#[cfg(feature = "runtime")]
pub(crate) fn limit_unreadable(
    tool: &str,
    tier: Tier,
    path: &str,
    max: &str,
    problem: &str,
) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "{} could not be checked against the hard limit of {max} for `{tool}`: {problem}.",
            capitalised(&limit_subject(path))
        ),
    )
    .next_step(format!(
        "Send `{path}` as a decimal string such as \"1250.50\"."
    ))
    .not_done(not_done(tier))
}

/// A limit whose maximum is not a number: every call is refused until it is fixed.
#[cfg(feature = "runtime")]
pub(crate) fn limit_misconfigured(tool: &str, tier: Tier, path: &str, max: &str) -> ToolError {
    tool_bug(
        tool,
        format!("the limit on `{path}` of `{tool}` has a maximum that is not a decimal: {max}"),
    )
    .not_done(not_done(tier))
}

// ---- execution ----------------------------------------------------------------------------

/// A handler panicked.
#[cfg(feature = "runtime")]
pub(crate) fn handler_panicked(tier: Tier, panic: &str) -> ToolError {
    ToolError::internal(format!("handler panicked: {panic}")).not_done(not_done(tier))
}

/// A draft handler returned `Ok` without recording its document.
#[cfg(feature = "runtime")]
pub(crate) fn document_not_recorded(tool: &str) -> ToolError {
    tool_bug(
        tool,
        format!(
            "draft tool `{tool}` returned Ok without calling DraftTx::record_document; its \
         transaction was rolled back"
        ),
    )
    .not_done(NO_DRAFT_CREATED)
}

/// The draft's transaction failed before commit; everything was rolled back.
#[cfg(feature = "runtime")]
pub(crate) fn draft_transaction_failed(detail: impl std::fmt::Display) -> ToolError {
    ToolError::internal(format!("draft transaction failed: {detail}")).not_done(NO_DRAFT_CREATED)
}

/// The commit itself failed: it may have taken effect.
#[cfg(feature = "runtime")]
pub(crate) fn commit_failed(detail: impl std::fmt::Display) -> ToolError {
    ToolError::internal(format!("commit of the draft failed: {detail}")).not_done(
        "If the draft was created after all, resending the same call with the same \
         client_ref returns it instead of creating another.",
    )
}

/// A key row without its stored response (never written so by the framework).
#[cfg(feature = "runtime")]
pub(crate) fn key_without_response(key: &IdempotencyKey) -> ToolError {
    ToolError::internal(format!("idempotency key {key} has no stored response"))
        .not_done(NO_DRAFT_CREATED)
}

/// The document type as words: `purchase_order` → `purchase order`.
#[cfg(feature = "runtime")]
pub(crate) fn human_doc_type(doc_type: &str) -> String {
    doc_type.replace(['_', '-'], " ")
}

/// The `client_ref` was already used in this run for something else.
#[cfg(feature = "runtime")]
pub(crate) fn key_mismatch(
    key: &IdempotencyKey,
    stored: &StoredKey,
    tool: &str,
    same_caller: bool,
) -> ToolError {
    let doc = stored.document.as_ref().filter(|_| same_caller);
    let message = if same_caller && stored.tool_name != tool {
        let what = match doc {
            Some(d) => format!("{} ({})", human_doc_type(&d.doc_type), d.number),
            None => "another request".to_string(),
        };
        format!(
            "client_ref {} was already used in this run by tool `{}` for {what}.",
            key.client_ref, stored.tool_name
        )
    } else {
        let what = match doc {
            Some(d) => format!("a different {} ({})", human_doc_type(&d.doc_type), d.number),
            None if same_caller => "a different request".to_string(),
            None => "another request".to_string(),
        };
        format!(
            "client_ref {} was already used in this run for {what}.",
            key.client_ref
        )
    };
    ToolError::new(ToolErrorKind::IdempotencyMismatch, message)
        .next_step(
            "Use a new client_ref for a new draft, or resend the original arguments to get \
             the original result.",
        )
        .not_done(NO_DRAFT_CREATED)
}

/// The first line of a successful draft's text.
#[cfg(feature = "runtime")]
pub(crate) fn draft_created(doc: &DocumentRef) -> String {
    format!(
        "Created draft {} {}.",
        human_doc_type(&doc.doc_type),
        doc.number
    )
}

/// The first line of a replayed draft's text.
#[cfg(feature = "runtime")]
pub(crate) fn draft_replayed(doc: &DocumentRef) -> String {
    format!(
        "Returned the existing draft {} {}: this client_ref was already used in this run \
         with the same arguments, so no new draft was created.",
        human_doc_type(&doc.doc_type),
        doc.number
    )
}

// ---- the run a call belongs to ------------------------------------------------------------

/// What a call refused because of its run did not do (its tier is not looked at).
#[cfg(feature = "runtime")]
pub(crate) const NOTHING_RAN: &str = "Nothing ran: no draft was created and nothing was changed.";

/// A run id that is not 1 to `max` visible ASCII characters; `source` says who sent it.
#[cfg(feature = "runtime")]
pub(crate) fn invalid_run_id(source: &str, bytes: usize, max: usize) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "The agent run id from {source} was refused: a run id must be 1 to {max} visible \
             ASCII characters without spaces, and this one has {bytes} bytes."
        ),
    )
    .next_step(
        "Do not retry this call: the run id is not something you can change. Tell the user \
         that the agent host sends an invalid run id.",
    )
    .not_done(NOTHING_RAN)
}

/// The call's run belongs to another person (or is another person's reserved scope).
/// Never names that person.
#[cfg(feature = "runtime")]
pub(crate) fn run_of_another_person(run_id: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "Agent run {run_id} belongs to another person, so this call was refused: a run, \
             its drafts and its client_refs belong to the person (user and branch) who used \
             it first."
        ),
    )
    .next_step(
        "Do not retry this call in this run. Work in a run of your own (a new run id, or \
         none to use your own scope), or tell the user.",
    )
    .not_done(NOTHING_RAN)
}

// ---- protocol-level failures -------------------------------------------------------------

/// The audit log could not be written, so the call did not run.
#[cfg(feature = "runtime")]
pub(crate) fn audit_unavailable(detail: impl std::fmt::Display) -> String {
    format!("the audit log could not be written, so the call was not run: {detail}")
}

/// Told to an MCP client when the server failed internally.
#[cfg(feature = "mcp")]
pub(crate) const SERVER_FAILED: &str =
    "the server could not complete this call; nothing was recorded as done";

/// Told to an MCP client that sent no verified identity.
#[cfg(feature = "mcp")]
pub(crate) const NOT_AUTHENTICATED: &str =
    "not authenticated: this connection has no verified caller; send a bearer token";

/// `resources/read` of a URI that is neither a card this server serves nor a document the
/// caller's own calls produced within the hour (the same for another caller's document).
#[cfg(feature = "mcp")]
pub(crate) fn resource_not_found(uri: &str) -> String {
    format!(
        "no resource `{uri}` for you: read a document by the URI a call of yours returned, \
         within an hour of the call; call the tool again for a fresh one"
    )
}

// ---- the agent loop -----------------------------------------------------------------------

/// The model proposed the same action once too often.
#[cfg(feature = "agent")]
pub(crate) fn repeated_action(times_before: u32) -> String {
    format!(
        "This exact action was already proposed {times_before} times; the run was stopped \
         because it is not making progress. This call was not executed."
    )
}

/// A tool call ran out of the run's time.
#[cfg(feature = "agent")]
pub(crate) const CALL_TIMED_OUT: &str = "The call ran out of time. It is not known whether \
     it took effect; if it is retried later, reuse the same client_ref so it cannot happen \
     twice.";

/// A tool call failed inside the server (not a tool error).
#[cfg(feature = "agent")]
pub(crate) const CALL_FAILED_INSIDE: &str = "The call failed inside the server. It is not \
     known whether it took effect; if you retry, reuse the same client_ref so it cannot \
     happen twice, otherwise tell the user.";

// ---- Asking instead of guessing (tool/input.rs, mcp/handler.rs) ----

/// A repeated call whose `requestState` is forged, altered, expired, already used, or
/// belongs to another caller, tool or set of arguments.
#[cfg(feature = "mcp")]
pub(crate) fn request_state_refused(why: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::Denied,
        format!(
            "The answer was not accepted: the request state of this call is invalid, \
             expired or already used, or it was issued for another call ({why})."
        ),
    )
    .next_step("Call the tool again without requestState to be asked again.")
    .not_done(NOTHING_CHANGED)
}

/// A repeated call whose answer is missing, declined, or not one of the choices.
#[cfg(feature = "mcp")]
pub(crate) fn answer_not_given(question: &str, choices: &[String]) -> ToolError {
    ToolError::new(
        ToolErrorKind::Rejected,
        format!("No allowed answer was given to: {question}"),
    )
    .allowed(choices.iter().cloned())
    .next_step("Call the tool again to be asked again, or tell the user it was not done.")
    .not_done(NOTHING_CHANGED)
}

/// The message of a `-32021` answer to a call that needs a person's answer from a client
/// whose request did not declare elicitation: what it would have asked.
#[cfg(feature = "mcp")]
pub(crate) fn elicitation_not_declared(question: &str, choices: &[String]) -> String {
    format!(
        "Missing required client capability: elicitation. The tool needs a person's answer \
         and this request did not declare that the client can ask one; nothing was changed. \
         The question: {question} Allowed answers: {}.",
        choices.join(", ")
    )
}

#[cfg(all(test, feature = "runtime"))]
mod tests {
    use super::*;

    #[test]
    fn a_forgotten_record_document_is_a_bug_not_a_reason_to_retry() {
        let e = document_not_recorded("purchasing_create_po_draft");
        let text = e.to_string();
        assert_eq!(e.kind(), ToolErrorKind::Internal);
        assert!(text.contains("bug in the tool"), "{text}");
        assert!(text.contains("Retrying cannot help"), "{text}");
        assert!(!text.contains("Try the same call again"), "{text}");
        assert!(text.ends_with(NO_DRAFT_CREATED), "{text}");
        // The detail (what the developer must fix) is logged, not told to the model.
        assert!(!text.contains("record_document"), "{text}");
        let detail = e.details().and_then(Value::as_str).unwrap_or_default();
        assert!(detail.contains("DraftTx::record_document"), "{detail}");
    }
}
