-- The replica that ran a tool call (its lease row's id in the main file's
-- `erp_replicas`); NULL on rows written before leases, which the recovery pass closes
-- after its grace period.
ALTER TABLE erp_audit_log ADD COLUMN replica_id TEXT;
CREATE INDEX IF NOT EXISTS erp_audit_log_open ON erp_audit_log (outcome, replica_id);
