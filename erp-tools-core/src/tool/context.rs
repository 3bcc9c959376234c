//! Who is calling: [`Principal`] (from the authenticated token) and [`ToolContext`]
//! (the principal plus this one call).
//!
//! Nothing here comes from model output. A `Principal` is produced by token verification
//! ([`crate::auth`]) or by trusted server code through [`Principal::builder`]; a
//! `ToolContext` is built by the runtime for each call. Handlers receive `&ToolContext`
//! and read the branch, user and run from it, which is why argument types may not carry
//! `branch_id`, `user_id` and the like.

use crate::page::request::PageRequest;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::attachment::{Attachment, AttachmentSink};
use super::cancel::CancelFlag;
use super::input::InputAnswers;
use super::progress::{ProgressNote, ProgressSink};

use serde::{Deserialize, Serialize};

/// Longest accepted agent run id, from any source, in bytes (visible ASCII, so also in
/// characters).
#[cfg(any(feature = "runtime", feature = "auth"))]
pub(crate) const MAX_RUN_ID_LEN: usize = 128;

/// Whether `id` is usable as an agent run id: 1 to 128 visible ASCII
/// characters (no spaces, no control characters). Every source of a run id (a token's
/// `run` claim, the agent host's header or call, the agent loop's request) is checked
/// with it ([`ToolCall::valid_run_id`](crate::ToolCall::valid_run_id) is its public form).
#[cfg(any(feature = "runtime", feature = "auth"))]
pub(crate) fn valid_run_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_RUN_ID_LEN && id.bytes().all(|b| b.is_ascii_graphic())
}

/// The authenticated caller: a person (on whose behalf the agent acts), their branch and
/// the scopes their token grants, plus the agent run the token was issued for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    user_id: String,
    roles: Vec<String>,
    branch_id: i64,
    branch_code: String,
    scopes: BTreeSet<String>,
    agent_run_id: Option<String>,
    model: Option<String>,
    prompt_version: Option<String>,
}

impl Principal {
    /// Starts a principal for a verified user. Call this only with values taken from an
    /// authenticated source (a verified token, a session): never from model output.
    pub fn builder(
        user_id: impl Into<String>,
        branch_id: i64,
        branch_code: impl Into<String>,
    ) -> PrincipalBuilder {
        PrincipalBuilder(Principal {
            user_id: user_id.into(),
            roles: Vec::new(),
            branch_id,
            branch_code: branch_code.into(),
            scopes: BTreeSet::new(),
            agent_run_id: None,
            model: None,
            prompt_version: None,
        })
    }

    /// The same principal, with the model and prompt version of an agent run recorded
    /// where the token named none.
    #[cfg(feature = "agent")]
    pub(crate) fn with_run_model(&self, model: Option<&str>, prompt_version: Option<&str>) -> Self {
        let mut p = self.clone();
        if p.model.is_none() {
            p.model = model.map(str::to_string);
        }
        if p.prompt_version.is_none() {
            p.prompt_version = prompt_version.map(str::to_string);
        }
        p
    }

    /// The person on whose behalf the agent acts.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }
    /// The person's roles.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }
    /// Internal id of the caller's branch; every query a handler runs filters on it.
    pub fn branch_id(&self) -> i64 {
        self.branch_id
    }
    /// Business code of the caller's branch (e.g. `SBY-01`), for model-facing text.
    pub fn branch_code(&self) -> &str {
        &self.branch_code
    }
    /// Scopes granted by the token.
    pub fn scopes(&self) -> &BTreeSet<String> {
        &self.scopes
    }
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
    /// The agent run bound to the token, if the token names one.
    pub fn agent_run_id(&self) -> Option<&str> {
        self.agent_run_id.as_deref()
    }
    /// The model driving the run, if known.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
    /// The prompt version of the run, if known.
    pub fn prompt_version(&self) -> Option<&str> {
        self.prompt_version.as_deref()
    }
}

/// Builds a [`Principal`]; see [`Principal::builder`].
#[derive(Clone, Debug)]
pub struct PrincipalBuilder(Principal);

impl PrincipalBuilder {
    /// Adds a role.
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.0.roles.push(role.into());
        self
    }
    /// Grants scopes.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.0.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }
    /// Binds the principal to an agent run.
    pub fn agent_run_id(mut self, run: impl Into<String>) -> Self {
        self.0.agent_run_id = Some(run.into());
        self
    }
    /// Records the model driving the run.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.0.model = Some(model.into());
        self
    }
    /// Records the prompt version of the run.
    pub fn prompt_version(mut self, version: impl Into<String>) -> Self {
        self.0.prompt_version = Some(version.into());
        self
    }
    /// Finishes the principal.
    pub fn build(self) -> Principal {
        self.0
    }
}

/// Everything a handler may know about the call it serves. Built by the runtime from the
/// authenticated [`Principal`] and the call's ids; never from tool arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    principal: Arc<Principal>,
    agent_run_id: String,
    tool_call_id: String,
    tool_name: String,
    input: InputAnswers,
    progress: Option<ProgressSink>,
    cancel: Option<CancelFlag>,
    attachments: Option<AttachmentSink>,
    page: Option<PageRequest>,
}

impl ToolContext {
    /// Builds the context of one call. `agent_run_id` comes from the token or from the
    /// agent host (a request header it sets), `tool_call_id` from the protocol layer.
    pub fn new(
        principal: Arc<Principal>,
        agent_run_id: impl Into<String>,
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
    ) -> Self {
        ToolContext {
            principal,
            agent_run_id: agent_run_id.into(),
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            input: InputAnswers::default(),
            progress: None,
            cancel: None,
            attachments: None,
            page: None,
        }
    }

    /// Sends this call's progress reports to `sink` (the protocol layer does, for a
    /// caller that asked for progress).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn with_progress(mut self, sink: Option<ProgressSink>) -> Self {
        self.progress = sink;
        self
    }

    /// Reports how far the call is: `done` of `total` (if known), and what is being done
    /// now. An MCP client that asked for progress (its request carried a
    /// `progressToken`) receives it as `notifications/progress`; for any other caller it
    /// is only a debug event. `done` should increase with every report. A report never
    /// waits: when the client is not keeping up it is dropped.
    ///
    /// ```
    /// # use erp_tools_core::ToolContext;
    /// # fn f(ctx: &ToolContext) {
    /// let branches = ["SBY-01", "JKT-01", "MDN-01"];
    /// for (n, branch) in branches.iter().enumerate() {
    ///     ctx.progress(n as f64, Some(branches.len() as f64), &format!("counting stock in {branch}"));
    ///     // ...
    /// }
    /// # }
    /// ```
    pub fn progress(&self, done: f64, total: Option<f64>, message: &str) {
        tracing::debug!(tool = %self.tool_name, done, total, message, "progress");
        if let Some(sink) = &self.progress {
            sink.report(ProgressNote {
                done,
                total,
                message: (!message.is_empty()).then(|| message.to_string()),
            });
        }
    }

    /// Lets the protocol layer cancel this call (a call run as a task).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn with_cancel(mut self, flag: Option<CancelFlag>) -> Self {
        self.cancel = flag;
        self
    }

    /// Whether this call runs as an MCP task (long work by declaration).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn runs_as_task(&self) -> bool {
        self.cancel.is_some()
    }

    /// Whether the caller cancelled this call: a call run as an MCP task whose client
    /// sent `tasks/cancel` (on any replica). A long handler checks it between steps and
    /// stops early, returning an error; whatever it returns after a cancel is discarded
    /// (the task stays `cancelled`), but a draft's transaction still commits if the
    /// handler returns `Ok`, so a draft handler should check before its writes.
    ///
    /// ```
    /// # use erp_tools_core::{ToolContext, ToolError};
    /// # fn f(ctx: &ToolContext) -> Result<(), ToolError> {
    /// for branch in ["SBY-01", "JKT-01"] {
    ///     if ctx.is_cancelled() {
    ///         return Err(ToolError::rejected("the report was cancelled"));
    ///     }
    ///     // ... value the stock of `branch`
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelFlag::is_set)
    }

    /// Sends this call's attachments to `sink` (the MCP server does).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub(crate) fn with_attachments(mut self, sink: Option<AttachmentSink>) -> Self {
        self.attachments = sink;
        self
    }

    /// Attaches a document to this call's result: a CSV report, a printable PDF, a
    /// picture. An MCP client receives it beside the result's text (which stays the
    /// model's short summary): an image as `image` content, anything else as an embedded
    /// `resource`. Other callers (the agent loop) get the text and structured result only.
    /// Only a call that succeeds sends its attachments; a replayed draft sends none.
    ///
    /// Refused (a [`ToolError`](crate::ToolError) the handler may return with `?`) when the
    /// URI has no scheme, the media type is missing, or the call's attachments would hold
    /// more than [`MAX_ATTACHMENT_BYTES`](crate::MAX_ATTACHMENT_BYTES).
    ///
    /// ```
    /// # use erp_tools_core::{Attachment, ToolContext, ToolError};
    /// # fn f(ctx: &ToolContext) -> Result<(), ToolError> {
    /// let csv = "warehouse,item,qty,value\nWH-SBY,BRG-0042,12,540000.00\n";
    /// ctx.attach(Attachment::text("erp://reports/stock-valuation.csv", "text/csv", csv))?;
    /// # Ok(()) }
    /// ```
    pub fn attach(&self, attachment: Attachment) -> Result<(), crate::ToolError> {
        match &self.attachments {
            Some(sink) => sink.add(attachment),
            None => super::attachment::check(&attachment, 0),
        }
    }

    /// Delivers a person's answers (see [`ToolError::needs_input`](crate::ToolError::needs_input)).
    pub fn with_input(mut self, answers: InputAnswers) -> Self {
        self.input = answers;
        self
    }

    /// The person's answer to the question `key` a previous call of this tool asked with
    /// [`ToolError::needs_input`](crate::ToolError::needs_input), if this call carries one.
    /// It is always one of that question's choices.
    pub fn input(&self, key: &str) -> Option<&str> {
        self.input.get(key)
    }

    /// Sets the page a call of a page tool asked for (the runtime does, from the call's
    /// `cursor` and `page_size`).
    pub fn with_page(mut self, page: PageRequest) -> Self {
        self.page = Some(page);
        self
    }

    /// The page this call asked for, for a page tool's call.
    pub fn page(&self) -> Option<&PageRequest> {
        self.page.as_ref()
    }

    /// The authenticated caller.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }
    /// Shared handle to the authenticated caller.
    pub fn principal_arc(&self) -> &Arc<Principal> {
        &self.principal
    }
    /// The agent run this call belongs to; idempotency keys are scoped to it.
    pub fn agent_run_id(&self) -> &str {
        &self.agent_run_id
    }
    /// The id of this tool call.
    pub fn tool_call_id(&self) -> &str {
        &self.tool_call_id
    }
    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }
    /// The person on whose behalf the agent acts.
    pub fn user_id(&self) -> &str {
        self.principal.user_id()
    }
    /// The caller's roles.
    pub fn roles(&self) -> &[String] {
        self.principal.roles()
    }
    /// Internal id of the caller's branch: filter every query on it.
    pub fn branch_id(&self) -> i64 {
        self.principal.branch_id()
    }
    /// Business code of the caller's branch, for model-facing text.
    pub fn branch_code(&self) -> &str {
        self.principal.branch_code()
    }
    /// Scopes held by the caller.
    pub fn scopes(&self) -> &BTreeSet<String> {
        self.principal.scopes()
    }
    /// Whether the caller holds `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.principal.has_scope(scope)
    }
    /// The model driving the run, if known.
    pub fn model(&self) -> Option<&str> {
        self.principal.model()
    }
    /// The prompt version of the run, if known.
    pub fn prompt_version(&self) -> Option<&str> {
        self.principal.prompt_version()
    }
}
