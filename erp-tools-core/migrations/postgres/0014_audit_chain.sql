-- The interrupted-call pass finds the key row a call wrote itself by its audit row's id.
CREATE INDEX IF NOT EXISTS erp_idempotency_keys_audit ON erp_idempotency_keys (audit_id);

-- The audit log, partitioned by month of `at` (declarative range partitions
-- `erp_audit_log_pYYYY_MM`, created ahead by every server; rows of a month without one
-- land in `erp_audit_log_default`), with the hash chain's columns (`store/chain.rs`):
-- one chain per audit writer and month (`chain_id`, `<replica>/<YYYY-MM>`), its rows
-- numbered from 1 (`chain_seq`), each hashed with the hash of the one before it
-- (`chain_hash`, SHA-256, hex). A row joins its chain when it is final; an `attempt` row
-- has none yet. `at` compares bytewise (COLLATE "C"): RFC 3339 text in time order.
-- The rows of the table before this migration are copied into the partitions.
ALTER TABLE erp_audit_log RENAME TO erp_audit_log_unpartitioned;
CREATE SEQUENCE erp_audit_log_ids;
SELECT setval('erp_audit_log_ids', COALESCE((SELECT MAX(id) FROM erp_audit_log_unpartitioned), 0) + 1, false);
CREATE TABLE erp_audit_log (
    id               BIGINT  NOT NULL DEFAULT nextval('erp_audit_log_ids'),
    at               TEXT    COLLATE "C" NOT NULL,
    finished_at      TEXT,
    source           TEXT    NOT NULL,
    agent_run_id     TEXT    NOT NULL,
    tool_call_id     TEXT,
    tool_name        TEXT,
    user_id          TEXT    NOT NULL,
    branch_id        BIGINT,
    branch_code      TEXT,
    arguments        TEXT,
    outcome          TEXT    NOT NULL,
    message          TEXT,
    document_type    TEXT,
    document_id      BIGINT,
    document_number  TEXT,
    model            TEXT,
    prompt_version   TEXT,
    step             BIGINT,
    action_signature TEXT,
    replica_id       TEXT,
    erp_outcome      TEXT,
    erp_error        TEXT,
    chain_id         TEXT,
    chain_seq        BIGINT,
    chain_hash       TEXT,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE erp_audit_log_ids OWNED BY erp_audit_log.id;
CREATE TABLE erp_audit_log_default PARTITION OF erp_audit_log DEFAULT;
DO $$
DECLARE m date;
BEGIN
    FOR m IN
        SELECT DISTINCT to_date(substr(at, 1, 7) || '-01', 'YYYY-MM-DD') FROM erp_audit_log_unpartitioned
        UNION SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date
        UNION SELECT (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month')::date
    LOOP
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I PARTITION OF erp_audit_log FOR VALUES FROM (%L) TO (%L)',
            'erp_audit_log_p' || to_char(m, 'YYYY_MM'),
            to_char(m, 'YYYY-MM'),
            to_char(m + interval '1 month', 'YYYY-MM'));
    END LOOP;
END $$;
INSERT INTO erp_audit_log (id, at, finished_at, source, agent_run_id, tool_call_id, tool_name,
    user_id, branch_id, branch_code, arguments, outcome, message, document_type, document_id,
    document_number, model, prompt_version, step, action_signature, replica_id, erp_outcome,
    erp_error)
SELECT id, at, finished_at, source, agent_run_id, tool_call_id, tool_name, user_id, branch_id,
    branch_code, arguments, outcome, message, document_type, document_id, document_number, model,
    prompt_version, step, action_signature, replica_id, erp_outcome, erp_error
FROM erp_audit_log_unpartitioned;
DROP TABLE erp_audit_log_unpartitioned;
CREATE INDEX erp_audit_log_run ON erp_audit_log (agent_run_id, id);
CREATE INDEX erp_audit_log_at ON erp_audit_log (at);
CREATE INDEX erp_audit_log_open ON erp_audit_log (outcome, replica_id);
CREATE INDEX erp_audit_log_chain ON erp_audit_log (chain_id, chain_seq);
CREATE INDEX erp_audit_log_unsealed ON erp_audit_log (id) WHERE chain_seq IS NULL;

-- Rows written before the chain existed (ids up to `last_unchained_id`) are outside it.
CREATE TABLE IF NOT EXISTS erp_audit_chain_origin (
    last_unchained_id BIGINT NOT NULL
);
INSERT INTO erp_audit_chain_origin (last_unchained_id)
SELECT COALESCE(MAX(id), 0) FROM erp_audit_log
WHERE NOT EXISTS (SELECT 1 FROM erp_audit_chain_origin);

-- Months of the audit log archived (`Database::archive_audit_log`): exported to `file`
-- (JSON lines) with their chain heads (`heads`, JSON), then detached (PostgreSQL: the
-- partition becomes the table `erp_audit_archived_YYYY_MM`) or deleted (SQLite).
CREATE TABLE IF NOT EXISTS erp_audit_archives (
    month       TEXT   PRIMARY KEY,
    file        TEXT   NOT NULL,
    rows        BIGINT NOT NULL,
    heads       TEXT   NOT NULL,
    archived_at TEXT   NOT NULL
);
