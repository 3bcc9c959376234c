-- The priced preview of a pending action (SPEC V3): what its draft handler produced in a
-- transaction that was rolled back (or a remote draft's preview hook returned), as JSON,
-- and the digest the approval binds to. A different document at execution creates
-- nothing and pauses the run again with the new preview. NULL on rows stored before
-- previews, and for tools that have none.
ALTER TABLE erp_approvals ADD COLUMN IF NOT EXISTS preview TEXT;
ALTER TABLE erp_approvals ADD COLUMN IF NOT EXISTS preview_digest TEXT;
