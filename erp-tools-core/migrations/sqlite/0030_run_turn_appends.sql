-- A checkpoint appends: the outcome of the previous turn's action is stored in the new
-- turn's row (`prior_outcome`) instead of updating the previous row, and the run's row is
-- not updated at each step. A step writes one row of `erp_run_turns` and reads the run's
-- row (the lease check). A turn's outcome is read as its own `outcome` (rows written
-- before this migration) or the next turn's `prior_outcome`; a previous step that is not
-- the one just before (not written by the loop) is still updated in place. A run's steps,
-- tokens and last write are read from its turns (`store/run_log.rs`); its row's
-- `steps`, `input_tokens` and `output_tokens` are no longer kept up to date. The final
-- answer's checkpoint still ends the run (`done`, with its result).
ALTER TABLE erp_run_turns ADD COLUMN prior_outcome TEXT;
DROP TRIGGER IF EXISTS erp_run_checkpoint;
CREATE TRIGGER erp_run_checkpoint INSTEAD OF INSERT ON erp_run_checkpoints
BEGIN
    SELECT RAISE(ABORT, 'erp_run_lease_lost') WHERE NOT EXISTS (
        SELECT 1 FROM erp_run_log WHERE agent_run_id = NEW.agent_run_id
            AND lease_token = NEW.lease_token AND status = 'running');
    UPDATE erp_run_log SET status = 'done', result = NEW.result, updated_at = NEW.at
        WHERE NEW.result IS NOT NULL AND agent_run_id = NEW.agent_run_id;
    UPDATE erp_run_turns SET outcome = NEW.prior_outcome, done_at = NEW.at
        WHERE NEW.prior_step IS NOT NULL AND NEW.prior_step <> NEW.step - 1
            AND agent_run_id = NEW.agent_run_id AND step = NEW.prior_step;
    INSERT INTO erp_run_turns (agent_run_id, step, action, input_tokens, output_tokens,
        asked_at, prior_outcome)
        VALUES (NEW.agent_run_id, NEW.step, NEW.action, NEW.input_tokens,
            NEW.output_tokens, NEW.at,
            CASE WHEN NEW.prior_step = NEW.step - 1 THEN NEW.prior_outcome END);
END;
