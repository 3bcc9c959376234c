-- A document's id when the system holding it names it with a string: see
-- migrations/sqlite/0016_document_text_id.sql.
ALTER TABLE erp_audit_log ADD COLUMN document_text_id TEXT;
