-- The size of each tool call's result as the client received it, in estimated tokens:
-- see migrations/postgres/0018_result_tokens.sql.
ALTER TABLE erp_audit_log ADD COLUMN result_tokens BIGINT;
