-- The audit log moves to a file of its own (`<database file>-audit`, with its own writer
-- connection, so that audit rows never wait for a draft's write transaction). Its rows
-- were copied there before this migration runs; the main file keeps the key rows, which
-- now name the audit row of the call that created their document, so a draft committed
-- just before a crash is reconciled into its audit row at the next start.
ALTER TABLE erp_idempotency_keys ADD COLUMN audit_id INTEGER;
DROP TABLE IF EXISTS main.erp_audit_log;
