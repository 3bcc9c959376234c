-- Tool calls run as MCP tasks (the `io.modelcontextprotocol/tasks` extension): one row
-- per task, shared by every replica of this database, so any replica answers tasks/get,
-- tasks/update and tasks/cancel, and a restart forgets none. Only the principal (user and
-- branch) who started a task sees it. Timestamps are UTC RFC 3339 text with microseconds.
CREATE TABLE IF NOT EXISTS erp_tasks (
    id             TEXT    PRIMARY KEY,
    -- Who started it: the only principal who may read, answer or cancel it.
    user_id        TEXT    NOT NULL,
    branch_id      BIGINT  NOT NULL,
    -- The call: the run the caller named ('' for none), the tool, its arguments (JSON).
    agent_run_id   TEXT    NOT NULL,
    tool_name      TEXT    NOT NULL,
    arguments      TEXT    NOT NULL,
    -- working, input_required, completed, failed or cancelled.
    status         TEXT    NOT NULL,
    -- The latest progress the handler reported, for a person.
    status_message TEXT,
    -- input_required: the question (JSON) and the MCP inputRequests (JSON) put to the client.
    question       TEXT,
    input_requests TEXT,
    -- The answers given so far (JSON object, question key -> answer).
    answers        TEXT    NOT NULL,
    -- completed: the CallToolResult (JSON); failed: the JSON-RPC error object (JSON).
    result         TEXT,
    error          TEXT,
    -- The replica running it (its lease row in erp_replicas); NULL when no replica is.
    replica_id     TEXT,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL,
    ttl_ms         BIGINT  NOT NULL,
    -- When the row is deleted: milliseconds since the Unix epoch.
    expires_at     BIGINT  NOT NULL
);
CREATE INDEX IF NOT EXISTS erp_tasks_expiry ON erp_tasks (expires_at);
CREATE INDEX IF NOT EXISTS erp_tasks_running ON erp_tasks (status, replica_id);
