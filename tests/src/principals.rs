//! The people who call the fixture's tools, as their tokens would name them: user,
//! branch, role and scopes. Each is a [`Role`]; build the [`Principal`] the way the call
//! needs it (owned, bound to a run, or shared for `ToolRuntime::call` and `Agent::run`).

use std::sync::Arc;

use erp_tools_core::{Principal, PrincipalBuilder};

/// A branch: internal id and business code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Branch {
    /// Internal id (`branch_id` columns).
    pub id: i64,
    /// Business code, as people write it.
    pub code: &'static str,
}

/// Surabaya, where every role but [`OTHER_BRANCH_BUYER`] works, and where the seeded
/// vendors and stock are.
pub const SBY: Branch = Branch {
    id: 1,
    code: "SBY-01",
};
/// Jakarta, whose data the Surabaya roles must never see.
pub const JKT: Branch = Branch {
    id: 2,
    code: "JKT-02",
};

/// The model every role's principal names (kept in the audit log).
pub const MODEL: &str = "test-model";
/// The prompt version every role's principal names (kept in the audit log).
pub const PROMPT_VERSION: &str = "p-3";

/// Who calls: a user of one branch with the scopes of a role.
#[derive(Clone, Copy, Debug)]
pub struct Role {
    /// The user id (the audit log's `user_id`, a draft's `drafted_on_behalf_of`).
    pub user_id: &'static str,
    /// The user's branch.
    pub branch: Branch,
    /// The role's name.
    pub role: &'static str,
    /// The scopes the role's token grants.
    pub scopes: &'static [&'static str],
}

/// Orders for Surabaya: reads vendors, orders and stock, drafts purchase orders.
pub const BUYER: Role = Role {
    user_id: "u-buyer",
    branch: SBY,
    role: "buyer",
    scopes: &["purchasing:read", "purchasing:draft", "inventory:read"],
};

/// Looks after Surabaya's stock: reads stock, nothing else.
pub const WAREHOUSE: Role = Role {
    user_id: "u-warehouse",
    branch: SBY,
    role: "warehouse",
    scopes: &["inventory:read"],
};

/// Reads Surabaya's vendors and orders; may not draft anything.
pub const VIEWER: Role = Role {
    user_id: "u-viewer",
    branch: SBY,
    role: "viewer",
    scopes: &["purchasing:read"],
};

/// A buyer of Jakarta, with the same scopes as [`BUYER`].
pub const OTHER_BRANCH_BUYER: Role = Role {
    user_id: "u-jkt-buyer",
    branch: JKT,
    role: "buyer",
    scopes: BUYER.scopes,
};

/// Another buyer of Surabaya, with the same scopes as [`BUYER`]: someone else in the same
/// branch.
pub const SECOND_BUYER: Role = Role {
    user_id: "u-second-buyer",
    branch: SBY,
    role: "buyer",
    scopes: BUYER.scopes,
};

/// [`BUYER`]'s user id at Jakarta: the same user id in another branch is another person.
pub const BUYER_IN_JAKARTA: Role = Role {
    user_id: BUYER.user_id,
    branch: JKT,
    role: "buyer",
    scopes: BUYER.scopes,
};

/// Pays Surabaya's vendors: reads vendors, drafts payment requests.
pub const ACCOUNTANT: Role = Role {
    user_id: "u-accountant",
    branch: SBY,
    role: "accountant",
    scopes: &["purchasing:read", "finance:draft"],
};

/// Runs Surabaya's purchasing: every scope of the fixture application.
pub const MANAGER: Role = Role {
    user_id: "u-manager",
    branch: SBY,
    role: "manager",
    scopes: &[
        "purchasing:read",
        "purchasing:draft",
        "inventory:read",
        "finance:draft",
    ],
};

impl Role {
    fn builder(&self, scopes: &[&str]) -> PrincipalBuilder {
        Principal::builder(self.user_id, self.branch.id, self.branch.code)
            .role(self.role)
            .scopes(scopes.iter().copied())
    }

    /// The principal, with [`MODEL`] and [`PROMPT_VERSION`], not bound to a run.
    pub fn principal(&self) -> Principal {
        self.builder(self.scopes)
            .model(MODEL)
            .prompt_version(PROMPT_VERSION)
            .build()
    }

    /// The principal bound to `run`, as a token's `run` claim binds it.
    pub fn in_run(&self, run: &str) -> Principal {
        self.builder(self.scopes)
            .model(MODEL)
            .prompt_version(PROMPT_VERSION)
            .agent_run_id(run)
            .build()
    }

    /// [`Role::principal`], shared, as `ToolRuntime::call` and `Agent::run` take it.
    pub fn shared(&self) -> Arc<Principal> {
        Arc::new(self.principal())
    }

    /// The same person holding `scopes` instead of the role's own, with no model or
    /// prompt version: for tools outside the fixture application (the benchmarks').
    pub fn holding(&self, scopes: &[&str]) -> Principal {
        self.builder(scopes).build()
    }
}

/// Reviews Surabaya's agent runs and decides its approvals (the review console's scopes).
pub const REVIEWER: Role = Role {
    user_id: "u-reviewer",
    branch: SBY,
    role: "reviewer",
    scopes: &["review:read", "review:approve"],
};

/// Reads Surabaya's review console but may not decide approvals.
pub const READ_ONLY_REVIEWER: Role = Role {
    user_id: "u-auditor",
    branch: SBY,
    role: "auditor",
    scopes: &["review:read"],
};

/// Reviews Jakarta's agent runs: must never see or decide Surabaya's.
pub const JAKARTA_REVIEWER: Role = Role {
    user_id: "u-jkt-reviewer",
    branch: JKT,
    role: "reviewer",
    scopes: &["review:read", "review:approve"],
};
