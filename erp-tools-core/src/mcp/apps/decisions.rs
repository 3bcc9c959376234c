//! The approval card's tools: `review_show_approval` (the model opens the card with it)
//! and the app-only `review_approve_action` / `review_reject_action`.
//!
//! Visibility is not authorisation: a host keeps the decision tools from its model, but
//! the server cannot tell who made a call, so each decision is authorised here exactly as
//! the review console's: the caller's token must grant `review:approve`, the action must
//! be of the caller's branch and proposed for someone else (four eyes, checked by
//! [`ApprovalQueue::approve`]), the signature sent must be the one stored (the card
//! decides exactly what it showed), and a second decision gets "already decided".

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::approvals::Approvals;
use super::cards::APPROVAL_CARD;
use super::links::McpApps;
use crate::agent::{ApprovalQueue, ApprovalStatus, DecisionError, StoredApproval};
use crate::tool::context::Principal;

/// Opens the approval card for an action waiting for approval (model and app).
pub const SHOW_TOOL: &str = "review_show_approval";
/// Approves the action the card shows (app only).
pub const APPROVE_TOOL: &str = "review_approve_action";
/// Rejects the action the card shows, saying why (app only).
pub const REJECT_TOOL: &str = "review_reject_action";

/// The scope reading approvals needs (as in the review console).
const READ_SCOPE: &str = "review:read";
/// The scope deciding needs (as in the review console).
const APPROVE_SCOPE: &str = "review:approve";

impl McpApps {
    /// Serves the approval card and its tools over `queue` (the one the agent loop
    /// pauses in).
    pub fn approvals(mut self, queue: ApprovalQueue) -> Self {
        self.approvals = Some(Approvals {
            queue,
            on_approved: None,
        });
        self
    }

    /// What runs after an approval from the card, as the review console's
    /// `on_approved`: typically resuming the run; its text is shown on the card.
    /// Without [`approvals`](Self::approvals) it has no effect.
    pub fn on_approved<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(StoredApproval) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        if let Some(a) = self.approvals.as_mut() {
            a.on_approved = Some(Arc::new(move |s| Box::pin(hook(s))));
        }
        self
    }

    /// Names people by their user id on the approval card, as
    /// [`ReviewConfig::people`](crate::review::ReviewConfig::people) does in the console
    /// (give both the same function): "proposed for Dewi Lestari, user 7". Without it,
    /// people are shown by id.
    pub fn people(
        mut self,
        name_of: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.people = Some(super::links::People(Arc::new(name_of)));
        self
    }

    /// `user` as the card shows a person: the name and the id, or the id alone.
    fn person(&self, user: &str) -> String {
        match self.people.as_ref().and_then(|p| (p.0)(user)) {
            Some(name) => format!("{name}, user {user}"),
            None => user.to_string(),
        }
    }

    /// [`approval_view`] with the people named.
    fn view_of(&self, approval: &StoredApproval) -> Value {
        let mut view = approval_view(approval);
        view["proposed_for_person"] = json!(self.person(&approval.user_id));
        view["decided_by_person"] = json!(approval.decided_by.as_deref().map(|u| self.person(u)));
        view
    }

    /// Whether the approval card is served.
    pub fn serves_approvals(&self) -> bool {
        self.approvals.is_some()
    }

    /// Runs app tool `name` for `caller`; `None` when `name` is not an app tool.
    pub(crate) async fn call_app_tool(
        &self,
        name: &str,
        arguments: &Value,
        caller: &Principal,
    ) -> Option<CallToolResult> {
        let approvals = self.approvals.as_ref()?;
        Some(match name {
            SHOW_TOOL => show(self, approvals, arguments, caller).await,
            APPROVE_TOOL | REJECT_TOOL => decide(self, approvals, name, arguments, caller).await,
            _ => return None,
        })
    }
}

/// What the approval card shows of `approval`: the action's priced preview (what the
/// draft handler produced in a rolled-back run, which the approval is bound to) and how
/// it was obtained (`preview_kind`: `rolled_back`, `replay`, `hook` or `refused`; and
/// `preview_how`, as the review console says it) when it
/// has one, its arguments as they will run, why it waits, and where it stands. The card
/// renders whatever fields this returns.
pub fn approval_view(approval: &StoredApproval) -> Value {
    json!({
        "approval_id": approval.id,
        "tool": approval.tool,
        "arguments": approval.arguments,
        "preview": approval.preview.as_ref().map(|p| &p.value),
        "preview_kind": approval.preview.as_ref().map(|p| p.kind),
        "preview_how": approval.preview.as_ref().map(|p| p.kind.how()),
        "preview_text": approval.preview.as_ref().and_then(|p| p.text.as_deref()),
        "signature": approval.signature,
        "reason": approval.reason,
        "limits": approval.limits,
        "proposed_for": approval.user_id,
        "branch": approval.branch_code,
        "run_id": approval.run_id,
        "status": approval.status.as_str(),
        "created_at": approval.created_at,
        "expires_at": approval.expires_at,
        "decided_by": approval.decided_by,
        "decided_at": approval.decided_at,
        "note": approval.note,
        "resume_count": approval.resume_count,
        "resume_status": approval.resume_status,
    })
}

/// The app tools `principal` may see.
pub(crate) fn tools_for(apps: &McpApps, principal: &Principal) -> Vec<Tool> {
    if apps.approvals.is_none() || !principal.has_scope(READ_SCOPE) {
        return Vec::new();
    }
    let mut tools = vec![definition(
        SHOW_TOOL,
        "Show an action waiting for approval in the approval card (vendor, lines, amounts, \
         why it waits), where a reviewer approves or rejects it. Give approval_id, or leave \
         it out for the newest pending action of your branch. Read only: this tool decides \
         nothing.",
        json!({
            "type": "object",
            "properties": {
                "approval_id": { "type": ["integer", "null"], "description": "The approval's id, e.g. 3; null for the newest pending one" }
            },
            "additionalProperties": false
        }),
        &["model", "app"],
        true,
    )];
    if principal.has_scope(APPROVE_SCOPE) {
        let schema = |why: &str| {
            json!({
                "type": "object",
                "properties": {
                    "approval_id": { "type": "integer", "description": "The approval's id" },
                    "signature": { "type": "string", "description": "The action signature the card shows" },
                    "note": { "type": "string", "description": why }
                },
                "required": ["approval_id", "signature", "note"],
                "additionalProperties": false
            })
        };
        tools.push(definition(
            APPROVE_TOOL,
            "Approve the action the approval card shows (used by the card, not the model).",
            schema("An optional note for the record"),
            &["app"],
            false,
        ));
        tools.push(definition(
            REJECT_TOOL,
            "Reject the action the approval card shows, saying why (used by the card, not \
             the model).",
            schema("Why it is rejected (required)"),
            &["app"],
            false,
        ));
    }
    tools
}

fn definition(
    name: &'static str,
    description: &'static str,
    schema: Value,
    visibility: &[&str],
    read_only: bool,
) -> Tool {
    let input = schema.as_object().cloned().unwrap_or_default();
    let mut tool = Tool::new(name, description, input).with_annotations(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    let mut meta = MetaObject::default();
    meta.0.insert(
        "ui".into(),
        json!({ "resourceUri": APPROVAL_CARD, "visibility": visibility }),
    );
    meta.0
        .insert("ui/resourceUri".into(), Value::from(APPROVAL_CARD));
    tool.meta = Some(meta);
    tool
}

fn refused(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

fn answered(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

async fn show(
    apps: &McpApps,
    approvals: &Approvals,
    arguments: &Value,
    caller: &Principal,
) -> CallToolResult {
    if !caller.has_scope(READ_SCOPE) {
        return refused(format!(
            "Your token does not grant {READ_SCOPE}; nothing is shown. Ask for a token with \
             {READ_SCOPE}."
        ));
    }
    let found = match arguments.get("approval_id").and_then(Value::as_i64) {
        Some(id) => approvals
            .queue
            .get(id)
            .await
            .map(|a| a.filter(|a| a.branch_id == caller.branch_id())),
        None => approvals
            .queue
            .pending(caller.branch_id())
            .await
            .map(|all| all.into_iter().next()),
    };
    match found {
        Err(e) => {
            tracing::error!(error = %e, "approval card: the approval could not be read");
            refused("The approval could not be read; nothing was decided. Try again later.")
        }
        Ok(None) => refused(
            "No such approval waits in your branch. Leave approval_id out to see the newest \
             pending one.",
        ),
        Ok(Some(a)) => {
            let mut view = apps.view_of(&a);
            view["approvals_link"] = json!(apps.approvals_link());
            view["run_link"] = json!(apps.run_link(&a.run_id));
            let text = format!(
                "Approval {} of {} for {} in {} is {}: {}. A reviewer decides it in the card \
                 or in the review console; this tool decided nothing.",
                a.id,
                a.tool,
                apps.person(&a.user_id),
                a.branch_code,
                a.status.as_str(),
                a.reason
            );
            answered(text, view)
        }
    }
}

async fn decide(
    apps: &McpApps,
    approvals: &Approvals,
    tool: &str,
    arguments: &Value,
    reviewer: &Principal,
) -> CallToolResult {
    if !reviewer.has_scope(APPROVE_SCOPE) {
        return refused(format!(
            "Your token does not grant {APPROVE_SCOPE}; nothing was decided. Ask for a token \
             with {APPROVE_SCOPE}."
        ));
    }
    let (Some(id), Some(signature)) = (
        arguments.get("approval_id").and_then(Value::as_i64),
        arguments.get("signature").and_then(Value::as_str),
    ) else {
        return refused(
            "Give approval_id (an integer) and signature (the string the card shows); nothing \
             was decided.",
        );
    };
    let note = arguments.get("note").and_then(Value::as_str).unwrap_or("");
    // The decision binds to the action shown: another signature is another action.
    match approvals.queue.get(id).await {
        Ok(Some(stored))
            if stored.branch_id == reviewer.branch_id() && stored.signature != signature =>
        {
            return refused(format!(
                "Approval {id} is for another action than the one you were shown (its \
                 signature differs); nothing was decided. Open the approval again and decide \
                 what it shows."
            ));
        }
        Ok(_) => {}
        Err(e) => {
            tracing::error!(error = %e, "approval card: the approval could not be read");
            return refused("The approval could not be read; nothing was decided.");
        }
    }
    let result = if tool == REJECT_TOOL {
        approvals.queue.reject(id, reviewer, note).await
    } else {
        approvals.queue.approve(id, reviewer, Some(note)).await
    };
    let decided = match result {
        Ok(d) => d,
        Err(e) => {
            if let DecisionError::Store(detail) = &e {
                tracing::error!(error = %detail, "approval card: the decision failed");
                return refused("The decision could not be stored; nothing was decided.");
            }
            return refused(sentence(&e.to_string()));
        }
    };
    let mut text = format!(
        "Approval {} of {} was {} by you.",
        decided.id,
        decided.tool,
        decided.status.as_str()
    );
    if decided.status == ApprovalStatus::Approved
        && let Some(hook) = &approvals.on_approved
    {
        match hook(decided.clone()).await {
            Ok(more) => text.push_str(&format!(" {more}")),
            Err(e) => text.push_str(&format!(" Resuming the run failed: {e}")),
        }
    }
    answered(text, apps.view_of(&decided))
}

/// `text` with a capital first letter and a full stop.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}
