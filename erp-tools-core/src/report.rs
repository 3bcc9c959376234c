//! The surface report (see [`SurfaceReport`]).
//!
//! The guide's chapter: *Declaring tools: what the compiler refuses* (`guide/src/declaring.md` in the repository).

use std::fmt::Write as _;

use crate::page::PageSpec;
use crate::registry::{RegisteredTool, TaskSupport, ToolRegistry};
use crate::schema::{DeclaredKind, OptIn, Target, check_strict};
use crate::tool::Tier;

/// The answer to one checklist question for one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Whether the tool meets the rule.
    pub pass: bool,
    /// The evidence, in a few words.
    pub detail: String,
}

impl Answer {
    fn new(pass: bool, detail: impl Into<String>) -> Self {
        Answer {
            pass,
            detail: detail.into(),
        }
    }
}

/// The checklist for one tool.
#[derive(Clone, Debug)]
pub struct ToolReport {
    /// Tool name.
    pub name: String,
    /// 1. Tier: read or draft, never post.
    pub tier: Answer,
    /// 2. One action, named with its module prefix, in a namespace of fewer than 10 tools.
    pub one_action: Answer,
    /// 3. Strict schema for every target, without forbidden fields.
    pub strict_schema: Answer,
    /// 4. Idempotent: a draft carries `client_ref`; a read has nothing to repeat.
    pub idempotency: Answer,
    /// 5. Identity and branch come from the token, not from arguments.
    pub identity: Answer,
    /// 6. Errors are model-facing and actionable.
    pub errors: Answer,
    /// 7. Every call is audited.
    pub audit: Answer,
    /// The fields this tool takes although a rule refuses them, each allowed by the team
    /// with `#[erp(allow = "..", reason = "..")]`: `(path, opt-in)`, for the reviewer.
    pub opt_ins: Vec<(String, OptIn)>,
    /// Kinds the team declared for fields whose names do not say them, by field path
    /// (`#[erp(kind = "..", of = "..")]`).
    pub kinds: Vec<(String, DeclaredKind)>,
    /// A page tool's bounds: items a page holds by default and at most (`page_size`).
    pub page: Option<PageSpec>,
    /// How its calls run as MCP tasks (`Forbidden`: answered in the request).
    pub task: TaskSupport,
    /// Whether a task of it taken over from a stopped replica runs again.
    pub task_rerun: bool,
}

impl ToolReport {
    /// Every answer, in checklist order, with its question.
    pub fn answers(&self) -> [(&'static str, &Answer); 7] {
        [
            ("tier", &self.tier),
            ("one action", &self.one_action),
            ("strict schema", &self.strict_schema),
            ("idempotency", &self.idempotency),
            ("identity from token", &self.identity),
            ("actionable errors", &self.errors),
            ("audit", &self.audit),
        ]
    }

    /// Whether every answer passes.
    pub fn all_pass(&self) -> bool {
        self.answers().iter().all(|(_, a)| a.pass)
    }
}

/// The surface report (SPEC E3): for every tool, the seven-question safety checklist,
/// answered from the registry itself rather than from anyone's memory of the code.
///
/// ```
/// # use erp_tools_core::prelude::*;
/// # #[derive(Deserialize, ToolArgs)]
/// # struct StockArgs { item_code: String }
/// # #[derive(Serialize, JsonSchema)]
/// # struct Stock { on_hand: Decimal }
/// # /// Get stock on hand of one item in the caller's branch.
/// # #[erp_tool(module = "inventory", tier = "read", scopes = ["inventory:read"])]
/// # async fn get_stock(ctx: &ToolContext, args: StockArgs) -> Result<Stock, ToolError> {
/// #     Ok(Stock { on_hand: Decimal::ZERO })
/// # }
/// use erp_tools_core::ToolRegistry;
/// use erp_tools_core::report::SurfaceReport;
///
/// let registry = ToolRegistry::builder()
///     .module("inventory", "Stock per warehouse. Read only.")
///     .tool::<get_stock>()
///     .build()?;
/// let report = SurfaceReport::new(&registry);
/// print!("{}", report.to_table());
/// assert!(report.all_pass());
/// # Ok::<(), erp_tools_core::RegistryError>(())
/// ```
///
/// The checklist for every tool of a registry.
#[derive(Clone, Debug)]
pub struct SurfaceReport {
    /// One report per tool, sorted by tool name.
    pub tools: Vec<ToolReport>,
}

impl SurfaceReport {
    /// Answers the checklist for every tool of `registry`.
    pub fn new(registry: &ToolRegistry) -> Self {
        let tools = registry
            .tools()
            .iter()
            .map(|t| Self::tool(registry, t))
            .collect();
        SurfaceReport { tools }
    }

    fn tool(registry: &ToolRegistry, t: &RegisteredTool) -> ToolReport {
        let def = t.def;
        let ns_size = registry.namespace_of(t).map_or(0, |n| n.tools.len());
        let prefixed = def.name().starts_with(&format!("{}_", def.module()));
        let mut props = Vec::new();
        crate::schema::paths::fields(&t.schema, "", &mut props);
        let names: Vec<String> = props.iter().map(|(_, p)| p.name.to_string()).collect();
        let forbidden: Vec<String> = props
            .iter()
            .filter(|(_, p)| crate::registry::rules::refused(p, def.tier()))
            .map(|(_, p)| p.name.to_string())
            .collect();
        let opt_ins: Vec<(String, OptIn)> = props
            .iter()
            .filter_map(|(path, p)| p.opt_in.clone().map(|o| (path.clone(), o)))
            .collect();
        let kinds: Vec<(String, DeclaredKind)> = props
            .iter()
            .filter_map(|(path, p)| p.kind.clone().map(|k| (path.clone(), k)))
            .collect();
        let violations: usize = Target::ALL
            .iter()
            .map(|&target| check_strict(t.input_schema(target), target).len())
            .sum();
        let identity_fields: Vec<&String> = props
            .iter()
            .zip(&names)
            .filter(|((_, p), n)| {
                crate::registry::rules::forbidden_field(n, Tier::Read).is_some()
                    && !crate::registry::rules::declared_counterparty(p)
            })
            .map(|(_, n)| n)
            .collect();
        let has_client_ref = t.schema.properties().iter().any(|p| p.name == "client_ref");
        ToolReport {
            name: def.name().to_string(),
            tier: Answer::new(true, def.tier().as_str()),
            one_action: Answer::new(
                prefixed && ns_size < crate::registry::MAX_TOOLS_PER_MODULE,
                format!(
                    "prefix `{}_`{}; namespace of {ns_size}",
                    def.module(),
                    if prefixed { "" } else { " MISSING" }
                ),
            ),
            strict_schema: Answer::new(
                violations == 0 && forbidden.is_empty(),
                if violations == 0 && forbidden.is_empty() {
                    "strict for openai, anthropic, mcp; no forbidden fields".to_string()
                } else {
                    format!("{violations} strict-rule violations; forbidden: {forbidden:?}")
                },
            ),
            idempotency: match def.tier() {
                Tier::Read => Answer::new(true, "read-only: nothing to repeat"),
                Tier::Draft => Answer::new(
                    has_client_ref,
                    if has_client_ref {
                        "key run:client_ref claimed in the write transaction"
                    } else {
                        "no client_ref"
                    },
                ),
            },
            identity: Answer::new(
                identity_fields.is_empty(),
                if identity_fields.is_empty() {
                    format!(
                        "no branch/user arguments; scopes {}",
                        def.scopes().join(", ")
                    )
                } else {
                    format!("identity arguments: {identity_fields:?}")
                },
            ),
            errors: Answer::new(
                true,
                match def.tier() {
                    Tier::Read => "ToolError: allowed values, next step",
                    Tier::Draft => {
                        "ToolError: allowed values, next step, \"No draft was created.\""
                    }
                },
            ),
            audit: Answer::new(true, "attempt + outcome rows, denied calls included"),
            opt_ins,
            kinds,
            page: def.page(),
            task: t.task_support(),
            task_rerun: t.task_rerun(),
        }
    }

    /// Whether every tool passes every question.
    pub fn all_pass(&self) -> bool {
        self.tools.iter().all(ToolReport::all_pass)
    }

    /// The report as a plain-text table, one block per tool.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let width = self
            .tools
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(
            out,
            "{:<width$}  {:<20}  {:<4}  evidence",
            "tool", "question", "ok"
        );
        let _ = writeln!(out, "{}", "-".repeat(width + 40));
        for t in &self.tools {
            for (i, (q, a)) in t.answers().iter().enumerate() {
                let name = if i == 0 { t.name.as_str() } else { "" };
                let ok = if a.pass { "yes" } else { "NO" };
                let _ = writeln!(out, "{name:<width$}  {q:<20}  {ok:<4}  {}", a.detail);
            }
            if let Some(page) = t.page {
                let _ = writeln!(
                    out,
                    "{:<width$}  {:<20}  {:<4}  pages of {} items, page_size at most {}; sealed cursor",
                    "", "page", "", page.default_size, page.max_size
                );
            }
            if t.task.allows_task() {
                let rerun = if t.task_rerun {
                    "taken over: run again"
                } else {
                    "taken over: failed, not run again"
                };
                let _ = writeln!(
                    out,
                    "{:<width$}  {:<20}  {:<4}  runs as an MCP task ({}); {rerun}",
                    "",
                    "task",
                    "",
                    t.task.as_str()
                );
            }
            for (path, k) in &t.kinds {
                let of =
                    k.of.as_ref()
                        .map(|o| format!(" of {o}"))
                        .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{:<width$}  {:<20}  {:<4}  `{path}` declared {}{of}",
                    "", "kind", "", k.kind
                );
            }
            for (path, o) in &t.opt_ins {
                let _ = writeln!(
                    out,
                    "{:<width$}  {:<20}  {:<4}  `{path}` allowed as {}: {}",
                    "", "opt-in", "", o.category, o.reason
                );
            }
            let _ = writeln!(out);
        }
        let pages: Vec<String> = self
            .tools
            .iter()
            .filter_map(|t| {
                t.page
                    .map(|p| format!("{} ({}, at most {})", t.name, p.default_size, p.max_size))
            })
            .collect();
        if !pages.is_empty() {
            let _ = writeln!(out, "Page tools: {}.", pages.join(", "));
        }
        let tasks: Vec<String> = self
            .tools
            .iter()
            .filter(|t| t.task.allows_task())
            .map(|t| format!("{} ({})", t.name, t.task.as_str()))
            .collect();
        if !tasks.is_empty() {
            let _ = writeln!(out, "Task tools: {}.", tasks.join(", "));
        }
        let passing = self.tools.iter().filter(|t| t.all_pass()).count();
        let _ = writeln!(
            out,
            "{passing} of {} tools pass every question.",
            self.tools.len()
        );
        out
    }
}
