-- A checkpoint appends: the outcome of the previous turn's action is stored in the new
-- turn's row (`prior_outcome`) instead of updating the previous row, and the run's row is
-- not updated at each step (the lease check locks it `FOR SHARE`). A turn's outcome is
-- read as its own `outcome` (rows written before this migration) or the next turn's
-- `prior_outcome`. A run's steps, tokens and last write are read from its turns
-- (`store/run_log.rs`); its row's `steps`, `input_tokens` and `output_tokens` are no
-- longer kept up to date.
ALTER TABLE erp_run_turns ADD COLUMN IF NOT EXISTS prior_outcome TEXT;
