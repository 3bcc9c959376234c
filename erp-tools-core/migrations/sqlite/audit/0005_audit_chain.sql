-- The audit log's hash chain (`store/chain.rs`): one chain per audit writer and month (`chain_id`,
-- `<replica>/<YYYY-MM>`), its rows numbered from 1 (`chain_seq`), each hashed with the
-- hash of the one before it (`chain_hash`, SHA-256, hex). A row joins its writer's chain
-- when it is final; an `attempt` row has none yet.
ALTER TABLE erp_audit_log ADD COLUMN chain_id TEXT;
ALTER TABLE erp_audit_log ADD COLUMN chain_seq INTEGER;
ALTER TABLE erp_audit_log ADD COLUMN chain_hash TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS erp_audit_log_chain ON erp_audit_log (chain_id, chain_seq);
CREATE INDEX IF NOT EXISTS erp_audit_log_unsealed ON erp_audit_log (id) WHERE chain_seq IS NULL;
-- Rows written before the chain existed (ids up to `last_unchained_id`) are outside it.
CREATE TABLE IF NOT EXISTS erp_audit_chain_origin (
    last_unchained_id INTEGER NOT NULL
);
INSERT INTO erp_audit_chain_origin (last_unchained_id)
SELECT COALESCE(MAX(id), 0) FROM erp_audit_log
WHERE NOT EXISTS (SELECT 1 FROM erp_audit_chain_origin);
-- Months of the audit log archived (`Database::archive_audit_log`): exported to `file`
-- (JSON lines) with their chain heads (`heads`, JSON), then deleted in bounded batches.
CREATE TABLE IF NOT EXISTS erp_audit_archives (
    month       TEXT    PRIMARY KEY,
    file        TEXT    NOT NULL,
    rows        INTEGER NOT NULL,
    heads       TEXT    NOT NULL,
    archived_at TEXT    NOT NULL
);
