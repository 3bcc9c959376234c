-- A document's id when the system holding it names it with a string (ERPNext's
-- `PUR-ORD-2026-00042`, a GUID): `document_id` holds numeric ids, `document_text_id`
-- string ids, exactly as the system gave them; one of the two is set for a document.
ALTER TABLE erp_idempotency_keys ADD COLUMN document_text_id TEXT;
ALTER TABLE erp_audit_log ADD COLUMN document_text_id TEXT;
