-- What another system answered a remote draft's request: `erp_outcome` (created, found
-- by marker, refused <status>, unknown outcome ...) and `erp_error` (the system's own
-- text, stored as data).
ALTER TABLE erp_audit_log ADD COLUMN erp_outcome TEXT;
ALTER TABLE erp_audit_log ADD COLUMN erp_error TEXT;
