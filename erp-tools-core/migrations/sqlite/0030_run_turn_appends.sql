-- A checkpoint appends: the outcome of the previous turn's action is stored in the new
-- turn's row (`prior_outcome`) instead of updating the previous row, so a step writes one
-- row of `erp_run_turns` and touches no older page. A turn's outcome is read as its own
-- `outcome` (rows written before this migration) or the next turn's `prior_outcome`.
-- A previous step that is not the one just before (not written by the loop) is still
-- updated in place.
ALTER TABLE erp_run_turns ADD COLUMN prior_outcome TEXT;
DROP TRIGGER IF EXISTS erp_run_checkpoint;
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
        WHERE NEW.prior_step IS NOT NULL AND NEW.prior_step <> NEW.step - 1
            AND agent_run_id = NEW.agent_run_id AND step = NEW.prior_step;
    INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens,
        asked_at, prior_outcome)
        VALUES (NEW.agent_run_id, NEW.step, NEW.action, NEW.input_tokens,
            NEW.output_tokens, NEW.at,
            CASE WHEN NEW.prior_step = NEW.step - 1 THEN NEW.prior_outcome END);
END;
