-- Remote drafts (documents written in another system over its API): a key is claimed
-- pending before anything is sent and settled with the document afterwards.
-- `remote_state`: claimed | sending | unknown | found, NULL once settled (and for local
-- drafts); `remote_marker`: the marker the document carries; `remote_owner` and
-- `remote_lease_until` (UTC RFC 3339 text): the call that holds the key, and until when.
ALTER TABLE erp_idempotency_keys ADD COLUMN remote_state TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN remote_marker TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN remote_owner TEXT;
ALTER TABLE erp_idempotency_keys ADD COLUMN remote_lease_until TEXT;
CREATE INDEX IF NOT EXISTS erp_idempotency_keys_remote ON erp_idempotency_keys (remote_state);
