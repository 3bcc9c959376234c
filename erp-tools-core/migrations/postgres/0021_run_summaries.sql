-- One line per agent run and branch, what the review console's Runs page lists: its
-- counts kept by triggers in the same transaction as the audit rows they count, so the
-- page reads the lines of one page instead of aggregating the whole log. A call counted
-- as denied or failed is counted once: by its runtime row, or by the agent loop's event
-- when the call never reached the runtime (the first of the two written counts).
CREATE TABLE IF NOT EXISTS erp_audit_runs (
    agent_run_id TEXT NOT NULL,
    branch_id BIGINT NOT NULL,
    user_id TEXT NOT NULL,
    branch_code TEXT,
    first_id BIGINT NOT NULL,
    last_id BIGINT NOT NULL,
    first_at TEXT NOT NULL,
    last_at TEXT NOT NULL,
    calls BIGINT NOT NULL DEFAULT 0,
    denials BIGINT NOT NULL DEFAULT 0,
    failures BIGINT NOT NULL DEFAULT 0,
    replays BIGINT NOT NULL DEFAULT 0,
    drafts BIGINT NOT NULL DEFAULT 0,
    attention INTEGER GENERATED ALWAYS AS
        (CASE WHEN denials > 0 OR failures > 0 THEN 1 ELSE 0 END) STORED,
    PRIMARY KEY (agent_run_id, branch_id)
);
CREATE INDEX IF NOT EXISTS erp_audit_runs_page ON erp_audit_runs (branch_id, attention, last_id);
CREATE INDEX IF NOT EXISTS erp_audit_runs_latest ON erp_audit_runs (branch_id, last_id);
CREATE INDEX IF NOT EXISTS erp_audit_runs_user ON erp_audit_runs (branch_id, user_id, last_id);
-- Which runs called which tool, and every tool name seen (the search by tool).
CREATE TABLE IF NOT EXISTS erp_audit_run_tools (
    tool_name TEXT NOT NULL,
    agent_run_id TEXT NOT NULL,
    PRIMARY KEY (tool_name, agent_run_id)
);
CREATE TABLE IF NOT EXISTS erp_audit_tools (tool_name TEXT PRIMARY KEY);
-- The search by document number.
CREATE INDEX IF NOT EXISTS erp_audit_log_document ON erp_audit_log (document_number)
    WHERE document_number IS NOT NULL;

-- The lines of the rows already written (a replica running an older version meanwhile
-- may leave its rows of these seconds uncounted).
INSERT INTO erp_audit_runs (agent_run_id, branch_id, user_id, branch_code, first_id, last_id,
    first_at, last_at, calls, denials, failures, replays, drafts)
SELECT a.agent_run_id, a.branch_id, MIN(a.user_id), MIN(a.branch_code), MIN(a.id), MAX(a.id),
    MIN(a.at), MAX(a.at),
    SUM(CASE WHEN a.source = 'runtime' THEN 1 ELSE 0 END),
    SUM(CASE WHEN a.outcome = 'denied' AND (a.source = 'runtime' OR NOT EXISTS (
        SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id
        AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id)) THEN 1 ELSE 0 END),
    SUM(CASE WHEN (a.source = 'runtime' AND a.outcome = 'tool_error')
        OR (a.source = 'agent' AND a.outcome = 'failed' AND NOT EXISTS (
        SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = a.agent_run_id
        AND r.source = 'runtime' AND r.tool_call_id = a.tool_call_id
        AND r.outcome = 'tool_error')) THEN 1 ELSE 0 END),
    SUM(CASE WHEN a.outcome = 'replayed' THEN 1 ELSE 0 END),
    SUM(CASE WHEN a.source = 'runtime' AND a.outcome = 'ok'
        AND a.document_number IS NOT NULL THEN 1 ELSE 0 END)
FROM erp_audit_log a WHERE a.branch_id IS NOT NULL
GROUP BY a.agent_run_id, a.branch_id
ON CONFLICT DO NOTHING;
INSERT INTO erp_audit_run_tools (tool_name, agent_run_id)
SELECT DISTINCT tool_name, agent_run_id FROM erp_audit_log WHERE tool_name IS NOT NULL
ON CONFLICT DO NOTHING;
INSERT INTO erp_audit_tools (tool_name)
SELECT DISTINCT tool_name FROM erp_audit_log WHERE tool_name IS NOT NULL
ON CONFLICT DO NOTHING;

-- A new row: its run's line (created or extended), its tool.
CREATE OR REPLACE FUNCTION erp_audit_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.branch_id IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO erp_audit_runs (agent_run_id, branch_id, user_id, branch_code, first_id,
        last_id, first_at, last_at, calls, denials, failures, replays, drafts)
    VALUES (NEW.agent_run_id, NEW.branch_id, NEW.user_id, NEW.branch_code, NEW.id, NEW.id,
        NEW.at, NEW.at,
        CASE WHEN NEW.source = 'runtime' THEN 1 ELSE 0 END,
        CASE WHEN NEW.outcome <> 'denied' THEN 0
            WHEN NEW.source = 'runtime' THEN 1
            WHEN EXISTS (SELECT 1 FROM erp_audit_log r WHERE r.agent_run_id = NEW.agent_run_id
                AND r.source = 'runtime' AND r.tool_call_id = NEW.tool_call_id) THEN 0
            ELSE 1 END,
        CASE WHEN NEW.source = 'runtime' AND NEW.outcome = 'tool_error' THEN
                CASE WHEN EXISTS (SELECT 1 FROM erp_audit_log r
                    WHERE r.agent_run_id = NEW.agent_run_id AND r.source = 'agent'
                    AND r.outcome = 'failed' AND r.tool_call_id = NEW.tool_call_id)
                THEN 0 ELSE 1 END
            WHEN NEW.source = 'agent' AND NEW.outcome = 'failed' THEN
                CASE WHEN EXISTS (SELECT 1 FROM erp_audit_log r
                    WHERE r.agent_run_id = NEW.agent_run_id AND r.source = 'runtime'
                    AND r.outcome = 'tool_error' AND r.tool_call_id = NEW.tool_call_id)
                THEN 0 ELSE 1 END
            ELSE 0 END,
        CASE WHEN NEW.outcome = 'replayed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.source = 'runtime' AND NEW.outcome = 'ok'
            AND NEW.document_number IS NOT NULL THEN 1 ELSE 0 END)
    ON CONFLICT (agent_run_id, branch_id) DO UPDATE SET
        first_id = LEAST(erp_audit_runs.first_id, excluded.first_id),
        last_id = GREATEST(erp_audit_runs.last_id, excluded.last_id),
        first_at = LEAST(erp_audit_runs.first_at, excluded.first_at),
        last_at = GREATEST(erp_audit_runs.last_at, excluded.last_at),
        calls = erp_audit_runs.calls + excluded.calls,
        denials = erp_audit_runs.denials + excluded.denials,
        failures = erp_audit_runs.failures + excluded.failures,
        replays = erp_audit_runs.replays + excluded.replays,
        drafts = erp_audit_runs.drafts + excluded.drafts;
    IF NEW.tool_name IS NOT NULL THEN
        INSERT INTO erp_audit_run_tools (tool_name, agent_run_id)
        VALUES (NEW.tool_name, NEW.agent_run_id) ON CONFLICT DO NOTHING;
        INSERT INTO erp_audit_tools (tool_name) VALUES (NEW.tool_name) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER erp_audit_runs_insert AFTER INSERT ON erp_audit_log
    FOR EACH ROW EXECUTE FUNCTION erp_audit_runs_insert();

-- A call's outcome written on its `attempt` row: what it adds to its run's counts.
CREATE OR REPLACE FUNCTION erp_audit_runs_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.branch_id IS NULL OR OLD.outcome <> 'attempt' OR NEW.outcome = 'attempt' THEN
        RETURN NULL;
    END IF;
    UPDATE erp_audit_runs SET
        denials = denials + CASE WHEN NEW.outcome = 'denied' AND NEW.source = 'runtime'
            THEN 1 ELSE 0 END,
        failures = failures + CASE WHEN NEW.source = 'runtime' AND NEW.outcome = 'tool_error'
            AND NOT EXISTS (SELECT 1 FROM erp_audit_log r
                WHERE r.agent_run_id = NEW.agent_run_id AND r.source = 'agent'
                AND r.outcome = 'failed' AND r.tool_call_id = NEW.tool_call_id)
            THEN 1 ELSE 0 END,
        replays = replays + CASE WHEN NEW.outcome = 'replayed' THEN 1 ELSE 0 END,
        drafts = drafts + CASE WHEN NEW.source = 'runtime' AND NEW.outcome = 'ok'
            AND NEW.document_number IS NOT NULL THEN 1 ELSE 0 END
    WHERE agent_run_id = NEW.agent_run_id AND branch_id = NEW.branch_id;
    RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER erp_audit_runs_finish AFTER UPDATE OF outcome ON erp_audit_log
    FOR EACH ROW EXECUTE FUNCTION erp_audit_runs_finish();
