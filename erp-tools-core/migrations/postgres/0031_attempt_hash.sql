-- An `attempt` row's hash, written with it (`store/chain_outside.rs`): SHA-256 over its
-- chained columns as inserted, so an edit of a call still running is seen before the
-- row joins its chain.
ALTER TABLE erp_audit_log ADD COLUMN attempt_hash TEXT;
