-- Which principal (user and branch) each agent run belongs to: the first one that used
-- it. A run's owner never changes; calls by anyone else in that run are refused.
CREATE TABLE IF NOT EXISTS erp_agent_runs (
    agent_run_id  TEXT    NOT NULL PRIMARY KEY,
    user_id       TEXT    NOT NULL,
    branch_id     INTEGER NOT NULL,
    first_seen_at TEXT    NOT NULL
);
