-- Signed-in reviewers of the review console, shared by every replica of this database:
-- a reviewer signed in through one replica is signed in on all, and signing out (or a
-- session's expiry) ends it on all. The cookie's value is never stored, only its SHA-256
-- (`id_hash`), so a copy of this table cannot be replayed as a cookie.
CREATE TABLE IF NOT EXISTS erp_review_sessions (
    id_hash    TEXT   PRIMARY KEY,
    -- The reviewer's principal (JSON), as resolved when they signed in.
    principal  TEXT   NOT NULL,
    csrf       TEXT   NOT NULL,
    -- The token's expiry, seconds since the Unix epoch.
    expires_at BIGINT NOT NULL,
    -- A one-time message for the reviewer's next page (the result of a decision).
    notice     TEXT
);
CREATE INDEX IF NOT EXISTS erp_review_sessions_expiry ON erp_review_sessions (expires_at);
