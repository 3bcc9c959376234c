-- One lease row per serving `Database` (a replica): written when it opens, its
-- `heartbeat_at` renewed in the background, deleted when it closes. A replica whose
-- heartbeat is older than its lease is dead: any live replica closes its `attempt` audit
-- rows as `interrupted`. Timestamps are UTC RFC 3339 text with microseconds.
CREATE TABLE IF NOT EXISTS erp_replicas (
    id           TEXT    PRIMARY KEY,
    started_at   TEXT    NOT NULL,
    heartbeat_at TEXT    NOT NULL,
    lease_ms     INTEGER NOT NULL
);
