-- The `requestState`s of questions (2026-07-28 `input_required` results) already
-- answered, shared by every replica of this database: a state is accepted once, whichever
-- replica the repeated call reaches. Only the state's random nonce is kept, until the
-- state would have expired anyway.
CREATE TABLE IF NOT EXISTS erp_used_request_states (
    nonce      TEXT   PRIMARY KEY,
    -- When the state expires, seconds since the Unix epoch; the row is deleted after.
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS erp_used_request_states_expiry ON erp_used_request_states (expires_at);
