-- The text a draft's result was rendered as for the model (ModelText), so a replay reads
-- the same as the original call.
ALTER TABLE erp_idempotency_keys ADD COLUMN response_text TEXT;
