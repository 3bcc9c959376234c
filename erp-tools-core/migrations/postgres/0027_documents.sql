-- Documents a successful call attached to its result (a purchase order's PDF, a report's
-- CSV), kept so that the caller can read one again with MCP `resources/read` by its URI,
-- from any replica. Only the principal (user and branch) whose call produced a document
-- reads it; anyone else is told no such resource exists. A call attaching the same URI
-- again replaces it. Kept an hour, like a task; size-bounded by the attachments' bound.
-- The review console's Run page lists a run's kept documents to a reviewer of its branch.
CREATE TABLE IF NOT EXISTS erp_documents (
    user_id     TEXT    NOT NULL,
    branch_id   BIGINT  NOT NULL,
    uri         TEXT    NOT NULL,
    mime_type   TEXT    NOT NULL,
    -- The tool whose call produced it.
    tool_name   TEXT    NOT NULL,
    -- The run the call was audited under ('' for none), and the call's id in it.
    agent_run_id TEXT   NOT NULL,
    tool_call_id TEXT,
    -- A text document as it is, or a binary one in base64 (`is_base64` 1).
    body        TEXT    NOT NULL,
    is_base64   BIGINT  NOT NULL,
    created_at  TEXT    NOT NULL,
    -- When the row is deleted: milliseconds since the Unix epoch.
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (user_id, branch_id, uri)
);
CREATE INDEX IF NOT EXISTS erp_documents_expiry ON erp_documents (expires_at);
CREATE INDEX IF NOT EXISTS erp_documents_run ON erp_documents (agent_run_id);
