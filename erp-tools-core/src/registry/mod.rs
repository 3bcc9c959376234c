//! [`ToolRegistry`]: the tools a server exposes, grouped in one namespace per module.
//!
//! Build it once at start-up. Building checks every rule that can only be checked with
//! all tools in hand (namespace sizes, module descriptions, duplicate names, schema
//! budgets, example calls) and renders every schema for every target, so listing tools
//! later never rebuilds a schema.
//!
//! The guide's chapter: *Your first server* (`guide/src/first-server.md` in the repository).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::lock::fingerprint::Fingerprint;
use crate::schema::{MAX_DEPTH, MAX_ENUM_VALUES, Target, header_violations, valid_key};
use crate::tool::context::Principal;
use crate::tool::{ErpTool, Tier, ToolDef};

pub(crate) mod rules;
pub(crate) mod surface;
mod tool;

pub use crate::tool::TaskSupport;
pub use tool::{Namespace, RegisteredTool};

/// Most tools one namespace may hold (exclusive): `MAX_TOOLS_PER_MODULE - 1` is allowed.
pub const MAX_TOOLS_PER_MODULE: usize = 10;

/// Above this many tools visible to one caller, [`ToolRegistry::warnings`] says so:
/// models choose worse among many tools loaded at once.
pub const WARN_TOOLS_LOADED: usize = 20;

/// Adds the `replayed` flag the runtime puts in every draft tool's structured result
/// (`true` when an earlier call with the same `client_ref` and arguments is returned) to
/// an object output schema, listed in `required`.
pub(crate) fn with_replayed_property(mut schema: Value) -> Value {
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
        || schema.get("properties").is_some();
    if !is_object {
        return schema;
    }
    if let Some(obj) = schema.as_object_mut() {
        let props = obj
            .entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(props) = props.as_object_mut() {
            props.insert(
                "replayed".into(),
                serde_json::json!({
                    "type": "boolean",
                    "description": "true when this is the stored result of an earlier call \
                        with the same client_ref and arguments in this run (no new draft \
                        was created)"
                }),
            );
        }
        let required = obj
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(required) = required.as_array_mut()
            && !required.iter().any(|r| r == "replayed")
        {
            required.push(Value::from("replayed"));
        }
    }
    schema
}

/// A problem found while building the registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryError {
    problems: Vec<String>,
}

impl RegistryError {
    /// Every problem found, one sentence each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::problem_list(f, "the tool registry is invalid", &self.problems)
    }
}

impl std::error::Error for RegistryError {}

/// Collects modules and tools; see [`ToolRegistry::builder`].
#[derive(Debug, Default)]
pub struct ToolRegistryBuilder {
    modules: BTreeMap<&'static str, String>,
    tools: Vec<&'static ToolDef>,
    cards: Vec<(&'static str, &'static str)>,
    tasks: Vec<(&'static str, TaskSupport)>,
    no_rerun: Vec<&'static str>,
}

impl ToolRegistryBuilder {
    /// Declares a module (namespace) and its description. The description must also say
    /// what the module cannot do, e.g. "Cannot approve, send or post orders." or "Read
    /// only."; [`build`](Self::build) refuses one that does not.
    pub fn module(mut self, name: &'static str, description: impl Into<String>) -> Self {
        self.modules.insert(name, description.into());
        self
    }

    /// Adds the tool whose handler is `T` (the function annotated with `#[erp_tool]`).
    pub fn tool<T: ErpTool>(mut self) -> Self {
        self.tools.push(T::definition());
        self
    }

    /// Adds tool definitions, e.g. from [`tools!`](crate::tools).
    pub fn tools(mut self, defs: impl IntoIterator<Item = &'static ToolDef>) -> Self {
        self.tools.extend(defs);
        self
    }

    /// Links the results of tool `T` to an MCP App card (SEP-1865): a host that supports
    /// the `io.modelcontextprotocol/ui` extension opens the `ui://` resource
    /// `resource_uri` (e.g. `mcp::apps::DRAFT_CARD`) with each result;
    /// other hosts see the tool as without it. Add the tool too.
    pub fn card<T: ErpTool>(mut self, resource_uri: &'static str) -> Self {
        self.cards.push((T::definition().name(), resource_uri));
        self
    }

    /// Runs the calls of tool `T` as MCP tasks ([`TaskSupport`]): `Optional` for a
    /// request that declares the tasks extension, `Required` always. Add the tool too.
    /// Overrides the tool's own `task = ".."`.
    pub fn task<T: ErpTool>(mut self, support: TaskSupport) -> Self {
        self.tasks.push((T::definition().name(), support));
        self
    }

    /// Declares that tool `T` is not safe to run again (as `rerun = false` does): a task
    /// of it taken over from a replica that stopped is failed, saying why, instead of run
    /// again. Reads and drafts (exactly-once through their `client_ref`) are safe; this is
    /// for a handler with an effect outside the database, e.g. a message it sends.
    pub fn no_rerun<T: ErpTool>(mut self) -> Self {
        self.no_rerun.push(T::definition().name());
        self
    }

    /// Checks every rule and builds the registry, rendering each schema once.
    pub fn build(self) -> Result<ToolRegistry, RegistryError> {
        let mut problems = Vec::new();
        let mut tools: Vec<RegisteredTool> = Vec::with_capacity(self.tools.len());
        let mut defs = self.tools;
        defs.sort_by_key(|d| d.name());
        for pair in defs.windows(2) {
            if pair[0].name() == pair[1].name() {
                problems.push(format!("tool `{}` is registered twice", pair[0].name()));
            }
        }
        defs.dedup_by_key(|d| d.name());
        for (tool, uri) in &self.cards {
            if !uri.starts_with("ui://") || uri.len() <= "ui://".len() {
                problems.push(format!(
                    "tool `{tool}`: the card `{uri}` is not a ui:// resource URI; write e.g. \
                     \"ui://erp-tools/draft-card.html\""
                ));
            }
            if !defs.iter().any(|d| d.name() == *tool) {
                problems.push(format!(
                    "a card is linked to tool `{tool}`, which is not registered: add it with \
                     `.tool::<..>()` or `.tools(..)`"
                ));
            }
        }

        let declared = self.tasks.iter().map(|(tool, _)| tool);
        for tool in declared.chain(&self.no_rerun) {
            if !defs.iter().any(|d| d.name() == *tool) {
                problems.push(format!(
                    "tool `{tool}` is declared to run as a task, but is not registered: add \
                     it with `.tool::<..>()` or `.tools(..)`"
                ));
            }
        }

        for def in defs {
            if !valid_key(def.name()) {
                problems.push(format!(
                    "tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$",
                    def.name()
                ));
            }
            if !self.modules.contains_key(def.module()) {
                problems.push(format!(
                    "tool `{}` belongs to module `{}`, which has no description: add \
                     `.module(\"{}\", \"what it does; what it cannot do\")`",
                    def.name(),
                    def.module(),
                    def.module()
                ));
            }
            let schema = def.input_schema();
            if let Some(page) = def.page() {
                if let Some(problem) = page.problem() {
                    problems.push(format!("tool `{}`: {problem}", def.name()));
                }
                for arg in [crate::page::CURSOR_ARG, crate::page::PAGE_SIZE_ARG] {
                    if (def.input_schema)()
                        .properties()
                        .iter()
                        .any(|p| p.name == arg)
                    {
                        problems.push(format!(
                            "tool `{}` is a page tool, which takes `{arg}` itself; rename the                              argument `{arg}` of {}",
                            def.name(),
                            def.args_type()
                        ));
                    }
                }
            }
            if schema.depth() > MAX_DEPTH + 1 {
                problems.push(format!(
                    "tool `{}`: arguments nest {} levels deep, more than {MAX_DEPTH}",
                    def.name(),
                    schema.depth() - 1
                ));
            }
            if schema.max_enum_values() > MAX_ENUM_VALUES {
                problems.push(format!(
                    "tool `{}`: an enum has more than {MAX_ENUM_VALUES} values",
                    def.name()
                ));
            }
            if let Some(example) = def.example() {
                match serde_json::from_str::<Value>(example) {
                    Ok(v) => {
                        if let Err(e) = crate::validate::validate(&schema, &v) {
                            problems.push(format!(
                                "tool `{}`: the example does not match the arguments: {e}",
                                def.name()
                            ));
                        }
                    }
                    Err(e) => problems.push(format!(
                        "tool `{}`: the example is not valid JSON: {e}",
                        def.name()
                    )),
                }
            }
            let rendered = Target::ALL.map(|t| Arc::new(schema.render(t)));
            for v in header_violations(&schema.render(Target::Mcp)) {
                problems.push(format!("tool `{}`: argument {v}", def.name()));
            }
            tools.push(RegisteredTool {
                def,
                description: def.full_description(),
                output_schema: Arc::new(match def.tier() {
                    Tier::Draft => with_replayed_property(def.output_schema()),
                    Tier::Read => def.output_schema(),
                }),
                schema,
                rendered,
                card: self
                    .cards
                    .iter()
                    .find(|(tool, _)| *tool == def.name())
                    .map(|(_, uri)| *uri),
                task: self
                    .tasks
                    .iter()
                    .rev()
                    .find(|(tool, _)| *tool == def.name())
                    .map_or(def.task_support(), |(_, support)| *support),
                rerun: def.rerun() && !self.no_rerun.contains(&def.name()),
            });
        }

        for (module, description) in &self.modules {
            if !rules::says_what_it_cannot_do(description) {
                problems.push(crate::text::module_without_cannot(module, description));
            }
        }

        let mut namespaces: BTreeMap<&'static str, Namespace> = BTreeMap::new();
        for (i, t) in tools.iter().enumerate() {
            if let Some(desc) = self.modules.get(t.def.module()) {
                namespaces
                    .entry(t.def.module())
                    .or_insert_with(|| Namespace {
                        name: t.def.module(),
                        description: desc.clone(),
                        tools: Vec::new(),
                    })
                    .tools
                    .push(i);
            }
        }
        for ns in namespaces.values() {
            if ns.tools.len() >= MAX_TOOLS_PER_MODULE {
                problems.push(format!(
                    "module `{}` has {} tools; a namespace must hold fewer than \
                     {MAX_TOOLS_PER_MODULE}: split it into smaller modules",
                    ns.name,
                    ns.tools.len()
                ));
            }
        }
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.def.name(), i))
            .collect();
        let namespaces: Vec<Namespace> = namespaces.into_values().collect();
        let fingerprint = surface::fingerprint(&tools, &namespaces);
        Ok(ToolRegistry {
            tools,
            namespaces,
            by_name,
            fingerprint,
        })
    }
}

/// The tools a server exposes. Cheap to share (`Arc<ToolRegistry>`); immutable once built.
#[derive(Debug)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
    namespaces: Vec<Namespace>,
    by_name: BTreeMap<&'static str, usize>,
    /// The surface's fingerprint, computed when the registry is built.
    fingerprint: Fingerprint,
}

impl ToolRegistry {
    /// Starts a registry.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::default()
    }

    /// The fingerprint of the tool surface (see [`crate::lock`]): the SHA-256 of its lock,
    /// the same on every replica built from the same code, different when any tool's
    /// description, schema, tier, scopes or annotations, or a module's description,
    /// differs. The MCP server serves it in `tools/list` and `server/discover`, the audit
    /// log writes it on every row, the metrics label `erp_tools_surface_info` with it.
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// Every namespace, sorted by module name.
    pub fn namespaces(&self) -> &[Namespace] {
        &self.namespaces
    }

    /// The namespace holding `tool`.
    pub fn namespace_of(&self, tool: &RegisteredTool) -> Option<&Namespace> {
        self.namespaces.iter().find(|n| n.name == tool.def.module())
    }

    /// The tool called `name`, if registered.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tools `principal` may use, in a stable order (by name).
    pub fn list_for<'a>(
        &'a self,
        principal: &'a Principal,
    ) -> impl Iterator<Item = &'a RegisteredTool> + 'a {
        self.tools.iter().filter(move |t| t.allowed_for(principal))
    }

    /// Advisory findings that do not stop the registry from being built, such as more
    /// than [`WARN_TOOLS_LOADED`] tools visible at once to a caller holding every scope.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.tools.len() > WARN_TOOLS_LOADED {
            out.push(format!(
                "{} tools are registered; a caller holding every scope would load more than \
                 {WARN_TOOLS_LOADED} at once. Prefer deferred loading (tool search) or \
                 narrower scopes.",
                self.tools.len()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Schema;

    #[test]
    fn a_module_description_without_its_cannot_fails_the_build() {
        let err = ToolRegistry::builder()
            .module("inventory", "Stock on hand per warehouse.")
            .module("purchasing", "Purchase orders. Cannot approve or post.")
            .build()
            .unwrap_err();
        assert_eq!(
            err.problems(),
            [
                "the description of module `inventory` \"Stock on hand per warehouse.\" does not \
                 say what the module cannot do: add a sentence such as \"Cannot approve, send or \
                 post orders.\" or \"Read only.\", so a model stops looking for tools that do \
                 not exist"
            ]
        );
    }

    fn optional_header() -> Schema {
        use crate::schema::{Property, SchemaKind};
        let note = Schema::new(SchemaKind::Optional(Box::new(Schema::new(
            SchemaKind::String(None),
        ))));
        Schema::object(vec![Property::new("note", note).with_header("Note")])
    }

    #[test]
    fn a_header_clients_would_refuse_fails_the_build() {
        use crate::tool::ToolDefParts;
        use crate::tool::handler::{Handler, HandlerFuture};
        fn read<'a>(
            _: &'a crate::ToolContext,
            _: &'a crate::ReadDb,
            _: Value,
        ) -> HandlerFuture<'a> {
            Box::pin(async { Ok(Value::Null.into()) })
        }
        static TOOL: ToolDef = crate::__private_0_1_0::tool_def(ToolDefParts {
            name: "notes_find",
            fn_name: "find",
            module: "notes",
            scopes: &["notes:read"],
            title: "Find notes",
            description: "Find notes.",
            example: None,
            destructive: false,
            limits: &[],
            args_type: "Args",
            input_schema: optional_header,
            output_schema: || serde_json::json!({"type": "object"}),
            handler: Handler::Read(read),
            page: None,
            task: TaskSupport::Forbidden,
            rerun: true,
        });
        let err = ToolRegistry::builder()
            .module("notes", "Notes. Read only.")
            .tools([&TOOL])
            .build()
            .unwrap_err();
        let problems = err.problems().join("\n");
        assert!(
            problems.contains("tool `notes_find`: argument at `properties.note`: `x-mcp-header` `Note` must be on a required text"),
            "{problems}"
        );
    }
}
