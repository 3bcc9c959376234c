//! One caller in one agent run of the application: the setup most runtime scenarios start
//! from.

use std::sync::Arc;

use erp_tools_core::{CallOutcome, Database, Outcome, Principal};
use serde_json::Value;

use super::tools::CREATE_PO_DRAFT;
use super::{App, expect_outcome};
use crate::ids::new_run;
use crate::principals::Role;

/// A caller and a fresh agent run on an [`App`].
pub struct Session {
    /// The application called.
    pub app: App,
    /// Who calls.
    pub who: Arc<Principal>,
    /// The agent run every call of the session belongs to.
    pub run: String,
}

impl Session {
    /// The application on `db` (see [`App::new`]), called by `role` in a new run.
    pub async fn new(db: &Database, role: Role) -> Session {
        App::new(db).await.session(role)
    }

    /// Calls `tool` with `arguments` as the session's caller, in its run.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallOutcome {
        self.app.call(&self.who, &self.run, tool, arguments).await
    }

    /// Drafts the purchase order `arguments` (see [`po_draft`](super::arguments::po_draft)),
    /// asserting that the draft was created.
    pub async fn create_po(&self, arguments: Value) -> CallOutcome {
        let out = self.call(CREATE_PO_DRAFT, arguments).await;
        expect_outcome(out, Outcome::Ok)
    }
}

impl App {
    /// `role` calling this application's tools in a new agent run.
    pub fn session(&self, role: Role) -> Session {
        Session {
            app: self.clone(),
            who: role.shared(),
            run: new_run(),
        }
    }
}
