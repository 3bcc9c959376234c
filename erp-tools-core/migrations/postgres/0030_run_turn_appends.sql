-- A checkpoint appends: the outcome of the previous turn's action is stored in the new
-- turn's row (`prior_outcome`) instead of updating the previous row, so a step writes one
-- row of `erp_run_turns` and touches no older page. A turn's outcome is read as its own
-- `outcome` (rows written before this migration) or the next turn's `prior_outcome`.
ALTER TABLE erp_run_turns ADD COLUMN IF NOT EXISTS prior_outcome TEXT;
