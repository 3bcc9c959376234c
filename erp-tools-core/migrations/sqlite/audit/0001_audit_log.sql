-- The audit log's own SQLite file (`<database file>-audit`): one row per tool call
-- (written before execution, completed after) and one row per agent-loop event. Written
-- by the framework's audit writer, never by the model. Same columns as the PostgreSQL
-- table; timestamps are UTC RFC 3339 text with microseconds.
CREATE TABLE IF NOT EXISTS erp_audit_log (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    at               TEXT    NOT NULL,
    finished_at      TEXT,
    source           TEXT    NOT NULL,
    agent_run_id     TEXT    NOT NULL,
    tool_call_id     TEXT,
    tool_name        TEXT,
    user_id          TEXT    NOT NULL,
    branch_id        INTEGER,
    branch_code      TEXT,
    arguments        TEXT,
    outcome          TEXT    NOT NULL,
    message          TEXT,
    document_type    TEXT,
    document_id      INTEGER,
    document_number  TEXT,
    model            TEXT,
    prompt_version   TEXT,
    step             INTEGER,
    action_signature TEXT
);
CREATE INDEX IF NOT EXISTS erp_audit_log_run ON erp_audit_log (agent_run_id, id);
CREATE INDEX IF NOT EXISTS erp_audit_log_at ON erp_audit_log (at);
