-- One lease row per serving `Database` (a replica): written when it opens, its
-- `heartbeat_at` renewed in the background, deleted when it closes. A replica whose
-- heartbeat is older than its lease is dead: any live replica closes its `attempt` audit
-- rows as `interrupted`. Timestamps are UTC RFC 3339 text with microseconds.
CREATE TABLE IF NOT EXISTS erp_replicas (
    id           TEXT   PRIMARY KEY,
    started_at   TEXT   NOT NULL,
    heartbeat_at TEXT   NOT NULL,
    lease_ms     BIGINT NOT NULL
);
-- The replica that ran a tool call (its lease row's id); NULL on rows written before
-- leases, which the recovery pass closes after its grace period.
ALTER TABLE erp_audit_log ADD COLUMN IF NOT EXISTS replica_id TEXT;
CREATE INDEX IF NOT EXISTS erp_audit_log_open ON erp_audit_log (outcome, replica_id);
-- The per-caller rate limit shared by every replica of this database: one GCRA bucket
-- per principal, its theoretical arrival time (`tat`, seconds since the epoch, on the
-- database's clock), taken and advanced by one statement per call.
CREATE TABLE IF NOT EXISTS erp_rate_buckets (
    key TEXT             PRIMARY KEY,
    tat DOUBLE PRECISION NOT NULL
);
