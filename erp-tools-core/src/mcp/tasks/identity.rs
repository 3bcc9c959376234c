//! The principal a task runs as, kept with the task (`erp_tasks.principal`), so a replica
//! that takes the task over runs its call as the person who started it: the same user,
//! roles, branch and scopes the token granted when the task was created, never anything
//! from the client's messages.

use serde::{Deserialize, Serialize};

use crate::tool::context::Principal;

/// A principal as stored.
#[derive(Serialize, Deserialize)]
struct Stored {
    user_id: String,
    #[serde(default)]
    roles: Vec<String>,
    branch_id: i64,
    branch_code: String,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    agent_run_id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    prompt_version: Option<String>,
}

/// `principal` as JSON text.
pub(super) fn store(principal: &Principal) -> String {
    let stored = Stored {
        user_id: principal.user_id().to_string(),
        roles: principal.roles().to_vec(),
        branch_id: principal.branch_id(),
        branch_code: principal.branch_code().to_string(),
        scopes: principal.scopes().iter().cloned().collect(),
        agent_run_id: principal.agent_run_id().map(str::to_string),
        model: principal.model().map(str::to_string),
        prompt_version: principal.prompt_version().map(str::to_string),
    };
    serde_json::to_string(&stored).unwrap_or_default()
}

/// The principal stored as `text`, if it reads back and is the task's owner
/// (`user_id`, `branch_id`).
pub(super) fn load(text: Option<&str>, user_id: &str, branch_id: i64) -> Option<Principal> {
    let stored: Stored = serde_json::from_str(text?).ok()?;
    if stored.user_id != user_id || stored.branch_id != branch_id {
        return None;
    }
    let mut builder = Principal::builder(stored.user_id, stored.branch_id, stored.branch_code)
        .scopes(stored.scopes);
    for role in stored.roles {
        builder = builder.role(role);
    }
    if let Some(run) = stored.agent_run_id {
        builder = builder.agent_run_id(run);
    }
    if let Some(model) = stored.model {
        builder = builder.model(model);
    }
    if let Some(version) = stored.prompt_version {
        builder = builder.prompt_version(version);
    }
    Some(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_reads_back_as_stored_and_only_for_its_owner() {
        let p = Principal::builder("u-7", 3, "SBY-01")
            .role("buyer")
            .scopes(["purchasing:draft", "purchasing:read"])
            .agent_run_id("run-1")
            .model("m")
            .build();
        let text = store(&p);
        let back = load(Some(&text), "u-7", 3).expect("reads back");
        assert_eq!(store(&back), text);
        assert_eq!(back.roles(), ["buyer".to_string()]);
        assert!(back.has_scope("purchasing:draft"));
        assert_eq!(back.agent_run_id(), Some("run-1"));
        assert!(load(Some(&text), "u-8", 3).is_none());
        assert!(load(Some(&text), "u-7", 4).is_none());
        assert!(load(None, "u-7", 3).is_none());
        assert!(load(Some("{"), "u-7", 3).is_none());
    }
}
