//! [`ErpMcpServer`]: the `rmcp` server handler over a [`ToolRuntime`].

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    ErrorCode, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::apps::{self, McpApps};
use super::asking::{Asking, MAX_ELICITATION_ROUNDS};
pub use super::caller::{AGENT_RUN_HEADER, Authenticated};
use super::documents;
use super::input::{self, StateKeeper};
pub use super::listing::instructions;
use super::listing::{mcp_tool, server_config, surface_meta};
use super::progress::{Forwarder, finish_progress};
pub use super::result::{ERROR_META_KEY, call_tool_result};
use super::tasks;
use super::trace::{call_trace, request_id_string};
use crate::audit::Outcome;
use crate::registry::{TaskSupport, ToolRegistry};
use crate::runtime::{CallError, ToolCall, ToolRuntime};
use crate::telemetry::{self, EdgeSpan};
use crate::text;
use crate::tool::attachment::AttachmentSink;
use crate::tool::context::Principal;
use crate::tool::input::InputAnswers;

#[derive(Clone, Debug)]
enum Identity {
    /// Read the caller from the HTTP request (streamable HTTP).
    FromRequest,
    /// One caller for the whole connection (stdio, in-process).
    Fixed(Authenticated),
}

struct Shared {
    runtime: ToolRuntime,
    /// One `rmcp` tool per registered tool, index-aligned with `ToolRegistry::tools()`.
    tools: Vec<Tool>,
    info: ServerConfig,
}

/// The MCP server: lists the tools the caller's scopes allow and runs calls through
/// [`ToolRuntime::call`].
///
/// Identity never comes from the client's messages:
/// - over streamable HTTP ([`ErpMcpServer::new`], used by [`router`](super::router)) it is
///   the [`Authenticated`] caller that the bearer-token middleware put into the request;
/// - over stdio or in-process ([`ErpMcpServer::with_principal`]) it is the principal given
///   at start-up (from a verified token).
///
/// Without an identity the tool list is empty and every call is refused.
///
/// The agent run a call belongs to (idempotency keys are scoped to it) is, in order: the
/// token's `run` claim; the [`AGENT_RUN_HEADER`] request header; otherwise the caller's
/// own scope ([`principal_run_id`](crate::principal_run_id): a digest of the user and
/// the branch). Neither the MCP session nor the connection is part of it, so a client
/// that names no run and resends a call after a reconnect, a server restart or a switch
/// to another server process gets the replay, not a second draft. The rule itself, and
/// the check that the run belongs to the caller, are in [`ToolRuntime::call`]. The tool
/// call id is the JSON-RPC request id.
#[derive(Clone)]
pub struct ErpMcpServer {
    shared: Arc<Shared>,
    identity: Identity,
    list_ttl_ms: u64,
    states: Arc<StateKeeper>,
    /// MCP Apps: the cards and the approval card's queue ([`ErpMcpServer::with_apps`]).
    apps: Arc<McpApps>,
    /// What `get_info` answers (built when the apps are set, not at every request).
    declared: Arc<ServerConfig>,
    /// How long a task is kept ([`ErpMcpServer::with_task_ttl`]), and the tasks this
    /// replica runs (an [`HttpConfig`](super::HttpConfig)'s board, which drains it).
    pub(super) tasks: tasks::TaskPlace,
}

/// How long a question's `requestState` stays valid by default.
pub const DEFAULT_INPUT_TTL: Duration = Duration::from_secs(600);

/// How long the server waits for a person's answer to an elicitation request.
const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

impl std::fmt::Debug for ErpMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErpMcpServer")
            .field("tools", &self.shared.tools.len())
            .field("identity", &self.identity)
            .finish()
    }
}

impl ErpMcpServer {
    /// A server whose caller is read from each HTTP request (see [`Authenticated`]).
    /// Builds the MCP tool definitions once.
    pub fn new(runtime: ToolRuntime) -> Self {
        let registry = runtime.registry().clone();
        let tools = registry.tools().iter().map(mcp_tool).collect();
        let info = server_config(&registry);
        let declared = apps::declared(&info, &McpApps::default(), &registry);
        ErpMcpServer {
            shared: Arc::new(Shared {
                runtime,
                tools,
                info,
            }),
            identity: Identity::FromRequest,
            list_ttl_ms: 0,
            states: StateKeeper::random(DEFAULT_INPUT_TTL),
            apps: Arc::default(),
            declared,
            tasks: tasks::TaskPlace::default(),
        }
    }

    /// Seals the `requestState` of questions ([`ToolError::needs_input`](crate::ToolError::needs_input))
    /// with `key` (32 bytes or more, e.g. from your secret store), valid for `ttl`. Give
    /// every replica the same key so a repeated call may reach any of them. Without this,
    /// states are sealed with a random key of the process. Either way a state is bound to
    /// the caller (user, branch, run), the tool and the arguments' hash, and is accepted
    /// once: the states used are recorded in the database (`erp_used_request_states`, a
    /// nonce each, deleted once expired), so a state used on one replica is refused on
    /// every other.
    pub fn with_request_state_key(
        mut self,
        key: impl AsRef<[u8]>,
        ttl: Duration,
    ) -> Result<Self, rmcp::model::RequestStateError> {
        self.states = Arc::new(StateKeeper::new(key.as_ref(), ttl)?);
        Ok(self)
    }

    /// Seals and opens `requestState`s with `states` (an [`HttpConfig`](super::HttpConfig)'s).
    #[cfg(feature = "mcp-http")]
    pub(super) fn with_state_keeper(mut self, states: Arc<StateKeeper>) -> Self {
        self.states = states;
        self
    }

    /// A server for one verified caller (stdio, in-process clients). `principal` must come
    /// from a verified token ([`crate::auth::verify`]) or trusted configuration.
    pub fn with_principal(runtime: ToolRuntime, principal: Principal) -> Self {
        Self::new(runtime).with_identity(Authenticated::new(principal))
    }

    /// Serves `caller` for the whole connection instead of reading callers from requests.
    pub fn with_identity(mut self, caller: Authenticated) -> Self {
        self.identity = Identity::Fixed(caller);
        self
    }

    /// How long clients may cache a `tools/list` result (`ttlMs`, always with
    /// `cacheScope: "private"` because the list depends on the caller). Default: 0.
    pub fn with_list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// Serves MCP Apps cards ([`apps`](super::apps)) to hosts that declare the extension.
    pub fn with_apps(mut self, apps: McpApps) -> Self {
        self.declared = apps::declared(&self.shared.info, &apps, self.registry());
        self.apps = Arc::new(apps);
        self
    }

    /// How long a task (a call of a tool declared with
    /// [`ToolRegistryBuilder::task`](crate::ToolRegistryBuilder::task)) is kept from its
    /// creation, whatever its status: `tasks/get` answers it until then, and it is
    /// deleted after. Default: [`DEFAULT_TASK_TTL`](super::DEFAULT_TASK_TTL), one hour.
    pub fn with_task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// Takes over the tasks of replicas that stopped (lease expired, or released by a
    /// drain): each runs again here as its owner, or fails with the reason when its tool
    /// may not run again; returns how many were taken over. [`router`](super::router)
    /// does this on a schedule, as does the next `tasks/get`; over stdio, call it yourself.
    pub async fn take_over_tasks(&self) -> Result<usize, crate::StoreError> {
        tasks::sweep(self.runtime(), &self.tasks.board).await
    }

    /// A handle for a new connection: shares the runtime and the tool definitions.
    pub fn new_connection(&self) -> Self {
        self.clone()
    }

    /// The runtime calls go through.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.shared.runtime
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        self.shared.runtime.registry()
    }

    /// The tools `principal` may see, as `tools/list` returns them (stable, by name).
    pub fn tools_for(&self, principal: &Principal) -> Vec<Tool> {
        self.registry()
            .tools()
            .iter()
            .zip(&self.shared.tools)
            .filter(|(t, _)| t.allowed_for(principal))
            .map(|(_, tool)| tool.clone())
            .collect()
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Option<Authenticated> {
        match &self.identity {
            Identity::Fixed(caller) => Some(caller.clone()),
            Identity::FromRequest => context
                .extensions
                .get::<::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Authenticated>())
                .cloned(),
        }
    }

    /// The caller, or the refusal of a request without one.
    fn caller_or_refuse(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Authenticated, ErrorData> {
        self.caller(context)
            .ok_or_else(|| ErrorData::invalid_request(text::NOT_AUTHENTICATED, None))
    }
}

impl ServerHandler for ErpMcpServer {
    fn get_info(&self) -> ServerConfig {
        (*self.declared).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = match self.caller(&context) {
            Some(caller) => {
                let tools = self.tools_for(&caller.principal);
                apps::listed(
                    &self.apps,
                    self.registry(),
                    tools,
                    &caller.principal,
                    &context,
                )
            }
            None => Vec::new(),
        };
        let mut result = ListToolsResult::with_all_items(tools)
            .with_cache_scope(CacheScope::Private)
            .with_ttl_ms(self.list_ttl_ms);
        result.meta = Some(surface_meta(self.registry()));
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Boxed: `rmcp` spawns a task per request and moves its future while doing so;
        // the call's future (pipeline, audit, elicitation) is several KiB, a box of it a
        // pointer.
        Box::pin(self.answer_call(request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.tools.iter().find(|t| t.name == name).cloned()
    }

    /// An empty list with caching hints: erp-tools serves tools, no prompts.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(Vec::new())
            .with_cache_scope(CacheScope::Public)
            .with_ttl_ms(3_600_000))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let why = format!(
            "no prompt `{}`: this server serves tools only",
            request.name
        );
        Err(ErrorData::invalid_params(why, None))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        apps::list_resources(&apps::served_cards(&self.apps, self.registry()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        apps::list_resource_templates()
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = self.caller_or_refuse(&context)?;
        let (rt, id) = (self.runtime(), &request.task_id);
        tasks::get(rt, &self.tasks, &caller.principal, id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller_or_refuse(&context)?;
        let (rt, id, answers) = (self.runtime(), &request.task_id, &request.input_responses);
        let notifier = tasks::Notifier::of(&context);
        tasks::update(rt, &self.tasks, caller.principal, id, answers, notifier).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller_or_refuse(&context)?;
        tasks::cancel(self.runtime(), &caller.principal, &request.task_id).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let served = apps::served_cards(&self.apps, self.registry());
        let caller = self.caller(&context).map(|c| c.principal);
        let (db, uri) = (self.runtime().database(), &request.uri);
        documents::read(&served, db, caller.as_deref(), uri).await
    }
}

impl ErpMcpServer {
    /// `tools/call`: the caller from the request, a question's state opened, the call run
    /// through the runtime, and a question the tool asks put to the client.
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(caller) = self.caller(&context) else {
            return Err(ErrorData::invalid_request(text::NOT_AUTHENTICATED, None));
        };
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Some(r) =
            apps::app_call(&self.apps, &request.name, &arguments, &caller.principal).await
        {
            return Ok(r.into());
        }
        let support = tasks::support_for(self.registry(), &request.name, &caller.principal);
        if support.is_some_and(TaskSupport::allows_task) {
            if context
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
            {
                let call = tasks::TaskCall {
                    principal: caller.principal.clone(),
                    agent_run_id: caller.agent_run_id.clone(),
                    name: request.name.to_string(),
                    arguments,
                    notifier: tasks::Notifier::of(&context),
                };
                return tasks::start(self.runtime(), &self.tasks, call)
                    .await
                    .map(CallToolResponse::Task);
            }
            if support == Some(TaskSupport::Required) {
                let required = ClientCapabilities::builder().enable_tasks().build();
                return Err(ErrorData::missing_required_client_capability(required));
            }
        }
        let trace = call_trace(&context, &request);
        let call = ToolCall {
            // The run the token or the agent host names; empty for none (the caller's own
            // scope). The runtime decides and checks it.
            agent_run_id: caller.agent_run_id.clone().unwrap_or_default(),
            tool_call_id: request_id_string(&context.id),
            name: request.name.to_string(),
            arguments,
        };
        let runtime = self.runtime();
        // Inside the HTTP request's span when there is one; a `_meta` traceparent wins.
        let edge = context
            .extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<EdgeSpan>())
            .map(|edge| edge.0.clone())
            .unwrap_or_else(tracing::Span::none);
        // Progress the handler reports goes to a client that asked for it.
        let mut progress = Forwarder::of(&context, &request);
        let sink = progress.as_ref().map(Forwarder::sink);
        let asking = Asking::of(&context);
        // One key for every row of this call, however many questions it asks: the
        // JSON-RPC id alone restarts at 1 in every session.
        let key = crate::CallKey::fresh().into_string();
        // The documents the handler attaches; emptied before each run of the call.
        let attached = AttachmentSink::new();
        // `rounds`: the questions already put to the client by `elicitation/create`.
        let prepare = |rounds: usize| {
            let mut prepared =
                edge.in_scope(|| runtime.prepare_traced(&caller.principal, call.clone(), &trace));
            prepared.entry.call_key = Some(key.clone());
            prepared.progress = sink.clone();
            prepared.attachments = Some(attached.clone());
            prepared.answering.question = asking.question_form(rounds);
            prepared
        };
        let mut prepared = prepare(0);
        let audited = documents::audited(&prepared.entry);
        let binding = self.binding(&caller, &call.name, prepared.arguments());
        // A repeated call answering a question: its state must open for this very call.
        let mut answers = InputAnswers::new();
        // A state that does not open is refused as a JSON-RPC error (invalid params), as
        // the spec requires for state that fails its integrity check; the refusal is
        // audited first, as every denied call is.
        let mut state_refused = None;
        if let Some(state) = request.request_state.as_deref() {
            match self.states.open(runtime.database(), state, &binding).await {
                Err(why) => {
                    tracing::warn!(reason = %why, tool = %call.name, "request state refused");
                    prepared.refuse(Outcome::Denied, text::request_state_refused(&why));
                    prepared.answering.rpc_error = Some(telemetry::rpc_code::INVALID_PARAMS);
                    state_refused = Some(why);
                }
                Ok(sealed) => {
                    let response = request
                        .input_responses
                        .as_ref()
                        .and_then(|r| r.get(&sealed.input.key));
                    match response.and_then(|r| input::accepted_answer(&sealed.input, r)) {
                        Some(answer) => {
                            answers = sealed.answers;
                            answers.insert(sealed.input.key, answer);
                        }
                        None => prepared.refuse(
                            Outcome::ToolError,
                            text::answer_not_given(&sealed.input.question, &sealed.input.choices),
                        ),
                    }
                }
            }
        }
        let mut rounds = 0;
        loop {
            attached.take();
            let outcome = runtime
                .run_prepared(&caller.principal, prepared, answers.clone())
                .await;
            let mut outcome = match outcome {
                Ok(outcome) => outcome,
                Err(e) => {
                    finish_progress(progress.take()).await;
                    return Err(protocol_error(e));
                }
            };
            if outcome.input_request().is_none() || !matches!(asking, Asking::Elicitation) {
                // The call's last run: its reports go out before its result.
                finish_progress(progress.take()).await;
            }
            if let Some(why) = state_refused.take() {
                return Err(ErrorData::invalid_params(
                    outcome.text,
                    Some(json!({ "requestState": why })),
                ));
            }
            let Some(question) = outcome.input_request() else {
                let document = outcome.document.take();
                let (db, docs) = (runtime.database(), attached.take());
                let from = documents::Origin::new(&caller.principal, &call.name, &audited);
                let result = documents::result(db, from, outcome, docs).await;
                let result = apps::finish(
                    &self.apps,
                    self.registry(),
                    (&caller.principal, caller.agent_run_id.as_deref()),
                    &call.name,
                    document.as_ref(),
                    result,
                    &context,
                );
                return Ok(result.into());
            };
            match asking {
                // The spec forbids relying on a capability the request did not declare.
                // The error names the capability as the spec's ClientCapabilities object,
                // and carries the question, so whoever reads it knows what was asked.
                Asking::Undeclared => {
                    let required = ClientCapabilities::builder().enable_elicitation().build();
                    return Err(ErrorData::new(
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        text::elicitation_not_declared(&question.question, &question.choices),
                        Some(json!({
                            "requiredCapabilities": required,
                            "question": question.question,
                            "choices": question.choices,
                        })),
                    ));
                }
                Asking::InputRequired => {
                    let state = self.states.seal(&binding, &question, &answers);
                    let result = InputRequiredResult::new(
                        Some(input::input_requests(&question)),
                        Some(state),
                    );
                    return Ok(result.into());
                }
                Asking::Elicitation if rounds < MAX_ELICITATION_ROUNDS => {
                    rounds += 1;
                    // The call runs again with the answer (or is refused without one).
                    prepared = prepare(rounds);
                    let asked = context
                        .peer
                        .create_elicitation_with_timeout(
                            input::elicitation(&question),
                            Some(ELICITATION_TIMEOUT),
                        )
                        .await;
                    let answer = asked
                        .ok()
                        .and_then(|r| serde_json::to_value(r).ok())
                        .and_then(|r| input::accepted_answer(&question, &r));
                    match answer {
                        Some(answer) => {
                            answers.insert(question.key, answer);
                        }
                        None => prepared.refuse(
                            Outcome::ToolError,
                            text::answer_not_given(&question.question, &question.choices),
                        ),
                    }
                }
                // No way to ask: the question and the choices as a tool error.
                _ => return Ok(call_tool_result(outcome).into()),
            }
        }
    }

    /// What a question's state is bound to for a call of `tool` with (normalised)
    /// `arguments` by `caller`: the same hash of the same arguments the idempotency key
    /// compares ([`request_hash`](crate::idempotency::request_hash)).
    fn binding(&self, caller: &Authenticated, tool: &str, arguments: &Value) -> String {
        let principal = &caller.principal;
        input::binding(
            principal.user_id(),
            principal.branch_id(),
            caller.agent_run_id.as_deref().unwrap_or(""),
            tool,
            &crate::idempotency::request_hash(arguments),
        )
    }
}

fn protocol_error(e: CallError) -> ErrorData {
    match e {
        CallError::UnknownTool(name, text) => {
            ErrorData::invalid_params(text, Some(json!({ "tool": name })))
        }
        CallError::Internal(detail) => {
            tracing::error!(%detail, "tool call failed inside the server");
            ErrorData::internal_error(text::SERVER_FAILED, None)
        }
    }
}

#[cfg(test)]
#[path = "handler_tests.rs"]
mod tests;
