-- The interrupted-call pass finds the key row a call wrote itself by its audit row's id.
CREATE INDEX IF NOT EXISTS erp_idempotency_keys_audit ON erp_idempotency_keys (audit_id);
