-- The tool surface a run first saw: the fingerprint of the registry's lock
-- (`sha256:...`, `ToolRegistry::fingerprint`) when the run was claimed. NULL on runs
-- claimed before it was kept. (The audit rows, in the audit file, carry it per call.)
ALTER TABLE erp_agent_runs ADD COLUMN surface TEXT;
