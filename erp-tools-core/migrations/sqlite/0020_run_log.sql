-- A durable agent run: one row per run, one row per model turn. A turn's answer (its
-- action and token usage) is written before its action runs; the action's outcome (the
-- messages it fed back to the model, the repeat counts, the running time) is written
-- into the same row once the action ended. The run is driven by one replica at a time
-- (`replica_id`, alive while its `erp_replicas` lease is), fenced by `lease_token`: a
-- write of a driver that lost the run changes nothing. Times are UTC RFC 3339 text.
CREATE TABLE IF NOT EXISTS erp_run_log (
    agent_run_id  TEXT    PRIMARY KEY,
    user_id       TEXT    NOT NULL,
    branch_id     INTEGER NOT NULL,
    branch_code   TEXT    NOT NULL,
    opening       TEXT    NOT NULL,
    grants        TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    result        TEXT,
    replica_id    TEXT,
    lease_token   TEXT,
    steps         INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    interrupted_at TEXT,
    resumed_by    TEXT,
    resumed_at    TEXT,
    resume_count  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS erp_run_log_status ON erp_run_log (status, replica_id);
CREATE TABLE IF NOT EXISTS erp_run_turns (
    agent_run_id  TEXT    NOT NULL,
    step          INTEGER NOT NULL,
    action        TEXT    NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    outcome       TEXT,
    asked_at      TEXT    NOT NULL,
    done_at       TEXT,
    PRIMARY KEY (agent_run_id, step)
);
-- Notifications to deliver (an approval waits, an approval expired unanswered), written
-- in the same transaction as what they announce and posted by a delivery worker:
-- `pending` until delivered, retried with backoff, `dead` after the last attempt
-- (resendable). `delivery_id` is what a receiver deduplicates on.
CREATE TABLE IF NOT EXISTS erp_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id     TEXT    NOT NULL UNIQUE,
    kind            TEXT    NOT NULL,
    branch_id       INTEGER NOT NULL,
    payload         TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT    NOT NULL,
    claimed_until   TEXT,
    last_error      TEXT,
    created_at      TEXT    NOT NULL,
    delivered_at    TEXT
);
CREATE INDEX IF NOT EXISTS erp_outbox_due ON erp_outbox (status, next_attempt_at);
