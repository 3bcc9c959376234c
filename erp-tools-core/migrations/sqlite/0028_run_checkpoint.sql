-- A logged run's checkpoint as one statement: `INSERT INTO erp_run_checkpoints` stores a
-- model turn's answer, the outcome of the previous turn's action and the run's counters
-- at once, the way PostgreSQL does with data-modifying `WITH` parts. The lease is checked
-- first: a driver that lost its run gets the error `erp_run_lease_lost` and nothing of
-- the statement is written.
CREATE VIEW IF NOT EXISTS erp_run_checkpoints AS
    SELECT NULL AS agent_run_id, NULL AS lease_token, NULL AS step, NULL AS action,
        NULL AS input_tokens, NULL AS output_tokens, NULL AS prior_step,
        NULL AS prior_outcome, NULL AS at
    WHERE 0;
CREATE TRIGGER IF NOT EXISTS erp_run_checkpoint INSTEAD OF INSERT ON erp_run_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'erp_run_lease_lost') WHERE NOT EXISTS (
        SELECT 1 FROM erp_run_log WHERE agent_run_id = NEW.agent_run_id
            AND lease_token = NEW.lease_token AND status = 'running');
    UPDATE erp_run_log SET steps = NEW.step, input_tokens = input_tokens + NEW.input_tokens,
        output_tokens = output_tokens + NEW.output_tokens, updated_at = NEW.at
        WHERE agent_run_id = NEW.agent_run_id;
    UPDATE erp_run_turns SET outcome = NEW.prior_outcome, done_at = NEW.at
        WHERE NEW.prior_step IS NOT NULL AND agent_run_id = NEW.agent_run_id
            AND step = NEW.prior_step;
    INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens,
        asked_at)
        VALUES (NEW.agent_run_id, NEW.step, NEW.action, NEW.input_tokens,
            NEW.output_tokens, NEW.at);
END;
