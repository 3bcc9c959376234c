-- What the Runs page shows of a run besides its counts, kept on its line by the same
-- triggers, so that a page reads its lines and nothing of the log: the outcome of the
-- run's last row (`last_event`), the tool surface of its last and first rows, its first
-- tool (and that row's id), a surface of its rows and whether two of them differ. The
-- open calls of the recovery pass get an index of their own (few rows).
ALTER TABLE erp_audit_runs ADD COLUMN last_event TEXT;
ALTER TABLE erp_audit_runs ADD COLUMN last_surface TEXT;
ALTER TABLE erp_audit_runs ADD COLUMN first_surface TEXT;
ALTER TABLE erp_audit_runs ADD COLUMN first_tool TEXT;
ALTER TABLE erp_audit_runs ADD COLUMN first_tool_id INTEGER;
ALTER TABLE erp_audit_runs ADD COLUMN a_surface TEXT;
ALTER TABLE erp_audit_runs ADD COLUMN surface_changed INTEGER NOT NULL DEFAULT 0;

-- The lines of the rows already written.
UPDATE erp_audit_runs SET
    last_event = (SELECT l.outcome FROM erp_audit_log l WHERE l.id = erp_audit_runs.last_id),
    last_surface = (SELECT l.surface FROM erp_audit_log l WHERE l.id = erp_audit_runs.last_id),
    first_surface = (SELECT l.surface FROM erp_audit_log l
        WHERE l.id = erp_audit_runs.first_id),
    first_tool_id = (SELECT MIN(l.id) FROM erp_audit_log l
        WHERE l.agent_run_id = erp_audit_runs.agent_run_id
        AND l.branch_id = erp_audit_runs.branch_id AND l.tool_name IS NOT NULL),
    a_surface = (SELECT MIN(l.surface) FROM erp_audit_log l
        WHERE l.agent_run_id = erp_audit_runs.agent_run_id
        AND l.branch_id = erp_audit_runs.branch_id),
    surface_changed = (SELECT CASE WHEN COUNT(DISTINCT l.surface) > 1 THEN 1 ELSE 0 END
        FROM erp_audit_log l WHERE l.agent_run_id = erp_audit_runs.agent_run_id
        AND l.branch_id = erp_audit_runs.branch_id);
UPDATE erp_audit_runs SET first_tool = (SELECT l.tool_name FROM erp_audit_log l
    WHERE l.id = erp_audit_runs.first_tool_id)
    WHERE first_tool_id IS NOT NULL;

-- The line before a run's first row (the surface it changed from).
CREATE INDEX IF NOT EXISTS erp_audit_runs_latest_surface
    ON erp_audit_runs (branch_id, last_id, last_surface);
-- Calls still open: the recovery pass's rows.
CREATE INDEX IF NOT EXISTS erp_audit_log_attempts ON erp_audit_log (id, replica_id, at)
    WHERE outcome = 'attempt' AND source = 'runtime';

DROP TRIGGER IF EXISTS erp_audit_runs_insert;
CREATE TRIGGER erp_audit_runs_insert AFTER INSERT ON erp_audit_log
WHEN NEW.branch_id IS NOT NULL
BEGIN
    INSERT INTO erp_audit_runs (agent_run_id, branch_id, user_id, branch_code, first_id,
        last_id, first_at, last_at, calls, denials, failures, replays, drafts, last_event,
        last_surface, first_surface, first_tool, first_tool_id, a_surface, surface_changed)
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
            AND NEW.document_number IS NOT NULL THEN 1 ELSE 0 END,
        NEW.outcome, NEW.surface, NEW.surface, NEW.tool_name,
        CASE WHEN NEW.tool_name IS NULL THEN NULL ELSE NEW.id END, NEW.surface, 0)
    ON CONFLICT (agent_run_id, branch_id) DO UPDATE SET
        first_id = MIN(first_id, excluded.first_id), last_id = MAX(last_id, excluded.last_id),
        first_at = MIN(first_at, excluded.first_at), last_at = MAX(last_at, excluded.last_at),
        calls = calls + excluded.calls, denials = denials + excluded.denials,
        failures = failures + excluded.failures, replays = replays + excluded.replays,
        drafts = drafts + excluded.drafts,
        last_event = CASE WHEN excluded.last_id > last_id
            THEN excluded.last_event ELSE last_event END,
        last_surface = CASE WHEN excluded.last_id > last_id
            THEN excluded.last_surface ELSE last_surface END,
        first_surface = CASE WHEN excluded.first_id < first_id
            THEN excluded.first_surface ELSE first_surface END,
        first_tool = CASE WHEN excluded.first_tool_id IS NOT NULL
            AND (first_tool_id IS NULL OR excluded.first_tool_id < first_tool_id)
            THEN excluded.first_tool ELSE first_tool END,
        first_tool_id = CASE WHEN excluded.first_tool_id IS NOT NULL
            AND (first_tool_id IS NULL OR excluded.first_tool_id < first_tool_id)
            THEN excluded.first_tool_id ELSE first_tool_id END,
        a_surface = COALESCE(a_surface, excluded.a_surface),
        surface_changed = CASE WHEN surface_changed = 1
            OR excluded.a_surface <> a_surface THEN 1 ELSE 0 END;
    INSERT INTO erp_audit_run_tools (tool_name, agent_run_id)
    SELECT NEW.tool_name, NEW.agent_run_id WHERE NEW.tool_name IS NOT NULL
    ON CONFLICT DO NOTHING;
    INSERT INTO erp_audit_tools (tool_name) SELECT NEW.tool_name WHERE NEW.tool_name IS NOT NULL
    ON CONFLICT DO NOTHING;
END;

-- Another change of a row's outcome (the counts are the finish trigger's): the run's
-- last event when the row is the run's last.
CREATE TRIGGER IF NOT EXISTS erp_audit_runs_last_event AFTER UPDATE OF outcome ON erp_audit_log
WHEN NEW.branch_id IS NOT NULL AND NEW.outcome IS NOT OLD.outcome
BEGIN
    UPDATE erp_audit_runs SET last_event = NEW.outcome
    WHERE agent_run_id = NEW.agent_run_id AND branch_id = NEW.branch_id AND last_id = NEW.id;
END;
