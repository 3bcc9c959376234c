-- A run's story for the people reviewing it: see migrations/sqlite/0017_run_story.sql
-- (the run's task and ending) and migrations/sqlite/audit/0008_call_key.sql (each audit
-- row's call key and a read call's result text, both in the hash chain).
ALTER TABLE erp_agent_runs ADD COLUMN task TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN ended_status TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN answer TEXT;
ALTER TABLE erp_agent_runs ADD COLUMN ended_at TEXT;
ALTER TABLE erp_audit_log ADD COLUMN call_key TEXT;
ALTER TABLE erp_audit_log ADD COLUMN result_text TEXT;
