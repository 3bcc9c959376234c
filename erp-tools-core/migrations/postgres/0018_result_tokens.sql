-- The size of each tool call's result as the client received it, in estimated tokens
-- (`ResultBudget`: its text plus its structured content). NULL on rows that are not a
-- finished call's, and on rows written before it was kept.
ALTER TABLE erp_audit_log ADD COLUMN IF NOT EXISTS result_tokens BIGINT;
