-- The tool surface each row was written under: the fingerprint of the registry's lock
-- (`sha256:...`, `ToolRegistry::fingerprint`). NULL on rows written before it was kept.
ALTER TABLE erp_audit_log ADD COLUMN surface TEXT;
