//! The one fixture every erp-tools test suite and benchmark runs against.
//!
//! - [`app`]: a small two-branch distributor (purchasing, inventory, finance): its tools
//!   declared with `#[erp_tool]`, its tables and seed rows, and [`app::App`], the
//!   application served on one database;
//! - [`db`]: throw-away databases, a SQLite file or a PostgreSQL schema of its own;
//! - [`drafts`]: purchase order drafts sent to a running example server over HTTP (the
//!   crash and replica harnesses' client);
//! - [`principals`]: the people who call the tools (buyer, warehouse clerk, a buyer of the
//!   other branch, ...);
//! - [`ids`]: unique run ids and name suffixes;
//! - [`example`]: the distributor example's binary, for tests of its command line;
//! - [`mcp`]: an in-process MCP client, tool calls, and the checks every transport must
//!   pass;
//! - [`exports`]: a registry's tools as each provider is shown them, checked;
//! - [`http`]: the MCP server over streamable HTTP, its clients and raw requests;
//! - [`agent`]: scripted-model helpers for the agent loop;
//! - [`proxy`]: a round-robin TCP proxy in front of several servers, as a load balancer;
//! - [`identity`]: a fake OpenID provider (discovery, a rotatable JWKS, signed tokens);
//! - [`tryton`]: a real Tryton started by scripts/tryton/ for the remote-draft tests, and
//!   [`fault_proxy`]: a proxy in front of it that loses, holds or replaces answers;
//! - [`rest_erp`]: a REST ERP that names its documents with strings (ERPNext-like);
//! - [`search_erp`]: an ERP whose search API reads Tryton-style domains (remote keyset
//!   pages);
//! - [`review`]: the review console served on 127.0.0.1, and a reviewer's cookie-keeping
//!   client.
//!
//! A scenario written once as `async fn(&TestDb)` runs on both backends with
//! [`on_both_backends!`].

pub mod agent;
pub mod app;
pub mod db;
pub mod drafts;
pub mod durable;
pub mod example;
pub mod exports;
pub mod fault_proxy;
pub mod http;
pub mod identity;
pub mod ids;
pub mod mcp;
pub mod principals;
pub mod provider_fixture;
pub mod proxy;
pub mod rest_erp;
pub mod review;
pub mod search_erp;
pub mod tryton;
pub mod webhook;

/// Runs `$scenario(&TestDb)` on SQLite and on PostgreSQL as two tests, `$name::sqlite` and
/// `$name::postgres`. Without `ERP_TOOLS_PG_URL` the PostgreSQL test prints
/// `skipped: ERP_TOOLS_PG_URL not set` and passes.
///
/// `on_both_backends!($scenario)` names the tests after the scenario itself.
///
/// ```text
/// async fn replay(t: &TestDb) { /* ... */ }
/// on_both_backends!(replay_returns_the_original_result, crate::replay);
/// on_both_backends!(replay);
/// ```
#[macro_export]
macro_rules! on_both_backends {
    ($scenario:ident) => {
        $crate::on_both_backends!($scenario, super::$scenario);
    };
    ($name:ident, $scenario:path) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                let t = $crate::db::TestDb::sqlite().await;
                $scenario(&t).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                let Some(t) = $crate::db::TestDb::postgres().await else {
                    return;
                };
                $scenario(&t).await;
            }
        }
    };
}
