//! The fixture application served over MCP stdio, for the stdio transport test.
//!
//! Environment: `ERP_TOOLS_DB_URL` (the fixture database) and `ERP_TOOLS_TOKEN` (a
//! development token naming the caller). The caller is fixed at start-up from the token
//! and served until the token expires;
//! an invalid token stops the process before anything is served.

use erp_tools_core::auth::{TokenConfig, verify_identity};
use erp_tools_core::mcp::serve_stdio;
use erp_tools_tests::app::App;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (Ok(url), Ok(token)) = (
        std::env::var("ERP_TOOLS_DB_URL"),
        std::env::var("ERP_TOOLS_TOKEN"),
    ) else {
        eprintln!("set ERP_TOOLS_DB_URL and ERP_TOOLS_TOKEN");
        std::process::exit(2);
    };
    let caller = match verify_identity(&TokenConfig::development(), &token) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("refusing to serve: {e}");
            std::process::exit(3);
        }
    };
    let app = App::open(&url).await;
    if let Err(e) = serve_stdio(app.runtime, caller).await {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
