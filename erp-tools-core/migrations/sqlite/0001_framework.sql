-- erp-tools framework tables (SQLite). Timestamps are UTC RFC 3339 text with
-- microseconds ("2026-11-20T08:15:02.123456Z"), so text order is time order.

-- Idempotency keys for draft (write) tools. Logical key: `agent_run_id:client_ref`.
-- A row exists only if the document it names was committed with it.
CREATE TABLE IF NOT EXISTS erp_idempotency_keys (
    agent_run_id    TEXT    NOT NULL,
    client_ref      TEXT    NOT NULL,
    request_hash    TEXT    NOT NULL,
    tool_name       TEXT    NOT NULL,
    user_id         TEXT    NOT NULL,
    branch_id       INTEGER NOT NULL,
    document_type   TEXT,
    document_id     INTEGER,
    document_number TEXT,
    response        TEXT,
    created_at      TEXT    NOT NULL,
    PRIMARY KEY (agent_run_id, client_ref)
);
CREATE INDEX IF NOT EXISTS erp_idempotency_keys_created_at ON erp_idempotency_keys (created_at);

-- One row per tool call (written before execution, completed after) and one row per
-- agent-loop event. Written by the framework, never by the model.
CREATE TABLE IF NOT EXISTS erp_audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              TEXT    NOT NULL,
    finished_at     TEXT,
    source          TEXT    NOT NULL,
    agent_run_id    TEXT    NOT NULL,
    tool_call_id    TEXT,
    tool_name       TEXT,
    user_id         TEXT    NOT NULL,
    branch_id       INTEGER,
    branch_code     TEXT,
    arguments       TEXT,
    outcome         TEXT    NOT NULL,
    message         TEXT,
    document_type   TEXT,
    document_id     INTEGER,
    document_number TEXT,
    model           TEXT,
    prompt_version  TEXT
);
CREATE INDEX IF NOT EXISTS erp_audit_log_run ON erp_audit_log (agent_run_id, id);
CREATE INDEX IF NOT EXISTS erp_audit_log_at ON erp_audit_log (at);
