-- Actions the agent loop proposed that wait for a person's approval, each with the run
-- paused before it (serde JSON of `PausedRun`), so any process can show, decide and resume
-- it. `status` is pending, approved or rejected; a pending row past `expires_at` can no
-- longer be decided. Decisions are conditional updates of a pending row: one wins.
CREATE TABLE IF NOT EXISTS erp_approvals (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_run_id     TEXT    NOT NULL,
    tool_call_id     TEXT    NOT NULL,
    tool_name        TEXT    NOT NULL,
    arguments        TEXT    NOT NULL,
    action_signature TEXT    NOT NULL,
    action_digest    TEXT    NOT NULL,
    reason           TEXT    NOT NULL,
    limits           TEXT,
    user_id          TEXT    NOT NULL,
    branch_id        INTEGER NOT NULL,
    branch_code      TEXT    NOT NULL,
    paused_run       TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    created_at       TEXT    NOT NULL,
    expires_at       TEXT    NOT NULL,
    decided_by       TEXT,
    decided_at       TEXT,
    decision_note    TEXT,
    resumed_at       TEXT,
    resume_count     INTEGER NOT NULL DEFAULT 0,
    resume_status    TEXT,
    UNIQUE (agent_run_id, tool_call_id, action_digest)
);
CREATE INDEX IF NOT EXISTS erp_approvals_branch ON erp_approvals (branch_id, status, id);
CREATE INDEX IF NOT EXISTS erp_approvals_run ON erp_approvals (agent_run_id);
