-- A task whose replica died (killed, lost) or drained is taken over by a live replica,
-- which runs its call again from the stored arguments as the principal who started it.
-- `principal`: that principal as the runtime knew it (JSON: user, roles, branch, scopes,
-- run, model, prompt version), so another replica can act as them. `taken_over_by` and
-- `taken_over_at`: the latest take-over (which replica, when); `takeovers`: how many.
ALTER TABLE erp_tasks ADD COLUMN principal TEXT;
ALTER TABLE erp_tasks ADD COLUMN taken_over_by TEXT;
ALTER TABLE erp_tasks ADD COLUMN taken_over_at TEXT;
ALTER TABLE erp_tasks ADD COLUMN takeovers BIGINT NOT NULL DEFAULT 0;
