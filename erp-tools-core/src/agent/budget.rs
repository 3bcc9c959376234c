//! The spend cap: tokens a model used, summed per run and per integration, with limits.
//!
//! Every provider reports the tokens of each response ([`Model::take_usage`](super::Model::take_usage));
//! the loop adds them to the run's total and, when the agent has an
//! [integration limit](Budget::integration), to that integration's total in a
//! [`UsageLedger`]. Before each model turn the loop checks that the next turn fits: the
//! run stops with [`RunStatus::BudgetExhausted`](super::RunStatus::BudgetExhausted)
//! (audited as a `stopped` event) when the total so far plus the largest turn of this run
//! would pass a limit. A run's first turn is estimated at zero, so it runs while anything
//! is left. A turn's tokens are spent once the provider answered, so what that turn
//! proposed still goes through the policy and may run; the cap stops the *next* request.
//!
//! # Where per-integration totals live
//!
//! [`SharedLedger`] keeps totals in the process: share one (it is a cheap clone) between
//! every [`Agent`](super::Agent) of the process that bills the same integration. It starts
//! from zero when the process starts; seed it with [`SharedLedger::with_totals`] (for
//! example from your billing data), or implement [`UsageLedger`] over your own storage for
//! totals shared by several processes. Concurrent runs of one integration check the total
//! before they ask and add after, so together they may pass the limit by at most one turn
//! each.

use std::collections::HashMap;
use std::ops::{Add, AddAssign};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// Tokens a model used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt (input) tokens, cached ones included.
    pub input_tokens: u64,
    /// Completion (output) tokens, reasoning included.
    pub output_tokens: u64,
}

impl TokenUsage {
    /// `input` prompt tokens and `output` completion tokens.
    pub fn new(input: u64, output: u64) -> Self {
        TokenUsage {
            input_tokens: input,
            output_tokens: output,
        }
    }

    /// Input plus output tokens: what the limits count.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl Add for TokenUsage {
    type Output = TokenUsage;
    fn add(self, other: TokenUsage) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
        }
    }
}

impl AddAssign for TokenUsage {
    fn add_assign(&mut self, other: TokenUsage) {
        *self = *self + other;
    }
}

/// Which limit stopped a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum BudgetScope {
    /// The run's own limit ([`Budget::run_limit`]).
    Run,
    /// The integration's limit ([`Budget::integration`]).
    Integration {
        /// The integration's name.
        name: String,
    },
}

impl std::fmt::Display for BudgetScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetScope::Run => f.write_str("run"),
            BudgetScope::Integration { name } => write!(f, "integration {name}"),
        }
    }
}

/// Where per-integration token totals are kept. [`SharedLedger`] keeps them in the
/// process; implement this over your own storage to share totals between processes.
pub trait UsageLedger: Send + Sync {
    /// Tokens `integration` has used so far.
    fn used<'a>(&'a self, integration: &'a str) -> BoxFuture<'a, Result<u64, String>>;
    /// Adds `usage` to `integration`'s total and returns the new total.
    fn add<'a>(
        &'a self,
        integration: &'a str,
        usage: TokenUsage,
    ) -> BoxFuture<'a, Result<u64, String>>;
}

/// Per-integration totals in the process's memory, shared by every clone.
///
/// ```
/// use erp_tools_core::agent::{SharedLedger, TokenUsage, UsageLedger};
/// # futures::executor::block_on(async {
/// let ledger = SharedLedger::new();
/// let other_handle = ledger.clone();
/// ledger.add("reorder-bot", TokenUsage::new(1200, 300)).await.unwrap();
/// assert_eq!(other_handle.used("reorder-bot").await.unwrap(), 1500);
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct SharedLedger {
    totals: Arc<Mutex<HashMap<String, u64>>>,
}

impl SharedLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// A ledger starting from known totals (tokens per integration).
    pub fn with_totals<I, S>(totals: I) -> Self
    where
        I: IntoIterator<Item = (S, u64)>,
        S: Into<String>,
    {
        SharedLedger {
            totals: Arc::new(Mutex::new(
                totals.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            )),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, u64>>, String> {
        self.totals
            .lock()
            .map_err(|_| "the usage ledger is poisoned".to_string())
    }
}

impl UsageLedger for SharedLedger {
    fn used<'a>(&'a self, integration: &'a str) -> BoxFuture<'a, Result<u64, String>> {
        let used = self
            .lock()
            .map(|t| t.get(integration).copied().unwrap_or(0));
        Box::pin(async move { used })
    }

    fn add<'a>(
        &'a self,
        integration: &'a str,
        usage: TokenUsage,
    ) -> BoxFuture<'a, Result<u64, String>> {
        let total = self.lock().map(|mut t| {
            let entry = t.entry(integration.to_string()).or_insert(0);
            *entry = entry.saturating_add(usage.total());
            *entry
        });
        Box::pin(async move { total })
    }
}

/// Token limits for an agent's runs: one per run, and one per integration (a name the
/// application chooses, e.g. the service or customer the agent works for) counted in a
/// [`UsageLedger`] across runs.
///
/// ```
/// use erp_tools_core::agent::{Budget, SharedLedger};
///
/// let ledger = SharedLedger::new(); // share it between the process's agents
/// let budget = Budget::new()
///     .run_limit(50_000)
///     .integration("reorder-bot", 2_000_000, ledger.clone());
/// # let _ = budget;
/// ```
#[derive(Clone, Default)]
pub struct Budget {
    pub(super) run_limit: Option<u64>,
    pub(super) integration: Option<IntegrationLimit>,
}

#[derive(Clone)]
pub(super) struct IntegrationLimit {
    pub name: String,
    pub limit: u64,
    pub ledger: Arc<dyn UsageLedger>,
}

impl Budget {
    /// No limits (usage is still summed and reported in the outcome).
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `tokens` (input plus output) in one run, pauses included.
    pub fn run_limit(mut self, tokens: u64) -> Self {
        self.run_limit = Some(tokens);
        self
    }

    /// At most `tokens` for every run of integration `name` together, counted in `ledger`.
    pub fn integration(
        mut self,
        name: impl Into<String>,
        tokens: u64,
        ledger: impl UsageLedger + 'static,
    ) -> Self {
        self.integration = Some(IntegrationLimit {
            name: name.into(),
            limit: tokens,
            ledger: Arc::new(ledger),
        });
        self
    }

    /// The integration the runs are billed to, if any.
    pub fn integration_name(&self) -> Option<&str> {
        self.integration.as_ref().map(|i| i.name.as_str())
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("run_limit", &self.run_limit)
            .field(
                "integration",
                &self.integration.as_ref().map(|i| (&i.name, i.limit)),
            )
            .finish()
    }
}
