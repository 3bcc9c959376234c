-- Agent-loop events carry the step (model turn) and the action signature (tool name plus
-- canonical arguments) that approvals and repeat detection bind to.
ALTER TABLE erp_audit_log ADD COLUMN step INTEGER;
ALTER TABLE erp_audit_log ADD COLUMN action_signature TEXT;
