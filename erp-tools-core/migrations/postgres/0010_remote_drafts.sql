-- Remote drafts (documents written in another system over its API): a key is claimed
-- pending before anything is sent and settled with the document afterwards.
-- `remote_state`: claimed | sending | unknown | found, NULL once settled (and for local
-- drafts); `remote_marker`: the marker the document carries; `remote_owner` and
-- `remote_lease_until` (UTC RFC 3339 text): the call that holds the key, and until when.
ALTER TABLE erp_idempotency_keys ADD COLUMN IF NOT EXISTS remote_state TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN IF NOT EXISTS remote_marker TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN IF NOT EXISTS remote_owner TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN IF NOT EXISTS remote_lease_until TEXT;
CREATE INDEX IF NOT EXISTS erp_idempotency_keys_remote ON erp_idempotency_keys (remote_state);
-- What the other system answered: `erp_outcome` (created, found by marker, refused
-- <status>, unknown outcome ...) and `erp_error` (its own text, stored as data).
ALTER TABLE erp_audit_log ADD COLUMN IF NOT EXISTS erp_outcome TEXT;
ALTER TABLE erp_audit_log ADD COLUMN IF NOT EXISTS erp_error TEXT;
