-- What the Runs page shows of a run besides its counts, kept on its line by the same
-- triggers, so that a page reads its lines and nothing of the log: the outcome of the
-- run's last row (`last_event`), the tool surface of its last and first rows, its first
-- tool (and that row's id), a surface of its rows and whether two of them differ. The
-- open calls of the recovery pass get an index of their own (few rows), and the pass
-- reads them with one query.
ALTER TABLE erp_audit_runs
    ADD COLUMN IF NOT EXISTS last_event TEXT,
    ADD COLUMN IF NOT EXISTS last_surface TEXT,
    ADD COLUMN IF NOT EXISTS first_surface TEXT,
    ADD COLUMN IF NOT EXISTS first_tool TEXT,
    ADD COLUMN IF NOT EXISTS first_tool_id BIGINT,
    ADD COLUMN IF NOT EXISTS a_surface TEXT,
    ADD COLUMN IF NOT EXISTS surface_changed INTEGER NOT NULL DEFAULT 0;

-- The lines of the rows already written, each row read within its run's months.
UPDATE erp_audit_runs s SET
    last_event = (SELECT l.outcome FROM erp_audit_log l WHERE l.id = s.last_id
        AND l.at >= s.first_at AND l.at <= s.last_at),
    last_surface = (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.last_id
        AND l.at >= s.first_at AND l.at <= s.last_at),
    first_surface = (SELECT l.surface FROM erp_audit_log l WHERE l.id = s.first_id
        AND l.at >= s.first_at AND l.at <= s.last_at),
    first_tool_id = (SELECT MIN(l.id) FROM erp_audit_log l
        WHERE l.agent_run_id = s.agent_run_id AND l.branch_id = s.branch_id
        AND l.tool_name IS NOT NULL AND l.at >= s.first_at AND l.at <= s.last_at),
    a_surface = (SELECT MIN(l.surface) FROM erp_audit_log l
        WHERE l.agent_run_id = s.agent_run_id AND l.branch_id = s.branch_id
        AND l.at >= s.first_at AND l.at <= s.last_at),
    surface_changed = (SELECT CASE WHEN COUNT(DISTINCT l.surface) > 1 THEN 1 ELSE 0 END
        FROM erp_audit_log l WHERE l.agent_run_id = s.agent_run_id
        AND l.branch_id = s.branch_id AND l.at >= s.first_at AND l.at <= s.last_at);
UPDATE erp_audit_runs s SET first_tool = (SELECT l.tool_name FROM erp_audit_log l
    WHERE l.id = s.first_tool_id AND l.at >= s.first_at AND l.at <= s.last_at)
    WHERE s.first_tool_id IS NOT NULL;

-- The line before a run's first row (the surface it changed from).
CREATE INDEX IF NOT EXISTS erp_audit_runs_latest_surface
    ON erp_audit_runs (branch_id, last_id) INCLUDE (last_surface);
-- Calls still open: the recovery pass's rows.
CREATE INDEX IF NOT EXISTS erp_audit_log_attempts ON erp_audit_log (id)
    INCLUDE (replica_id, at) WHERE outcome = 'attempt' AND source = 'runtime';

CREATE OR REPLACE FUNCTION erp_audit_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.branch_id IS NULL THEN
        RETURN NULL;
    END IF;
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
        first_id = LEAST(erp_audit_runs.first_id, excluded.first_id),
        last_id = GREATEST(erp_audit_runs.last_id, excluded.last_id),
        first_at = LEAST(erp_audit_runs.first_at, excluded.first_at),
        last_at = GREATEST(erp_audit_runs.last_at, excluded.last_at),
        calls = erp_audit_runs.calls + excluded.calls,
        denials = erp_audit_runs.denials + excluded.denials,
        failures = erp_audit_runs.failures + excluded.failures,
        replays = erp_audit_runs.replays + excluded.replays,
        drafts = erp_audit_runs.drafts + excluded.drafts,
        last_event = CASE WHEN excluded.last_id > erp_audit_runs.last_id
            THEN excluded.last_event ELSE erp_audit_runs.last_event END,
        last_surface = CASE WHEN excluded.last_id > erp_audit_runs.last_id
            THEN excluded.last_surface ELSE erp_audit_runs.last_surface END,
        first_surface = CASE WHEN excluded.first_id < erp_audit_runs.first_id
            THEN excluded.first_surface ELSE erp_audit_runs.first_surface END,
        first_tool = CASE WHEN excluded.first_tool_id IS NOT NULL
            AND (erp_audit_runs.first_tool_id IS NULL
                OR excluded.first_tool_id < erp_audit_runs.first_tool_id)
            THEN excluded.first_tool ELSE erp_audit_runs.first_tool END,
        first_tool_id = CASE WHEN excluded.first_tool_id IS NOT NULL
            AND (erp_audit_runs.first_tool_id IS NULL
                OR excluded.first_tool_id < erp_audit_runs.first_tool_id)
            THEN excluded.first_tool_id ELSE erp_audit_runs.first_tool_id END,
        a_surface = COALESCE(erp_audit_runs.a_surface, excluded.a_surface),
        surface_changed = CASE WHEN erp_audit_runs.surface_changed = 1
            OR excluded.a_surface <> erp_audit_runs.a_surface THEN 1 ELSE 0 END;
    IF NEW.tool_name IS NOT NULL THEN
        INSERT INTO erp_audit_run_tools (tool_name, agent_run_id)
        VALUES (NEW.tool_name, NEW.agent_run_id) ON CONFLICT DO NOTHING;
        INSERT INTO erp_audit_tools (tool_name) VALUES (NEW.tool_name) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

-- A call's outcome written on its row: what it adds to its run's counts, and the run's
-- last event when the row is the run's last.
CREATE OR REPLACE FUNCTION erp_audit_runs_finish() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.branch_id IS NULL OR NEW.outcome IS NOT DISTINCT FROM OLD.outcome THEN
        RETURN NULL;
    END IF;
    IF OLD.outcome <> 'attempt' OR NEW.outcome = 'attempt' THEN
        UPDATE erp_audit_runs SET last_event = NEW.outcome
        WHERE agent_run_id = NEW.agent_run_id AND branch_id = NEW.branch_id
            AND last_id = NEW.id;
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
            AND NEW.document_number IS NOT NULL THEN 1 ELSE 0 END,
        last_event = CASE WHEN last_id = NEW.id THEN NEW.outcome ELSE last_event END
    WHERE agent_run_id = NEW.agent_run_id AND branch_id = NEW.branch_id;
    RETURN NULL;
END;
$$;
