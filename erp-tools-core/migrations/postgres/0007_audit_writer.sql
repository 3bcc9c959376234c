-- The audit row of the call that created a key's document (`erp_audit_log.id`), written
-- with the document. On PostgreSQL the row is finished in the same transaction; the column
-- is there so both backends can tell which call a document came from.
ALTER TABLE erp_idempotency_keys ADD COLUMN audit_id BIGINT;
