-- `call_key`: the framework's key of the call a row is about, the same on every row of
-- one call and different for every other call (a JSON-RPC id restarts at 1 in every MCP
-- session); the review console groups a run's trail by it. `result_text`: what a
-- successful read call answered, as the model read it (cut at 8 KiB). Both are part of
-- the hash chain.
ALTER TABLE erp_audit_log ADD COLUMN call_key TEXT;
ALTER TABLE erp_audit_log ADD COLUMN result_text TEXT;
