-- A run's last checkpoint also ends it: `INSERT INTO erp_run_checkpoints` takes the run's
-- result (`result`, a RunStatus as JSON) when the turn's answer is the run's final answer,
-- and marks the run `done` with it in the same statement, so the run's end costs no
-- commit of its own. The run keeps its lease token: its driver may still store another
-- end over `done` (a brake that stopped it after the answer arrived).
DROP TRIGGER IF EXISTS erp_run_checkpoint;
DROP VIEW IF EXISTS erp_run_checkpoints;
CREATE VIEW erp_run_checkpoints AS
    SELECT NULL AS agent_run_id, NULL AS lease_token, NULL AS step, NULL AS action,
        NULL AS input_tokens, NULL AS output_tokens, NULL AS prior_step,
        NULL AS prior_outcome, NULL AS at, NULL AS result
    WHERE 0;
CREATE TRIGGER erp_run_checkpoint INSTEAD OF INSERT ON erp_run_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'erp_run_lease_lost') WHERE NOT EXISTS (
        SELECT 1 FROM erp_run_log WHERE agent_run_id = NEW.agent_run_id
            AND lease_token = NEW.lease_token AND status = 'running');
    UPDATE erp_run_log SET steps = NEW.step, input_tokens = input_tokens + NEW.input_tokens,
        output_tokens = output_tokens + NEW.output_tokens, updated_at = NEW.at,
        status = CASE WHEN NEW.result IS NULL THEN status ELSE 'done' END,
        result = COALESCE(NEW.result, result)
        WHERE agent_run_id = NEW.agent_run_id;
    UPDATE erp_run_turns SET outcome = NEW.prior_outcome, done_at = NEW.at
        WHERE NEW.prior_step IS NOT NULL AND agent_run_id = NEW.agent_run_id
            AND step = NEW.prior_step;
    INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens,
        asked_at)
        VALUES (NEW.agent_run_id, NEW.step, NEW.action, NEW.input_tokens,
            NEW.output_tokens, NEW.at);
END;
