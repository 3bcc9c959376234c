-- The tool surface each audit row was written under and the one each run first saw: the
-- fingerprint of the registry's lock (`sha256:...`, `ToolRegistry::fingerprint`). NULL on
-- rows and runs written before it was kept.
ALTER TABLE erp_audit_log ADD COLUMN IF NOT EXISTS surface TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN IF NOT EXISTS surface TEXT;
